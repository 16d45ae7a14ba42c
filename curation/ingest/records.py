"""The parsed shapes every importer produces, and the small helpers they share.

Nothing here knows about a particular file format; the format modules build these objects and
the Django service turns them into rows.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

ROLES = ("system", "user", "assistant", "tool")
KINDS = ("message", "action", "observation", "thought")


@dataclass(slots=True)
class ParsedStep:
    """One event of a trajectory: a message, an agent action, its observation or a thought.

    ``content`` is always a string (the step's text as it reads in a transcript). ``action``,
    ``observation`` and ``thought`` repeat the structured part of that text when the source has
    it; they reference the same string objects, so repeating them costs no memory.
    ``tokens`` is the number of tokens the model generated for this step (completion tokens),
    when the source records it; prompt tokens, if known, are in ``extra["prompt_tokens"]``.
    """

    index: int
    role: str
    kind: str
    content: str
    action: str | None = None
    observation: str | None = None
    thought: str | None = None
    tool: str | None = None
    timestamp: str | None = None
    tokens: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ParsedTrajectory:
    """One imported run of one model on one instance (or one prediction without steps).

    ``line`` locates the record in its file: the 1-based line number in a JSONL file, the
    0-based position of the item in a JSON list, or None when the file is the record.
    ``content_sha256`` hashes the record's canonical JSON (sorted keys, compact) together with
    its format, so importing the same record twice is recognisably the same import.
    """

    source_format: str
    instance_id: str | None
    model: str | None
    scaffold: str | None
    final_patch: str | None
    exit_status: str | None
    cost_usd: float | None
    tokens_in: int | None
    tokens_out: int | None
    steps: list[ParsedStep]
    metadata: dict[str, Any]
    line: int | None
    content_sha256: str


@dataclass(slots=True)
class RecordError:
    """A record (or a whole file) that could not be imported; parsing goes on after it."""

    line: int | None
    message: str

    def __str__(self) -> str:
        return self.message if self.line is None else f"line {self.line}: {self.message}"


class UnknownFormatError(ValueError):
    """The file's format could not be recognised from its first bytes."""


class InvalidRecord(Exception):
    """Raised inside a format module; the driver turns it into a RecordError."""


def content_sha256(source_format: str, record: Any) -> str:
    """Hash a parsed JSON record independently of key order and whitespace."""
    try:
        canonical = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        # orjson refuses integers beyond 64 bits; the standard library does not.
        canonical = json.dumps(
            record, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8", "surrogatepass")
    digest = hashlib.sha256(source_format.encode("ascii"))
    digest.update(b"\n")
    digest.update(canonical)
    return digest.hexdigest()


# --- tolerant accessors: real files disagree on shapes, and a wrong shape must not crash ---


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def as_float(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def as_text(value: Any) -> str | None:
    """A string, or the text parts of a chat content list (``[{"type": "text", ...}]``)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    if isinstance(value, int | float | bool):
        return str(value)
    return None


def first_text(*values: Any) -> str | None:
    """The first value that is non-empty text."""
    for value in values:
        text = as_text(value)
        if text:
            return text
    return None


def non_empty_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def small_fields(source: Mapping[str, Any], *, skip: Iterable[str] = (), limit: int = 500):
    """Scalar fields worth keeping in ``extra``: long strings and nested data stay out so
    that each step's extra stays small however large the source event is."""
    skipped = set(skip)
    kept: dict[str, Any] = {}
    for key, value in source.items():
        if key in skipped:
            continue
        is_scalar = value is None or isinstance(value, bool | int | float)
        if is_scalar or (isinstance(value, str) and len(value) <= limit):
            kept[key] = value
    return kept


class StepCollector:
    """Builds a trajectory's step list, numbering steps in the order they are added."""

    __slots__ = ("steps",)

    def __init__(self) -> None:
        self.steps: list[ParsedStep] = []

    def add(self, role: str, kind: str, content: str | None, **fields: Any) -> ParsedStep:
        step = ParsedStep(len(self.steps), role, kind, content or "", **fields)
        self.steps.append(step)
        return step
