"""Read what a sandboxed pytest run reported: JUnit XML first, the plugin's events as fallback.

Outcomes are keyed by the exact node id the plugin stored as a JUnit property. The XML comes
from untrusted code, so it is parsed with expat (which refuses entity expansion bombs) and
testcases without the property (collection failures, module-level skips) are not tests.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

from .types import CollectionError, Outcome, TestResult

# Same value as specloom_sandbox_plugin.NODEID_PROPERTY; not imported from there because the
# plugin imports pytest, which the host running the engine need not have.
NODEID_PROPERTY = "specloom_nodeid"
MESSAGE_LIMIT = 8000


@dataclass
class Reported:
    tests: dict[str, TestResult] = field(default_factory=dict)
    collection_errors: list[CollectionError] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)
    # The last test that started and never finished (a limit cut the run short during it).
    unfinished: str | None = None


def parse_junit(xml: bytes) -> dict[str, TestResult]:
    root = ET.fromstring(xml)  # noqa: S314 - expat >= 2.4.1 rejects entity expansion attacks
    tests: dict[str, TestResult] = {}
    for testcase in root.iter("testcase"):
        nodeid = _nodeid_property(testcase)
        if nodeid is None:
            continue
        outcome, message = _outcome_of(testcase)
        tests[nodeid] = TestResult(
            nodeid=nodeid,
            outcome=outcome,
            duration=_float(testcase.get("time")),
            message=message,
        )
    return tests


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
            )
    return reported


def _nodeid_property(testcase: ET.Element) -> str | None:
    for prop in testcase.iter("property"):
        if prop.get("name") == NODEID_PROPERTY:
            try:
                value = json.loads(prop.get("value", ""))
            except ValueError:
                return None
            return value if isinstance(value, str) else None
    return None


def _outcome_of(testcase: ET.Element) -> tuple[Outcome, str]:
    # A test whose call failed and whose teardown errored is a failure, as pytest counts it.
    for tag, outcome in (
        ("failure", Outcome.FAILED),
        ("error", Outcome.ERROR),
        ("skipped", Outcome.SKIPPED),
    ):
        element = testcase.find(tag)
        if element is not None:
            return outcome, _message(element)
    return Outcome.PASSED, ""


def _message(element: ET.Element) -> str:
    text = (element.text or "").strip() or element.get("message", "")
    # The end of a traceback says what went wrong; keep that part.
    return text[-MESSAGE_LIMIT:]


def _float(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0.0
