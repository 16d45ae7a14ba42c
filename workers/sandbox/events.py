"""Read what a sandboxed pytest run reported: the JSON-lines events of the sandbox plugin.

The events come from untrusted code: each line is parsed on its own (a line cut by a kill is
skipped), fields are coerced to the types expected and messages are capped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from .types import CollectionError, Outcome, TestResult

MESSAGE_LIMIT = 8000


@dataclass
class Reported:
    tests: dict[str, TestResult] = field(default_factory=dict)
    collection_errors: list[CollectionError] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    # The last test that started and never finished (a limit cut the run short during it).
    unfinished: str | None = None


def parse_events(lines: bytes) -> Reported:
    reported = Reported()
    for line in lines.decode("utf-8", errors="replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue  # a line cut by a kill in the middle of a write
        if not isinstance(event, dict):
            continue
        kind = event.get("kind")
        if kind == "collection_error":
            reported.collection_errors.append(
                CollectionError(
                    path=str(event.get("path", "")),
                    message=str(event.get("message", ""))[-MESSAGE_LIMIT:],
                )
            )
        elif kind == "unmatched":
            reported.unmatched.extend(str(nodeid) for nodeid in event.get("ids", []))
        elif kind == "started":
            reported.unfinished = str(event.get("nodeid"))
        elif kind == "finished" and event.get("outcome") in Outcome._value2member_map_:
            nodeid = str(event.get("nodeid"))
            if reported.unfinished == nodeid:
                reported.unfinished = None
            reported.tests[nodeid] = TestResult(
                nodeid=nodeid,
                outcome=Outcome(event["outcome"]),
                duration=_float(event.get("duration")),
                message=str(event.get("message") or "")[-MESSAGE_LIMIT:],
            )
    return reported


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
