"""What the review agent reads and what it writes, as plain values (no Django)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"

HIGH = "high"
MEDIUM = "medium"
LOW = "low"
INFO = "info"


@dataclass(frozen=True)
class SpecFacts:
    key: str
    kind: str
    statement: str


@dataclass(frozen=True)
class TestFacts:
    __test__ = False  # not a pytest class

    nodeid: str
    # The role it is evaluated in (FAIL_TO_PASS / PASS_TO_PASS), or flaky / invalid.
    role: str
    specs: tuple[str, ...] = ()
    # Why validation put it aside, for flaky and invalid tests.
    reason: str = ""


@dataclass(frozen=True)
class EvaluationFacts:
    patch_applied: bool
    resolved: str
    tests: dict[str, str]  # nodeid -> outcome
    flaky: tuple[str, ...] = ()
    touched_test_files: tuple[str, ...] = ()
    spec_satisfied: dict[str, bool] = field(default_factory=dict)
    patch_error: str = ""


@dataclass(frozen=True)
class ActionFacts:
    """One action step of a trajectory: what the agent ran or did."""

    index: int
    tool: str
    action: str


@dataclass(frozen=True)
class TrajectoryFacts:
    id: int
    model: str
    patch: str
    evaluation: EvaluationFacts | None = None
    actions: tuple[ActionFacts, ...] = ()
    exit_status: str = ""


@dataclass(frozen=True)
class TaskFacts:
    instance_id: str
    title: str
    problem_statement: str
    reference_patch: str
    test_patch: str
    specs: tuple[SpecFacts, ...]
    tests: tuple[TestFacts, ...]


@dataclass
class FindingDraft:
    """A finding to store. `key` identifies it across audits (to carry a dismissal over)."""

    kind: str
    severity: str
    message: str
    key: str
    trajectory: int | None = None
    evidence: dict[str, Any] = field(default_factory=dict)


@dataclass
class AuditResult:
    findings: list[FindingDraft]
    # Trajectories with unsafe actions: left out of training exports unless asked for.
    unsafe: set[int]
