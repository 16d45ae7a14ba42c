"""What the review agent reads and what it writes, as plain values (no Django)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"

HIGH = "high"
MEDIUM = "medium"
LOW = "low"
INFO = "info"


class FindingKind(StrEnum):
    """Every kind of finding, listed once: the auditors and validation write them, and the
    Finding model's choices are made from this list. `LLM`: an LLM auditor's finding of a kind
    not listed here."""

    WEAK_TEST = "weak_test"
    TAMPERING = "tampering"
    SPECIAL_CASED_LITERAL = "special_cased_literal"
    ALL_MODELS_FAIL_ONE_TEST = "all_models_fail_one_test"
    UNTESTED_SPEC = "untested_spec"
    UNLINKED_TEST = "unlinked_test"
    FLAKY = "flaky"
    REFERENCE_FAILS = "reference_fails"
    UNSAFE_ACTION = "unsafe_action"
    INVALID_TEST = "invalid_test"
    LEAKED_SOLUTION = "leaked_solution"
    LLM = "llm"


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
