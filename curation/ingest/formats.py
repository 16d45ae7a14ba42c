"""Importing coding-agent trajectories from the formats teams actually have on disk.

Public API::

    FORMATS = ("specloom", "swe-agent", "openhands", "openhands-eval",
               "openhands-resolver", "predictions")
    detect_format(path) -> str                      # or raises UnknownFormatError
    iter_records(path, fmt="auto") -> Iterator[ParsedTrajectory | RecordError]

``iter_records`` never raises for bad content: every problem is a ``RecordError`` (with the
line when there is one) and parsing goes on with the next record. Only an undetectable file
under ``fmt="auto"`` raises ``UnknownFormatError``, and a file that cannot be opened raises the
usual ``OSError``. JSONL files are streamed line by line; single documents (a ``.traj``, an
OpenHands event list, a JSON list or object of records) are parsed whole. Where a file leaves
the model unnamed (SWE-agent 0.x, for one), ``model`` is None and the caller supplies it.

The formats:

``swe-agent``
    A SWE-agent ``.traj`` file (one run); see ``curation.ingest.swe_agent``.
``openhands``
    An OpenHands event list, as saved or exported from a session; see ``...openhands``.
``openhands-eval``
    OpenHands evaluation ``output.jsonl``, one instance per line; see ``...openhands``.
``openhands-resolver``
    OpenHands resolver ``output.jsonl`` (``openhands.resolver``), one issue or pull request per
    line; see ``curation.ingest.openhands_resolver``.
``predictions``
    SWE-bench predictions (JSON list, JSONL, or object keyed by instance id); no steps; see
    ``curation.ingest.predictions``.
``specloom``
    Specloom's own format, defined here.

The ``specloom`` format
-----------------------

A file holds one record as a JSON object (compact or pretty-printed), a JSON list of records,
or JSONL with one record per line. A record is an object with these fields::

    format       "specloom"          optional; when present, detection needs nothing else
    version      1                   optional
    instance_id  string              the instance the run worked on  } at least one of the
    task         string              a Specloom task identifier       } two; instance_id wins
    model        string | null       the model's name; null lets the importer name it
    scaffold     string | null       the agent harness ("swe-agent", "openhands", ...)
    final_patch  string | null       the unified diff the run ended with
    exit_status  string | null       how the run ended ("submitted", "finished", ...)
    cost_usd     number | null       >= 0
    tokens_in    integer | null      >= 0, prompt tokens over the whole run
    tokens_out   integer | null      >= 0, completion tokens over the whole run
    metadata     object              optional; kept as is
    steps        array of steps      required (may be empty), in order

and each step is an object::

    role         "system" | "user" | "assistant" | "tool"                required
    kind         "message" | "action" | "observation" | "thought"        required
    content      string | null       the step's text as it reads in a transcript
    action       string | null       the command or tool call, for kind "action"
    observation  string | null       the tool's output, for kind "observation"
    thought      string | null       the model's reasoning for this step
    tool         string | null       the tool or command name
    timestamp    string | null       ISO 8601
    tokens       integer | null      completion tokens of the LLM call that made this step
    extra        object              optional; any other key of the step is added to it

Other top-level keys are kept in ``metadata``. A record without ``instance_id``/``task`` or
``steps``, a step with an unknown role or kind, or a field of the wrong type is a RecordError
naming the field.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from . import openhands, openhands_resolver, predictions, specloom, swe_agent
from .jsonio import iter_json_values, read_document
from .records import (
    InvalidRecord,
    ParsedStep,
    ParsedTrajectory,
    RecordError,
    UnknownFormatError,
)
from .sniff import detect_format

__all__ = [
    "FORMATS",
    "ParsedStep",
    "ParsedTrajectory",
    "RecordError",
    "UnknownFormatError",
    "detect_format",
    "iter_records",
]

FORMATS = (
    "specloom",
    "swe-agent",
    "openhands",
    "openhands-eval",
    "openhands-resolver",
    "predictions",
)

Outcome = ParsedTrajectory | RecordError
RecordParser = Callable[..., ParsedTrajectory]

# One file is one record.
_DOCUMENT_PARSERS: dict[str, RecordParser] = {
    "swe-agent": swe_agent.parse_document,
    "openhands": openhands.parse_event_list,
}
# One file holds many records: a JSON list, JSONL, or a single object.
_RECORD_PARSERS: dict[str, RecordParser] = {
    "specloom": specloom.parse_record,
    "openhands-eval": openhands.parse_eval_record,
    "openhands-resolver": openhands_resolver.parse_resolver_record,
}
# A malformed file can break a parser's assumptions in ways no check anticipated (a number
# where a list belongs, say). Those become RecordErrors too, so one bad record never stops an
# import; the message names the exception so the cause can still be found.
_STRUCTURE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError)


def _guarded(produce: Callable[[], Iterable[Outcome]], line: int | None) -> Iterator[Outcome]:
    try:
        yield from produce()
    except InvalidRecord as exc:
        yield RecordError(line, str(exc))
    except _STRUCTURE_ERRORS as exc:
        yield RecordError(line, f"unexpected structure ({type(exc).__name__}: {exc})")


def _parse_one(parser: RecordParser, value: Any, path, line: int | None) -> Iterator[Outcome]:
    return _guarded(lambda: [parser(value, path=path, line=line)], line)


def _iter_document(path: str | os.PathLike[str], fmt: str) -> Iterator[Outcome]:
    try:
        document = read_document(path)
    except InvalidRecord as exc:
        yield RecordError(None, str(exc))
        return
    yield from _parse_one(_DOCUMENT_PARSERS[fmt], document, path, None)


def _iter_collection(path: str | os.PathLike[str], fmt: str) -> Iterator[Outcome]:
    for item in iter_json_values(path):
        if isinstance(item, RecordError):
            yield item
            continue
        line, value = item
        if fmt == "predictions":
            # A single value may hold many predictions (an object keyed by instance id).
            yield from _guarded(
                lambda value=value, line=line: predictions.parse_value(value, path=path, line=line),
                line,
            )
        else:
            yield from _parse_one(_RECORD_PARSERS[fmt], value, path, line)


def iter_records(path: str | os.PathLike[str], fmt: str = "auto") -> Iterator[Outcome]:
    """Parse ``path`` as ``fmt`` (or the detected format), yielding one outcome per record."""
    if fmt == "auto":
        fmt = detect_format(path)
    elif fmt not in FORMATS:
        raise UnknownFormatError(
            f"unknown format {fmt!r}; expected 'auto' or one of {', '.join(FORMATS)}"
        )
    if fmt in _DOCUMENT_PARSERS:
        return _iter_document(path, fmt)
    return _iter_collection(path, fmt)
