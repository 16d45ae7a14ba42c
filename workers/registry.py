"""Job kinds and their handlers.

Apps register handlers for their kinds when they load, so the job machinery finds a handler by
kind without importing the apps that use it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JobKind:
    name: str
    handler: Callable[..., dict[str, Any] | None]
    queue: str
    max_attempts: int | None
    # Called with the job when it ends failed without its handler's say (the reaper gave up on
    # a lost worker): undo what a handler killed mid-way left half-made.
    on_abandoned: Callable[..., None] | None = None


_KINDS: dict[str, JobKind] = {}


class UnknownJobKind(LookupError):
    pass


def job_handler(
    name: str,
    *,
    queue: str = "default",
    max_attempts: int | None = None,
    on_abandoned: Callable[..., None] | None = None,
):
    """Register `handler(job, ctx) -> result dict | None` for jobs of kind `name`."""

    def register(handler):
        existing = _KINDS.get(name)
        if existing and existing.handler is not handler:
            raise ValueError(f"job kind {name!r} is already registered by {existing.handler!r}")
        _KINDS[name] = JobKind(
            name=name,
            handler=handler,
            queue=queue,
            max_attempts=max_attempts,
            on_abandoned=on_abandoned,
        )
        return handler

    return register


def get_job_kind(name: str) -> JobKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise UnknownJobKind(f"no handler is registered for job kind {name!r}") from None


def registered_kinds() -> list[str]:
    return sorted(_KINDS)
