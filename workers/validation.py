"""Task validation: prove a task's tests before a human spends time on it.

Plain Python (no Django). Given a base snapshot, the hidden test patch, the reference patch and
the intended FAIL_TO_PASS / PASS_TO_PASS lists, it runs the sandbox and decides:

1. base + tests, and base + reference + tests, each `reruns` times;
2. a test whose outcome varies between runs is flaky (left out of both lists);
3. an intended FAIL_TO_PASS test that passes on base is invalid (it cannot tell a solution
   from none); a test the reference fails makes the whole task invalid;
4. the interaction check: with k >= 2 reference parts, k more runs with all parts but one
   show which FAIL_TO_PASS tests need which parts; the interaction score is the share of
   FAIL_TO_PASS tests that need two or more parts, always taken over all k parts;
5. the gates of a verified task: at least `min_fail_to_pass` FAIL_TO_PASS tests from at least
   `min_test_functions` test functions (parametrised cases of one function count once), every
   leave-one-out patch applies (a part that cannot be left out is named), and at least one
   FAIL_TO_PASS test needs two or more parts (the interaction test). A score from one test, or
   from some of the parts, cannot make a task verified.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from workers.patchcore import PatchPart
from workers.sandbox.types import (
    EnvironmentSpec,
    Limits,
    Outcome,
    RunRequest,
    RunResult,
    Snapshot,
    run_despite_load,
)

FAIL_TO_PASS = "FAIL_TO_PASS"
PASS_TO_PASS = "PASS_TO_PASS"
FLAKY = "flaky"
INVALID = "invalid"

Runner = Callable[[RunRequest], RunResult]


class ReasonCode(StrEnum):
    """What a reason is about, so that callers classify by code, never by the message's words."""

    # A test's verdict (TestVerdict.code)
    NOT_COLLECTED = "not-collected"
    VARIES = "varies"
    REFERENCE_FAILS = "reference-fails"
    PASSES_WITHOUT_SOLUTION = "passes-without-solution"
    PASS_TO_PASS_FAILS_ON_BASE = "pass-to-pass-fails-on-base"
    COULD_NOT_RUN = "could-not-run"
    # A task's reasons (ValidationOutcome.problems); REFERENCE_FAILS is one too
    NO_TESTS = "no-tests"
    PATCH_DOES_NOT_APPLY = "patch-does-not-apply"
    TIMED_OUT = "timed-out"
    MEMORY_LIMIT = "memory-limit"
    COLLECTION_ERROR = "collection-error"  # a note: it alone does not block "verified"
    NO_FAIL_TO_PASS = "no-fail-to-pass"
    TOO_FEW_TESTS = "too-few-tests"
    PART_CANNOT_RUN = "part-cannot-run"
    NO_INTERACTION = "no-interaction"
    TOO_FEW_PARTS = "too-few-parts"


# Reasons that explain but do not decide: every other reason keeps a task from "verified".
NOTES = frozenset({ReasonCode.COLLECTION_ERROR})


@dataclass(frozen=True)
class Reason:
    code: ReasonCode
    message: str  # for people: the log, the task page, the model's feedback

    @property
    def blocking(self) -> bool:
        return self.code not in NOTES


Progress = Callable[[int, str], None]


@dataclass(frozen=True)
class ValidationInput:
    snapshot: Snapshot
    environment: EnvironmentSpec
    reference_patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...] = ()
    reruns: int = 3
    limits: Limits = field(default_factory=Limits)
    # Parts of the reference for the interaction check; fewer than two skips the check.
    reference_parts: tuple[PatchPart, ...] = ()
    # The gates of "verified" (module docstring, point 5).
    min_fail_to_pass: int = 3
    min_test_functions: int = 2
    require_interaction: bool = True


@dataclass
class TestVerdict:
    nodeid: str
    intended: str
    role: str = INVALID
    runs: int = 0
    passes_base: int = 0
    passes_reference: int = 0
    outcomes_base: list[str] = field(default_factory=list)
    outcomes_reference: list[str] = field(default_factory=list)
    needs_parts: list[str] = field(default_factory=list)
    reason: str = ""
    code: ReasonCode | None = None  # what `reason` is about; None for a test in its role
    message: str = ""


@dataclass
class RunSummary:
    label: str
    seconds: float
    exit_code: int | None
    passed: int
    failed: int
    problem: str = ""


@dataclass
class ValidationOutcome:
    verified: bool
    problems: list[Reason]
    tests: dict[str, TestVerdict]
    interaction_score: float | None
    part_failures: dict[str, list[str]]
    runs: list[RunSummary]
    seconds: float
    environment_key: str = ""

    @property
    def reasons(self) -> list[str]:
        return [problem.message for problem in self.problems]

    def has(self, code: ReasonCode) -> bool:
        return any(problem.code == code for problem in self.problems)

    @property
    def fail_to_pass(self) -> list[str]:
        return [t.nodeid for t in self.tests.values() if t.role == FAIL_TO_PASS]

    @property
    def pass_to_pass(self) -> list[str]:
        return [t.nodeid for t in self.tests.values() if t.role == PASS_TO_PASS]

    @property
    def flaky(self) -> list[str]:
        return [t.nodeid for t in self.tests.values() if t.role == FLAKY]


def _passed(outcome: str) -> bool:
    # A skipped test is not evidence of a solution either way; it counts as not passing.
    return outcome == Outcome.PASSED


def _outcomes(result: RunResult, nodeids: list[str]) -> dict[str, str]:
    found = {}
    for nodeid in nodeids:
        test = result.tests.get(nodeid)
        found[nodeid] = str(test.outcome) if test else "missing"
    return found


def _run_problem(result: RunResult) -> Reason | None:
    if result.patch_failure:
        failure = result.patch_failure
        return Reason(
            ReasonCode.PATCH_DOES_NOT_APPLY,
            f"patch {failure.patch_index + 1} does not apply: {failure.file} "
            f"{failure.hunk}: {failure.message}".strip(),
        )
    if result.timed_out:
        return Reason(ReasonCode.TIMED_OUT, "the run hit the wall-clock limit")
    if result.memory_exceeded:
        return Reason(ReasonCode.MEMORY_LIMIT, "the run hit the memory limit")
    return None


def _summary(label: str, result: RunResult) -> RunSummary:
    passed = sum(1 for t in result.tests.values() if t.outcome == Outcome.PASSED)
    return RunSummary(
        label=label,
        seconds=round(result.wall_seconds, 3),
        exit_code=result.exit_code,
        passed=passed,
        failed=len(result.tests) - passed,
        problem=problem.message if (problem := _run_problem(result)) else "",
    )


def validate_task(inp: ValidationInput, runner: Runner, progress: Progress | None = None):
    started = time.monotonic()
    progress = progress or (lambda percent, message: None)
    nodeids = list(dict.fromkeys([*inp.fail_to_pass, *inp.pass_to_pass]))
    intended = {n: FAIL_TO_PASS for n in inp.fail_to_pass}
    intended.update({n: PASS_TO_PASS for n in inp.pass_to_pass if n not in intended})
    verdicts = {n: TestVerdict(nodeid=n, intended=intended[n]) for n in nodeids}
    reasons: list[Reason] = []
    runs: list[RunSummary] = []
    loo = len(inp.reference_parts) if len(inp.reference_parts) >= 2 else 0
    total_runs = 2 * inp.reruns + loo
    done = 0
    env_key = ""

    def run(label: str, patches: tuple[str, ...], tests: list[str]) -> RunResult:
        nonlocal done, env_key
        progress(int(100 * done / max(1, total_runs)), f"{label}")
        request = RunRequest(
            snapshot=inp.snapshot,
            environment=inp.environment,
            patches=tuple(p for p in patches if p.strip()),
            tests=tuple(tests),
            limits=inp.limits,
        )
        result = run_despite_load(runner, request)
        env_key = result.environment_key or env_key
        done += 1
        runs.append(_summary(label, result))
        return result

    if not nodeids:
        return ValidationOutcome(
            verified=False,
            problems=[Reason(ReasonCode.NO_TESTS, "the task has no tests to validate")],
            tests={},
            interaction_score=None,
            part_failures={},
            runs=[],
            seconds=0.0,
        )

    blocking = False
    for attempt in range(1, inp.reruns + 1):
        for label, patches, key in (
            (f"base + tests, run {attempt}", (inp.test_patch,), "base"),
            (
                f"reference + tests, run {attempt}",
                (inp.reference_patch, inp.test_patch),
                "reference",
            ),
        ):
            result = run(label, patches, nodeids)
            problem = _run_problem(result)
            if problem:
                reasons.append(Reason(problem.code, f"{label}: {problem.message}"))
                blocking = True
                break
            outcomes = _outcomes(result, nodeids)
            for nodeid, outcome in outcomes.items():
                verdict = verdicts[nodeid]
                if key == "base":
                    verdict.outcomes_base.append(outcome)
                    verdict.passes_base += _passed(outcome)
                else:
                    verdict.outcomes_reference.append(outcome)
                    verdict.passes_reference += _passed(outcome)
                test = result.tests.get(nodeid)
                if test and test.message and not _passed(outcome):
                    verdict.message = test.message[-2000:]
            for error in result.collection_errors:
                message = f"{label}: collection error in {error.path}: {error.message[:300]}"
                note = Reason(ReasonCode.COLLECTION_ERROR, message)
                if note not in reasons:
                    reasons.append(note)
        if blocking:
            break

    if blocking:
        for verdict in verdicts.values():
            verdict.role = INVALID
            verdict.reason = "validation could not run"
            verdict.code = ReasonCode.COULD_NOT_RUN
        return ValidationOutcome(
            verified=False,
            problems=reasons,
            tests=verdicts,
            interaction_score=None,
            part_failures={},
            runs=runs,
            seconds=round(time.monotonic() - started, 3),
            environment_key=env_key,
        )

    _classify(verdicts, reasons)
    fail_to_pass = [v.nodeid for v in verdicts.values() if v.role == FAIL_TO_PASS]
    if not fail_to_pass:
        reasons.append(
            Reason(ReasonCode.NO_FAIL_TO_PASS, "no FAIL_TO_PASS test survived validation")
        )

    part_failures: dict[str, list[str]] = {}
    interaction_score = None
    reference_fails = any(r.code == ReasonCode.REFERENCE_FAILS for r in reasons)
    if fail_to_pass and not reference_fails:
        reasons += _gate_tests(inp, fail_to_pass)
    if loo and fail_to_pass and not reference_fails:
        for index, left_out in enumerate(inp.reference_parts):
            # The complement is one patch from the base to "all but this part", made from the
            # files themselves; applying the other parts one after another may not apply.
            others = (
                (left_out.complement,)
                if left_out.complement.strip()
                else tuple(p.patch for i, p in enumerate(inp.reference_parts) if i != index)
            )
            result = run(
                f"reference without {left_out.name}", (*others, inp.test_patch), fail_to_pass
            )
            problem = _run_problem(result)
            if problem:
                reasons.append(
                    Reason(
                        ReasonCode.PART_CANNOT_RUN,
                        f"the reference without {left_out.name} cannot be run: "
                        f"{problem.message}; the interaction check needs every part left out once",
                    )
                )
                continue
            failing = [n for n, o in _outcomes(result, fail_to_pass).items() if not _passed(o)]
            part_failures[left_out.name] = failing
            for nodeid in failing:
                verdicts[nodeid].needs_parts.append(left_out.name)
        if len(part_failures) == loo:
            needing_two = sum(1 for n in fail_to_pass if len(verdicts[n].needs_parts) >= 2)
            interaction_score = round(needing_two / len(fail_to_pass), 4)
            if inp.require_interaction and not needing_two:
                reasons.append(
                    Reason(
                        ReasonCode.NO_INTERACTION,
                        f"no FAIL_TO_PASS test needs two or more of the {loo} parts: the task "
                        "has no interaction test",
                    )
                )
    elif inp.require_interaction and fail_to_pass and not loo:
        reasons.append(
            Reason(
                ReasonCode.TOO_FEW_PARTS,
                "the reference has fewer than two parts: no test can need two of them, so the "
                "task has no interaction test",
            )
        )

    progress(100, "validated")
    return ValidationOutcome(
        # Collection errors are notes, not verdicts; every gate above is.
        verified=not any(r.blocking for r in reasons),
        problems=reasons,
        tests=verdicts,
        interaction_score=interaction_score,
        part_failures=part_failures,
        runs=runs,
        seconds=round(time.monotonic() - started, 3),
        environment_key=env_key,
    )


def test_function(nodeid: str) -> str:
    """The test function of a node id: its parametrised cases are one function."""
    return nodeid.split("[", 1)[0]


def _gate_tests(inp: ValidationInput, fail_to_pass: list[str]) -> list[Reason]:
    """Enough hidden tests, from enough test functions, for the verdict to mean something."""
    functions = {test_function(nodeid) for nodeid in fail_to_pass}
    if len(fail_to_pass) >= inp.min_fail_to_pass and len(functions) >= inp.min_test_functions:
        return []
    return [
        Reason(
            ReasonCode.TOO_FEW_TESTS,
            f"too few FAIL_TO_PASS tests: {len(fail_to_pass)} from {len(functions)} test "
            f"function(s); a verified task needs at least {inp.min_fail_to_pass} from "
            f"{inp.min_test_functions}",
        )
    ]


def _classify(verdicts: dict[str, TestVerdict], reasons: list[Reason]) -> None:
    reference_failures = []
    for verdict in verdicts.values():
        verdict.runs = len(verdict.outcomes_base)
        base = verdict.outcomes_base
        reference = verdict.outcomes_reference
        if "missing" in reference or "missing" in base:
            verdict.role = INVALID
            verdict.reason = "not collected or not found in a run"
            verdict.code = ReasonCode.NOT_COLLECTED
            if all(o == "missing" for o in reference):
                reference_failures.append(verdict.nodeid)
            continue
        base_varies = len({_passed(o) for o in base}) > 1
        reference_varies = len({_passed(o) for o in reference}) > 1
        if base_varies or reference_varies:
            verdict.role = FLAKY
            verdict.code = ReasonCode.VARIES
            which = "base" if base_varies else "reference"
            verdict.reason = f"outcome varies between runs on {which}: " + ", ".join(
                base if base_varies else reference
            )
            continue
        passes_reference = all(_passed(o) for o in reference)
        passes_base = all(_passed(o) for o in base)
        if not passes_reference:
            verdict.role = INVALID
            verdict.reason = f"the reference solution fails it ({reference[0]})"
            verdict.code = ReasonCode.REFERENCE_FAILS
            reference_failures.append(verdict.nodeid)
        elif verdict.intended == FAIL_TO_PASS:
            if passes_base:
                verdict.role = INVALID
                verdict.reason = "passes without the solution: it cannot tell a solution from none"
                verdict.code = ReasonCode.PASSES_WITHOUT_SOLUTION
            else:
                verdict.role = FAIL_TO_PASS
        elif passes_base:
            verdict.role = PASS_TO_PASS
        else:
            verdict.role = INVALID
            verdict.reason = "an intended PASS_TO_PASS test fails on base"
            verdict.code = ReasonCode.PASS_TO_PASS_FAILS_ON_BASE
    if reference_failures:
        shown = ", ".join(reference_failures[:5])
        more = f" and {len(reference_failures) - 5} more" if len(reference_failures) > 5 else ""
        reasons.append(
            Reason(
                ReasonCode.REFERENCE_FAILS,
                f"the reference solution fails {len(reference_failures)} test(s): {shown}{more}",
            )
        )
