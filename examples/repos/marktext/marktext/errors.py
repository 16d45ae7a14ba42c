"""Exceptions raised by marktext."""
from __future__ import annotations

from typing import Optional


class MarkupError(Exception):
    """Base class; ``position`` is a character offset (inline) or a line number (blocks)."""

    def __init__(self, message: str, position: Optional[int] = None) -> None:
        self.message = message
        self.position = position
        super().__init__(message if position is None else f"{message} (at {position})")


class UnclosedMarkupError(MarkupError):
    """An opening delimiter without its closing partner (strict inline parsing only)."""


class BlockError(MarkupError):
    """A block that cannot be parsed, such as an unclosed code fence."""


class UnsafeURLError(MarkupError, ValueError):
    """A link target whose scheme is not allowed (``javascript:``, ``data:``...)."""
