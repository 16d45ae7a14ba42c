"""SWE-bench predictions: ``{instance_id, model_name_or_path, model_patch}`` per instance.

The same records come as a JSON list, as JSONL (SWE-agent 0.x ``all_preds.jsonl``), or as a
JSON object keyed by instance id (SWE-agent 1.x ``preds.json``, whose values may omit
``instance_id``). A prediction has no steps; it imports the final patch only.

``instance_id`` and the ``model_patch`` field are required. ``model_patch`` may be null or
empty: that is how a run that submitted nothing is recorded, and it still counts as a
prediction. Other fields are kept in ``metadata``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from .records import InvalidRecord, ParsedTrajectory, RecordError, content_sha256, non_empty_str

SOURCE_FORMAT = "predictions"
_PREDICTION_FIELDS = {"instance_id", "model_name_or_path", "model_patch"}


def _looks_like_prediction(value: dict[str, Any]) -> bool:
    return bool(_PREDICTION_FIELDS & value.keys())


def _prediction(
    record: dict[str, Any], *, line: int | None, key: str | None = None
) -> ParsedTrajectory:
    if key is not None and "instance_id" not in record:
        # Hash the prediction as it would read in a list, so that the same prediction
        # exported either way is recognised as the same import.
        record = {**record, "instance_id": key}
    instance_id = record.get("instance_id")
    if instance_id is None:
        raise InvalidRecord("missing required field 'instance_id'")
    if not non_empty_str(instance_id):
        raise InvalidRecord("'instance_id' must be a non-empty string")
    if "model_patch" not in record:
        raise InvalidRecord("missing required field 'model_patch'")
    patch = record["model_patch"]
    if patch is not None and not isinstance(patch, str):
        raise InvalidRecord(f"'model_patch' must be a string or null, not {type(patch).__name__}")
    model = record.get("model_name_or_path")
    return ParsedTrajectory(
        source_format=SOURCE_FORMAT,
        instance_id=instance_id,
        model=non_empty_str(model),
        scaffold=None,
        final_patch=patch,
        exit_status=None,
        cost_usd=None,
        tokens_in=None,
        tokens_out=None,
        steps=[],
        metadata={k: v for k, v in record.items() if k not in _PREDICTION_FIELDS},
        line=line,
        content_sha256=content_sha256(SOURCE_FORMAT, record),
    )


def parse_value(
    value: Any, *, path: str | os.PathLike[str], line: int | None = None
) -> Iterator[ParsedTrajectory | RecordError]:
    """One prediction, or every prediction of an object keyed by instance id."""
    if not isinstance(value, dict):
        yield RecordError(line, f"expected a prediction object, got a {type(value).__name__}")
        return
    is_keyed_by_id = all(isinstance(entry, dict) for entry in value.values())
    if not value or _looks_like_prediction(value) or not is_keyed_by_id:
        try:
            yield _prediction(value, line=line)
        except InvalidRecord as exc:
            yield RecordError(line, str(exc))
        return
    for key, entry in value.items():
        try:
            yield _prediction(entry, line=line, key=key)
        except InvalidRecord as exc:
            yield RecordError(line, f"prediction {key!r}: {exc}")
