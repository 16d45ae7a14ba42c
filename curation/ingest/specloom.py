"""Specloom's own trajectory format; the contract is in ``formats``' module docstring.

Being our own format, it is checked strictly: a field of the wrong type is an error naming the
field, rather than a value silently dropped.
"""

from __future__ import annotations

import os
from typing import Any

from .records import (
    KINDS,
    ROLES,
    InvalidRecord,
    ParsedTrajectory,
    StepCollector,
    content_sha256,
)

SOURCE_FORMAT = "specloom"
_RECORD_FIELDS = {
    "format",
    "version",
    "instance_id",
    "task",
    "model",
    "scaffold",
    "final_patch",
    "exit_status",
    "cost_usd",
    "tokens_in",
    "tokens_out",
    "metadata",
    "steps",
}
_STEP_TEXT_FIELDS = ("action", "observation", "thought", "tool", "timestamp")
_STEP_FIELDS = {"role", "kind", "content", "tokens", "extra", *_STEP_TEXT_FIELDS}


def _optional_str(source: dict[str, Any], key: str, where: str = "") -> str | None:
    value = source.get(key)
    if value is not None and not isinstance(value, str):
        raise InvalidRecord(f"'{where}{key}' must be a string or null, not {type(value).__name__}")
    return value


def _optional_int(source: dict[str, Any], key: str, where: str = "") -> int | None:
    value = source.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidRecord(f"'{where}{key}' must be a non-negative integer or null")
    return value


def _optional_number(source: dict[str, Any], key: str) -> float | None:
    value = source.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InvalidRecord(f"'{key}' must be a non-negative number or null")
    return float(value)


def _add_step(collector: StepCollector, step: Any, position: int) -> None:
    # Called once per step of every record: the error messages (and the field names they
    # quote) are only built when a step is actually wrong.
    if not isinstance(step, dict):
        raise InvalidRecord(f"steps[{position}] must be an object")
    role = step.get("role")
    kind = step.get("kind")
    if role not in ROLES or kind not in KINDS:
        _step_error(step, position)
    get = step.get
    content, action, observation = get("content"), get("action"), get("observation")
    thought, tool, timestamp = get("thought"), get("tool"), get("timestamp")
    tokens, extra = get("tokens"), get("extra") or {}
    for value in (content, action, observation, thought, tool, timestamp):
        if value is not None and type(value) is not str:
            _step_error(step, position)
    if tokens is not None and (type(tokens) is not int or tokens < 0):
        _step_error(step, position)
    if type(extra) is not dict:
        _step_error(step, position)
    if len(step) > 2 and not step.keys() <= _STEP_FIELDS:
        unknown = {key: value for key, value in step.items() if key not in _STEP_FIELDS}
        extra = {**extra, **unknown}
    collector.add(
        role,
        kind,
        content,
        action=action,
        observation=observation,
        thought=thought,
        tool=tool,
        timestamp=timestamp,
        tokens=tokens,
        extra=extra,
    )


def _step_error(step: dict[str, Any], position: int) -> None:
    """Raise the InvalidRecord that names what is wrong with the step."""
    where = f"steps[{position}]."
    for key, allowed in (("role", ROLES), ("kind", KINDS)):
        if key not in step:
            raise InvalidRecord(f"missing required field '{where}{key}'")
        if step[key] not in allowed:
            raise InvalidRecord(
                f"'{where}{key}' must be one of {', '.join(allowed)} (got {step[key]!r})"
            )
    _optional_str(step, "content", where)
    for key in _STEP_TEXT_FIELDS:
        _optional_str(step, key, where)
    _optional_int(step, "tokens", where)
    if not isinstance(step.get("extra") or {}, dict):
        raise InvalidRecord(f"'{where}extra' must be an object")
    raise InvalidRecord(f"steps[{position}] is not valid")


def parse_record(
    record: Any, *, path: str | os.PathLike[str], line: int | None = None
) -> ParsedTrajectory:
    if not isinstance(record, dict):
        raise InvalidRecord(f"expected a JSON object, got a {type(record).__name__}")
    marker = record.get("format", SOURCE_FORMAT)
    if marker != SOURCE_FORMAT:
        raise InvalidRecord(f"'format' is {marker!r}; a Specloom record says 'specloom'")
    instance_id = _optional_str(record, "instance_id")
    task = _optional_str(record, "task")
    if not instance_id and not task:
        raise InvalidRecord("missing required field 'instance_id' (or 'task')")
    steps = record.get("steps")
    if steps is None:
        raise InvalidRecord("missing required field 'steps'")
    if not isinstance(steps, list):
        raise InvalidRecord(f"'steps' must be a list, not {type(steps).__name__}")
    collector = StepCollector()
    for position, step in enumerate(steps):
        _add_step(collector, step, position)

    metadata = record.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise InvalidRecord("'metadata' must be an object")
    metadata = dict(metadata)
    if task and instance_id:
        metadata["task"] = task
    metadata.update((key, value) for key, value in record.items() if key not in _RECORD_FIELDS)

    return ParsedTrajectory(
        source_format=SOURCE_FORMAT,
        instance_id=instance_id or task,
        model=_optional_str(record, "model") or None,
        scaffold=_optional_str(record, "scaffold") or None,
        final_patch=_optional_str(record, "final_patch"),
        exit_status=_optional_str(record, "exit_status"),
        cost_usd=_optional_number(record, "cost_usd"),
        tokens_in=_optional_int(record, "tokens_in"),
        tokens_out=_optional_int(record, "tokens_out"),
        steps=collector.steps,
        metadata=metadata,
        line=line,
        content_sha256=content_sha256(SOURCE_FORMAT, record),
    )
