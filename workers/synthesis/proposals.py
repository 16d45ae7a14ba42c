"""What synthesis hands back: task proposals as plain values.

These are proposals, not database rows: the job layer turns them into Task, Specification,
SpecDependency and TestCase rows. Both engines (procedural and llm) return these types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

SPEC_KINDS = (
    "functional",
    "interface",
    "error-handling",
    "security",
    "performance",
    "compatibility",
)

DIFFICULTY_BUCKETS = ("<15m", "15m-1h", "1-4h", ">4h")


def spec_key_order(key: str) -> tuple[int, str]:
    """Sort key of spec keys: "S2" before "S10"; a key of another shape sorts first, by text."""
    number = key[1:]
    return (int(number), key) if number.isascii() and number.isdigit() else (0, key)


@dataclass
class SpecProposal:
    key: str  # "S1", "S2", ... unique within the task
    kind: str  # one of SPEC_KINDS
    statement: str
    rationale: str
    # The tests its author claims verify it (pytest node ids); validation keeps those its runs
    # bear out (workers.linkage).
    verified_by: list[str] = field(default_factory=list)
    part: str = ""  # the reference part its behaviour lives in (workers.patchcore naming)
    owns_part: bool = False  # it stands for that part: the contract of the part's function


@dataclass
class DependencyProposal:
    from_key: str
    to_key: str
    relation: str  # "calls", "constrains", ...
    evidence: str = "declared"  # "declared" (call graph) or "observed" (leave-one-out runs)


@dataclass
class ReferencePart:
    """One restored function of the reference patch, for leave-one-out runs."""

    name: str  # workers.patchcore's name, e.g. "src/pkg/mod.py::Account.deposit"
    patch: str
    spec_keys: list[str] = field(default_factory=list)


@dataclass
class Difficulty:
    bucket: str  # one of DIFFICULTY_BUCKETS
    score: float  # estimated minutes for a competent engineer
    factors: dict[str, float] = field(default_factory=dict)


@dataclass
class TaskProposal:
    title: str
    problem_statement: str  # markdown
    base_commit: str
    reference_patch: str
    test_patch: str
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    specs: list[SpecProposal]
    dependencies: list[DependencyProposal]
    reference_parts: list[ReferencePart]
    difficulty: Difficulty
    metadata: dict[str, Any] = field(default_factory=dict)


class Rejection(NamedTuple):
    """A cluster that did not become a task; unpacks as (cluster, reason)."""

    cluster: tuple[str, ...]  # function ids "path::Qual.name"
    reason: str  # short category, stable so that reports can count by it


@dataclass
class SynthesisOutcome:
    proposals: list[TaskProposal]
    rejected: list[Rejection]
    report: dict[str, Any]
