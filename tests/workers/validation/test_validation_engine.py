"""The validation engine alone: real git repositories in temporary folders, the real sandbox.

No Django here (no database fixture, no settings): the engine takes a snapshot, patches and
test ids and returns a ValidationOutcome, which is all these tests look at.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import replace
from pathlib import Path

import pytest

from tests.workers.sandbox.conftest import SAMPLE_PYPROJECT
from workers import gitstore
from workers.patchcore import split_by_function
from workers.sandbox import get_backend
from workers.sandbox.types import EnvironmentSpec, Limits, Snapshot
from workers.synthesis.edits import creation_patch
from workers.validation import (
    FAIL_TO_PASS,
    INVALID,
    PASS_TO_PASS,
    ReasonCode,
    ValidationInput,
    validate_task,
)

pytestmark = pytest.mark.slow

MONEY = "src/sampleproj/money.py"
PARSE = f"{MONEY}::parse_cents"
TOTAL = f"{MONEY}::total_cents"

# The sandbox tests' sample project (same dependency files, hence the same cached environment).
PYPROJECT = SAMPLE_PYPROJECT
PACKAGE = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"

BASE_MONEY = """\
def parse_cents(text):
    raise NotImplementedError


def total_cents(texts):
    raise NotImplementedError
"""

REFERENCE_MONEY = """\
def parse_cents(text):
    units, _, cents = text.strip().partition(".")
    return int(units) * 100 + int((cents + "00")[:2])


def total_cents(texts):
    return sum(parse_cents(text) for text in texts)
"""

HIDDEN_TESTS = """\
import pytest

from sampleproj.money import parse_cents, total_cents


@pytest.mark.parametrize(("text", "cents"), [("1.50", 150), ("2", 200)])
def test_parse_cents(text, cents):
    assert parse_cents(text) == cents


def test_total_of_nothing_is_zero():
    assert total_cents([]) == 0


def test_total_adds_parsed_amounts():
    assert total_cents(["1.50", "0.25"]) == 175
"""

F2P = (
    "tests/test_money.py::test_parse_cents[1.50-150]",
    "tests/test_money.py::test_parse_cents[2-200]",
    "tests/test_money.py::test_total_of_nothing_is_zero",
    "tests/test_money.py::test_total_adds_parsed_amounts",
)
P2P = ("tests/test_sample.py::test_add",)


def _diff(path: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return f"diff --git a/{path} b/{path}\n" + "".join(lines)


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Snapshot:
    folder = tmp_path_factory.mktemp("money") / "src"
    files = {
        "pyproject.toml": PYPROJECT,
        "src/sampleproj/__init__.py": PACKAGE,
        MONEY: BASE_MONEY,
        "tests/test_sample.py": "from sampleproj import add\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n",
    }
    for relative, text in files.items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    git_dir = folder.parent / "money.git"
    return Snapshot(git_dir, gitstore.commit_folder(folder, git_dir, "money"))


@pytest.fixture(scope="module")
def runner():
    root = Path(os.environ.get("SPECLOOM_TEST_SANDBOX_ROOT", "/var/tmp/specloom-test-jail"))
    root.mkdir(parents=True, exist_ok=True)
    return get_backend("process", root=root).run


def _input(snapshot: Snapshot, reference: str, **overrides) -> ValidationInput:
    reference_patch = _diff(MONEY, BASE_MONEY, reference)
    parts = split_by_function(reference_patch, {MONEY: BASE_MONEY}.get)
    values = {
        "snapshot": snapshot,
        "environment": EnvironmentSpec(),
        "reference_patch": reference_patch,
        "test_patch": creation_patch("tests/test_money.py", HIDDEN_TESTS),
        "fail_to_pass": F2P,
        "pass_to_pass": P2P,
        "reruns": 2,
        "limits": Limits(wall_seconds=120),
        "reference_parts": tuple(parts),
    }
    return ValidationInput(**(values | overrides))


def test_a_task_whose_tests_need_both_functions_is_verified(snapshot, runner):
    inp = _input(snapshot, REFERENCE_MONEY)
    assert [p.name for p in inp.reference_parts] == [PARSE, TOTAL]
    outcome = validate_task(inp, runner)
    assert outcome.verified, outcome.reasons
    assert outcome.problems == []
    assert outcome.fail_to_pass == list(F2P)
    assert outcome.pass_to_pass == list(P2P)
    verdicts = outcome.tests
    assert all(verdicts[n].passes_base == 0 and verdicts[n].passes_reference == 2 for n in F2P)
    # Leaving out parse_cents breaks the total that uses it; leaving out total_cents breaks
    # only the totals: one test of four needs both parts.
    assert verdicts["tests/test_money.py::test_total_adds_parsed_amounts"].needs_parts == [
        PARSE,
        TOTAL,
    ]
    assert verdicts["tests/test_money.py::test_parse_cents[2-200]"].needs_parts == [PARSE]
    assert outcome.interaction_score == 0.25
    # Two runs a side, then one run per part left out.
    assert [r.label for r in outcome.runs][-2:] == [
        f"reference without {PARSE}",
        f"reference without {TOTAL}",
    ]
    assert len(outcome.runs) == 6 and outcome.environment_key


def test_a_reference_that_fails_a_test_and_a_test_that_passes_on_base_are_named(snapshot, runner):
    # The reference counts the amounts instead of adding them: parsing still works, the
    # total's test fails with the reference; and a test that already passes, named as
    # FAIL_TO_PASS, cannot tell a solution from none.
    wrong = REFERENCE_MONEY.replace("sum(parse_cents(text) for text in texts)", "len(texts)")
    outcome = validate_task(
        _input(snapshot, wrong, fail_to_pass=(*F2P, *P2P), pass_to_pass=()), runner
    )
    assert not outcome.verified
    totals = outcome.tests["tests/test_money.py::test_total_adds_parsed_amounts"]
    assert (totals.role, totals.code) == (INVALID, ReasonCode.REFERENCE_FAILS)
    on_base = outcome.tests[P2P[0]]
    assert (on_base.role, on_base.code) == (INVALID, ReasonCode.PASSES_WITHOUT_SOLUTION)
    assert outcome.tests[F2P[0]].role == FAIL_TO_PASS
    assert [r.code for r in outcome.problems] == [ReasonCode.REFERENCE_FAILS]
    # A failing reference stops the gates: no leave-one-out runs were made.
    assert outcome.part_failures == {} and len(outcome.runs) == 4


def test_a_reference_that_does_not_apply_stops_validation(snapshot, runner):
    inp = _input(snapshot, REFERENCE_MONEY)
    broken = inp.reference_patch.replace("raise NotImplementedError", "raise KeyError", 1)
    outcome = validate_task(
        ValidationInput(**{**inp.__dict__, "reference_patch": broken, "reference_parts": ()}),
        runner,
    )
    assert not outcome.verified
    assert [r.code for r in outcome.problems] == [ReasonCode.PATCH_DOES_NOT_APPLY]
    assert outcome.reasons[0].startswith("reference + tests, run 1: patch 1 does not apply")
    assert {v.code for v in outcome.tests.values()} == {ReasonCode.COULD_NOT_RUN}
    assert all(v.role == INVALID for v in outcome.tests.values())
    assert PASS_TO_PASS not in {v.role for v in outcome.tests.values()}


def test_a_run_that_hits_the_wall_clock_is_run_again_with_more_time(snapshot, runner):
    # A busy machine can push any run past its wall clock: whether a task is verified must not
    # depend on that. The first run here gets a limit no run can meet (a real timeout).
    requests = []

    def first_run_starved(request):
        requests.append(request)
        if len(requests) == 1:
            request = replace(request, limits=replace(request.limits, wall_seconds=0.01))
        return runner(request)

    outcome = validate_task(_input(snapshot, REFERENCE_MONEY), first_run_starved)

    assert outcome.verified, outcome.reasons
    assert [r.limits.wall_seconds for r in requests[:2]] == [120, 240]
    assert all(r.limits.wall_seconds == 120 for r in requests[2:])
