"""The validation engine's gates of "verified", without a sandbox: a scripted runner decides.

Patches are symbolic: "T" (the hidden tests), "R" (the whole reference), "P:a" (part a alone)
and "C:a" (the reference without part a, the complement). Each test says which parts it needs.
"""

from __future__ import annotations

from pathlib import Path

from workers.patchcore import PatchPart
from workers.sandbox import types as sandbox
from workers.sandbox.types import Outcome, PatchFailure, RunRequest, RunResult, Snapshot
from workers.validation import ReasonCode, ValidationInput, validate_task

PARTS = ("a", "b", "c")


def scripted(needs: dict[str, set[str]], broken_complement: str = ""):
    """A runner: a test passes when every part it needs is in; "C:x" brings all but x."""

    def run(request: RunRequest) -> RunResult:
        present: set[str] = set()
        for patch in request.patches:
            if patch == "R":
                present |= set(PARTS)
            elif patch.startswith("P:"):
                present.add(patch[2:])
            elif patch.startswith("C:"):
                if patch[2:] == broken_complement:
                    return RunResult(patch_failure=PatchFailure(0, "pkg/m.py", "@@ -1 +1 @@", "x"))
                present |= set(PARTS) - {patch[2:]}
        tests = {
            n: sandbox.TestResult(n, Outcome.PASSED if needs[n] <= present else Outcome.FAILED)
            for n in request.tests or ()
        }
        return RunResult(tests=tests, exit_code=0)

    return run


def inputs(needs: dict[str, set[str]], **overrides) -> ValidationInput:
    values = {
        "snapshot": Snapshot(Path("/nonexistent"), "0" * 40),
        "environment": None,
        "reference_patch": "R",
        "test_patch": "T",
        "fail_to_pass": tuple(needs),
        "reruns": 1,
        "reference_parts": tuple(PatchPart(f"pkg/m.py::{p}", f"P:{p}", f"C:{p}") for p in PARTS),
    }
    values.update(overrides)
    if values["environment"] is None:
        from workers.sandbox.types import EnvironmentSpec

        values["environment"] = EnvironmentSpec()
    return ValidationInput(**values)


GOOD = {
    "tests/t.py::test_one[1]": {"a", "b"},
    "tests/t.py::test_one[2]": {"a"},
    "tests/t.py::test_two": {"b", "c"},
    "tests/t.py::test_three": {"c"},
}


def test_it_verifies_a_task_that_meets_every_gate():
    outcome = validate_task(inputs(GOOD), scripted(GOOD))
    assert outcome.verified, outcome.reasons
    assert outcome.interaction_score == 0.5  # 2 of 4 tests need two parts or more
    assert outcome.tests["tests/t.py::test_two"].needs_parts == ["pkg/m.py::b", "pkg/m.py::c"]
    # The leave-one-out runs applied the complements, never the other parts one by one.
    assert set(outcome.part_failures) == {f"pkg/m.py::{p}" for p in PARTS}


def test_it_needs_three_hidden_tests_from_two_test_functions():
    one_function = {f"tests/t.py::test_one[{i}]": {"a", "b"} for i in range(5)}
    outcome = validate_task(inputs(one_function), scripted(one_function))
    assert not outcome.verified
    assert any("from 1 test function(s)" in r for r in outcome.reasons)
    two_tests = {"tests/t.py::test_one": {"a", "b"}, "tests/t.py::test_two": {"b", "c"}}
    outcome = validate_task(inputs(two_tests), scripted(two_tests))
    assert not outcome.verified
    assert any("too few FAIL_TO_PASS tests: 2 from 2" in r for r in outcome.reasons)
    assert [r.code for r in outcome.problems] == [ReasonCode.TOO_FEW_TESTS]


def test_a_part_that_cannot_be_left_out_makes_the_task_unverified_and_is_named():
    outcome = validate_task(inputs(GOOD), scripted(GOOD, broken_complement="C:b"[2:]))
    assert not outcome.verified
    assert any("the reference without pkg/m.py::b cannot be run" in r for r in outcome.reasons)
    assert outcome.has(ReasonCode.PART_CANNOT_RUN)
    assert not outcome.has(ReasonCode.REFERENCE_FAILS)
    # A score from some of the parts is no score.
    assert outcome.interaction_score is None


def test_a_single_test_cannot_make_the_score():
    one = {"tests/t.py::test_one": {"a", "b"}}
    outcome = validate_task(inputs(one), scripted(one))
    assert not outcome.verified  # 1.0 from one test is not a verified task
    assert outcome.interaction_score == 1.0


def test_it_needs_an_interaction_test():
    apart = {
        "tests/t.py::test_one[1]": {"a"},
        "tests/t.py::test_one[2]": {"a"},
        "tests/t.py::test_two": {"b"},
        "tests/t.py::test_three": {"c"},
    }
    outcome = validate_task(inputs(apart), scripted(apart))
    assert not outcome.verified
    assert outcome.interaction_score == 0.0
    assert any("no interaction test" in r for r in outcome.reasons)
    single = validate_task(inputs(apart, reference_parts=()), scripted(apart))
    assert not single.verified
    assert any("fewer than two parts" in r for r in single.reasons)
    assert outcome.has(ReasonCode.NO_INTERACTION) and single.has(ReasonCode.TOO_FEW_PARTS)


def test_reasons_carry_codes_and_the_gates_stop_at_a_failing_reference():
    # test_three needs a part the reference lacks: the reference fails it. The code says so,
    # whatever the words; the later gates (enough tests, leave-one-out) are not run.
    needs = {**GOOD, "tests/t.py::test_three": {"d"}}
    outcome = validate_task(inputs(needs), scripted(needs))
    assert not outcome.verified
    assert outcome.tests["tests/t.py::test_three"].code == ReasonCode.REFERENCE_FAILS
    assert outcome.tests["tests/t.py::test_two"].code is None
    assert [r.code for r in outcome.problems] == [ReasonCode.REFERENCE_FAILS]
    assert outcome.part_failures == {}


def test_a_collection_error_is_a_note_not_a_verdict():
    def with_a_collection_error(request: RunRequest) -> RunResult:
        result = scripted(GOOD)(request)
        result.collection_errors = [sandbox.CollectionError("tests/other.py", "ImportError: x")]
        return result

    outcome = validate_task(inputs(GOOD), with_a_collection_error)
    assert outcome.verified, outcome.reasons
    assert {r.code for r in outcome.problems} == {ReasonCode.COLLECTION_ERROR}
    assert not any(r.blocking for r in outcome.problems)
