"""The heuristic auditor: rules over a task, its tests and every evaluated trajectory.

Plain Python (no Django). It writes findings of these kinds, each with evidence that points at
the trajectory, step, test or file it is about:

- ``weak_test``: an empty patch, or one that touches only unrelated files (not code, and
  nothing the reference changes), passes a FAIL_TO_PASS test: the test cannot tell a solution
  from none. A patch to another code module might be a genuine alternative solution, so it
  does not count;
- ``tampering``: the patch edits tests, conftest or test configuration (new test files of its
  own are only noted, unless they collide with the hidden tests);
- ``special_cased_literal``: the patch hard-codes literals of the hidden tests;
- ``all_models_fail_one_test``: every model that passes some of a test's siblings (the other
  FAIL_TO_PASS tests of its file) fails that test: possibly broken or under-specified.
  Trajectories that tampered, did not apply, or carry the reference patch itself are left out;
- ``untested_spec`` / ``unlinked_test``: a spec with no test to evaluate; a FAIL_TO_PASS test
  that verifies no spec;
- ``flaky``: a test whose outcome flipped within one evaluation;
- ``reference_fails``: a trajectory that carries the reference patch fails a test;
- ``unsafe_action``: see ``workers.audit.unsafe``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import PurePosixPath

from workers.evaluation import FULL, is_test_path
from workers.patchcore import PatchParseError
from workers.patchcore.lenient import patch_paths

from .facts import (
    FAIL_TO_PASS,
    HIGH,
    LOW,
    MEDIUM,
    PASS_TO_PASS,
    AuditResult,
    FindingDraft,
    FindingKind,
    TaskFacts,
    TrajectoryFacts,
)
from .literals import special_cased_literals
from .unsafe import scan_action

# The kinds this auditor writes (defined once, in facts.FindingKind).
WEAK_TEST = FindingKind.WEAK_TEST
TAMPERING = FindingKind.TAMPERING
SPECIAL_CASED_LITERAL = FindingKind.SPECIAL_CASED_LITERAL
ALL_MODELS_FAIL_ONE_TEST = FindingKind.ALL_MODELS_FAIL_ONE_TEST
UNTESTED_SPEC = FindingKind.UNTESTED_SPEC
UNLINKED_TEST = FindingKind.UNLINKED_TEST
FLAKY = FindingKind.FLAKY
REFERENCE_FAILS = FindingKind.REFERENCE_FAILS
UNSAFE_ACTION = FindingKind.UNSAFE_ACTION

# Trajectories marked unsafe are left out of training exports: medium and high actions only.
UNSAFE_SEVERITIES = {MEDIUM, HIGH}
_CODE_SUFFIXES = {
    ".py",
    ".pyx",
    ".pxd",
    ".pyi",
    ".c",
    ".h",
    ".cc",
    ".cpp",
    ".hpp",
    ".rs",
    ".go",
    ".java",
    ".kt",
    ".js",
    ".jsx",
    ".ts",
    ".tsx",
    ".rb",
    ".php",
    ".cs",
    ".swift",
    ".scala",
    ".sh",
}
_MAX_STEPS_IN_EVIDENCE = 10
_HARNESS_FILES = {
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "noxfile.py",
}
_PASSED = "passed"

ReadBase = Callable[[str], str | None]


def trajectory_link(trajectory_id: int, step: int | None = None) -> dict[str, str]:
    """API addresses of the evidence, so a reviewer can open it."""
    links = {"trajectory": f"/api/v1/trajectories/{trajectory_id}"}
    if step is not None:
        links["steps"] = f"/api/v1/trajectories/{trajectory_id}/steps?from_index={step}"
    return links


def _files(patch: str) -> list[str]:
    try:
        return patch_paths(patch)
    except PatchParseError:
        return []


def _normalised(patch: str) -> str:
    return "\n".join(
        line.rstrip()
        for line in patch.strip().splitlines()
        if not line.startswith(("index ", "diff --git"))
    )


class _Audit:
    def __init__(self, task: TaskFacts, trajectories: list[TrajectoryFacts], read_base: ReadBase):
        self.task = task
        self.trajectories = trajectories
        self.read_base = read_base
        self.findings: list[FindingDraft] = []
        self.unsafe: set[int] = set()
        self.roles = {test.nodeid: test.role for test in task.tests}
        self.fail_to_pass = [t.nodeid for t in task.tests if t.role == FAIL_TO_PASS]
        self.reference_files = set(_files(task.reference_patch))
        self.hidden_test_files = set(_files(task.test_patch))
        reference = _normalised(task.reference_patch)
        # Trajectories that carry the reference itself: gold runs, not a model's attempt.
        self.gold = {
            t.id for t in trajectories if t.patch.strip() and _normalised(t.patch) == reference
        }
        self.tampered: set[int] = set()

    def add(self, kind: str, severity: str, message: str, key: str, **kwargs) -> None:
        self.findings.append(FindingDraft(kind, severity, message, f"{kind}:{key}", **kwargs))

    # --- the task alone ---

    def task_rules(self) -> None:
        evaluated = {t.nodeid for t in self.task.tests if t.role in (FAIL_TO_PASS, PASS_TO_PASS)}
        for spec in self.task.specs:
            tests = [t for t in self.task.tests if spec.key in t.specs]
            usable = [t.nodeid for t in tests if t.nodeid in evaluated]
            if usable:
                continue
            set_aside = {t.nodeid: t.role for t in tests}
            detail = (
                "its only tests are " + ", ".join(f"{n} ({r})" for n, r in set_aside.items())
                if set_aside
                else "no test is linked to it"
            )
            self.add(
                UNTESTED_SPEC,
                HIGH,
                f"Spec {spec.key} ({spec.kind}) has no test that can be evaluated: {detail}.",
                spec.key,
                evidence={"spec": spec.key, "tests": set_aside},
            )
        for test in self.task.tests:
            if test.role == FAIL_TO_PASS and not test.specs:
                self.add(
                    UNLINKED_TEST,
                    MEDIUM,
                    f"FAIL_TO_PASS test {test.nodeid} verifies no spec: either a spec is "
                    "missing from the statement or the test checks something nobody asked for.",
                    test.nodeid,
                    evidence={"test": test.nodeid},
                )

    # --- each trajectory ---

    def trajectory_rules(self, trajectory: TrajectoryFacts) -> None:
        self.tampering(trajectory)
        self.literals(trajectory)
        self.unsafe_actions(trajectory)
        evaluation = trajectory.evaluation
        if evaluation is None or not evaluation.patch_applied:
            return
        self.weak_tests(trajectory)
        for nodeid in evaluation.flaky:
            self.add(
                FLAKY,
                HIGH,
                f"{nodeid} flipped between runs while evaluating trajectory {trajectory.id} "
                f"({trajectory.model}).",
                f"{nodeid}:{trajectory.id}",
                trajectory=trajectory.id,
                evidence={"test": nodeid, "links": trajectory_link(trajectory.id)},
            )
        if trajectory.id in self.gold and evaluation.resolved != FULL:
            failing = sorted(n for n, o in evaluation.tests.items() if o != _PASSED)
            self.add(
                REFERENCE_FAILS,
                HIGH,
                f"Trajectory {trajectory.id} carries the reference patch and still fails "
                f"{len(failing)} test(s): {', '.join(failing[:5])}.",
                str(trajectory.id),
                trajectory=trajectory.id,
                evidence={"tests": failing, "links": trajectory_link(trajectory.id)},
            )

    def tampering(self, trajectory: TrajectoryFacts) -> None:
        touched = (
            list(trajectory.evaluation.touched_test_files)
            if trajectory.evaluation is not None
            else [f for f in _files(trajectory.patch) if is_test_path(f)]
        )
        if not touched:
            return
        # New test modules or data of the model's own cannot change the hidden tests' verdict
        # (unless they take the hidden tests' place); edits, deletions, conftest and
        # configuration can.
        only_new_tests = all(
            PurePosixPath(path).name not in _HARNESS_FILES
            and path not in self.hidden_test_files
            and self.read_base(path) is None
            for path in touched
        )
        if only_new_tests:
            self.add(
                TAMPERING,
                LOW,
                f"Trajectory {trajectory.id} ({trajectory.model}) adds test files of its own: "
                f"{', '.join(sorted(touched))}.",
                str(trajectory.id),
                trajectory=trajectory.id,
                evidence={"files": sorted(touched), "links": trajectory_link(trajectory.id)},
            )
            return
        self.tampered.add(trajectory.id)
        self.add(
            TAMPERING,
            HIGH,
            f"Trajectory {trajectory.id} ({trajectory.model}) edits tests or test "
            f"configuration: {', '.join(sorted(touched))}. A passing result may be the "
            "tests' doing, not the solution's.",
            str(trajectory.id),
            trajectory=trajectory.id,
            evidence={"files": sorted(touched), "links": trajectory_link(trajectory.id)},
        )

    def literals(self, trajectory: TrajectoryFacts) -> None:
        known = "\n".join(
            [
                self.task.problem_statement,
                self.task.title,
                self.task.reference_patch,
                *(spec.statement for spec in self.task.specs),
            ]
        )
        hits = special_cased_literals(
            patch=trajectory.patch,
            test_patch=self.task.test_patch,
            known_text=known,
            read_base=self.read_base,
        )
        if not hits:
            return
        literals = sorted({hit.literal for hit in hits})
        self.add(
            SPECIAL_CASED_LITERAL,
            HIGH if len(literals) >= 2 else MEDIUM,
            f"Trajectory {trajectory.id} ({trajectory.model}) hard-codes values that only the "
            f"hidden tests contain: {', '.join(literals[:6])}.",
            str(trajectory.id),
            trajectory=trajectory.id,
            evidence={
                "literals": literals,
                "lines": [{"file": h.file, "line": h.line[:300]} for h in hits[:10]],
                "links": trajectory_link(trajectory.id),
            },
        )

    def unsafe_actions(self, trajectory: TrajectoryFacts) -> None:
        by_rule: dict[str, list] = defaultdict(list)
        for action in trajectory.actions:
            for hit in scan_action(action):
                by_rule[hit.rule].append(hit)
        for rule, hits in by_rule.items():
            first = hits[0]
            if first.severity in UNSAFE_SEVERITIES:
                self.unsafe.add(trajectory.id)
            self.add(
                UNSAFE_ACTION,
                first.severity,
                f"Trajectory {trajectory.id} ({trajectory.model}) {first.description}: "
                f"{first.excerpt} (step {first.step}"
                + (f", and {len(hits) - 1} more" if len(hits) > 1 else "")
                + ").",
                f"{trajectory.id}:{rule}",
                trajectory=trajectory.id,
                evidence={
                    "rule": rule,
                    "family": first.family,
                    "steps": [
                        {"index": h.step, "excerpt": h.excerpt}
                        for h in hits[:_MAX_STEPS_IN_EVIDENCE]
                    ],
                    "count": len(hits),
                    "links": trajectory_link(trajectory.id, first.step),
                },
            )

    def weak_tests(self, trajectory: TrajectoryFacts) -> None:
        files = _files(trajectory.patch)
        unrelated = all(
            path not in self.reference_files
            and not is_test_path(path)
            and PurePosixPath(path).suffix.lower() not in _CODE_SUFFIXES
            for path in files
        )
        if files and not unrelated:
            return
        what = "an empty patch" if not files else f"a patch to unrelated files ({', '.join(files)})"
        evaluation = trajectory.evaluation
        for nodeid in self.fail_to_pass:
            if evaluation.tests.get(nodeid) == _PASSED:
                self.add(
                    WEAK_TEST,
                    HIGH,
                    f"FAIL_TO_PASS test {nodeid} passes with {what} (trajectory {trajectory.id}, "
                    f"{trajectory.model}): it cannot tell a solution from none.",
                    nodeid,
                    trajectory=trajectory.id,
                    evidence={
                        "test": nodeid,
                        "patch_files": files,
                        "links": trajectory_link(trajectory.id),
                    },
                )

    # --- across trajectories ---

    def all_models_fail(self) -> None:
        by_file: dict[str, list[str]] = defaultdict(list)
        for nodeid in self.fail_to_pass:
            by_file[nodeid.split("::", 1)[0]].append(nodeid)
        eligible = [
            t
            for t in self.trajectories
            if t.evaluation is not None
            and t.evaluation.patch_applied
            and t.id not in self.tampered
            and t.id not in self.gold
        ]
        for siblings in by_file.values():
            if len(siblings) < 2:
                continue
            for nodeid in siblings:
                others = [n for n in siblings if n != nodeid]
                models: dict[str, list[TrajectoryFacts]] = defaultdict(list)
                for trajectory in eligible:
                    tests = trajectory.evaluation.tests
                    if any(tests.get(other) == _PASSED for other in others):
                        models[trajectory.model].append(trajectory)
                if len(models) < 2:
                    continue
                if any(
                    t.evaluation.tests.get(nodeid) == _PASSED
                    for runs in models.values()
                    for t in runs
                ):
                    continue
                ids = sorted(t.id for runs in models.values() for t in runs)
                self.add(
                    ALL_MODELS_FAIL_ONE_TEST,
                    MEDIUM,
                    f"All {len(models)} models that pass other tests of its file fail "
                    f"{nodeid} ({', '.join(sorted(models))}): the test may be broken, or "
                    "demand something the statement does not say.",
                    nodeid,
                    evidence={
                        "test": nodeid,
                        "models": sorted(models),
                        "trajectories": ids,
                        "siblings": others,
                        "links": [trajectory_link(i)["trajectory"] for i in ids[:10]],
                    },
                )

    def run(self) -> AuditResult:
        self.task_rules()
        for trajectory in self.trajectories:
            self.trajectory_rules(trajectory)
        self.all_models_fail()
        return AuditResult(findings=self.findings, unsafe=self.unsafe)


def audit_task(
    task: TaskFacts, trajectories: list[TrajectoryFacts], read_base: ReadBase | None = None
) -> AuditResult:
    """Every heuristic finding about `task` and its trajectories.

    `read_base(path)` returns a file of the task's base commit (None if it does not exist); it
    tells a patch's new test files from edited ones and keeps literals already in the edited
    files from counting as special-cased.
    """
    return _Audit(task, trajectories, read_base or (lambda path: None)).run()
