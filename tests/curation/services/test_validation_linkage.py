"""Recording a validation: verifying tests, unverified specs, observed edges, trivial tasks.

The outcome is written by hand (no sandbox): what matters here is what gets recorded from it.
"""

from __future__ import annotations

import pytest

from curation.models import SpecDependency, Task
from curation.services.validation import task_validation_record
from tests.factories import SpecificationFactory, TaskFactory, TestCaseFactory
from workers import validation
from workers.synthesis.trivial import TrivialCheck
from workers.validation import ValidationOutcome

pytestmark = pytest.mark.django_db

A, B = "pkg/m.py::a", "pkg/m.py::b"


def outcome(verdicts: dict[str, tuple[str, list[str]]], *, verified=True) -> ValidationOutcome:
    tests = {
        nodeid: validation.TestVerdict(
            nodeid=nodeid, intended="FAIL_TO_PASS", role=role, needs_parts=needs
        )
        for nodeid, (role, needs) in verdicts.items()
    }
    failures = {part: [n for n, (_, needs) in verdicts.items() if part in needs] for part in (A, B)}
    return ValidationOutcome(
        verified=verified,
        problems=[],
        tests=tests,
        interaction_score=0.5,
        part_failures=failures,
        runs=[],
        seconds=1.0,
    )


@pytest.fixture
def task(dataset):
    task = TaskFactory(dataset=dataset, status=Task.Status.VALIDATING)
    contract_a = SpecificationFactory(task=task, key="S1", part=A, owns_part=True)
    contract_b = SpecificationFactory(task=task, key="S2", part=B, owns_part=True)
    error_a = SpecificationFactory(task=task, key="S3", kind="error-handling", part=A)
    SpecificationFactory(task=task, key="S4", part=A)  # claims nothing
    both = TestCaseFactory(task=task, nodeid="t::both")
    only_a = TestCaseFactory(task=task, nodeid="t::only_a")
    only_b = TestCaseFactory(task=task, nodeid="t::only_b")
    both.specs.set([contract_a, contract_b, error_a])
    only_a.specs.set([contract_a])
    only_b.specs.set([contract_b, contract_a])  # a claim no run bears out
    return task


RUNS = {
    "t::both": ("FAIL_TO_PASS", [A, B]),
    "t::only_a": ("FAIL_TO_PASS", [A]),
    "t::only_b": ("FAIL_TO_PASS", [B]),
}


def test_it_keeps_the_claims_its_runs_bear_out_and_marks_the_rest_unverified(task):
    assert task_validation_record(
        task=task, revision=task.revision, outcome=outcome(RUNS), parts=[A, B], job=None
    )
    specs = {s.key: s for s in task.specs.all()}
    verifiers = {k: sorted(t.nodeid for t in s.tests.all()) for k, s in specs.items()}
    assert verifiers == {
        "S1": ["t::both", "t::only_a"],  # t::only_b passes without part a
        "S2": ["t::both", "t::only_b"],
        "S3": ["t::both"],
        "S4": [],
    }
    assert [k for k, s in specs.items() if s.verified] == ["S1", "S2", "S3"]
    assert specs["S4"].verification_note == "no test of the task is said to verify it"
    # The author's claims are kept, for the next validation of an edited task.
    assert specs["S1"].claimed_tests == ["t::both", "t::only_a", "t::only_b"]
    task.refresh_from_db()
    assert task.validation["specs_verified"] == 3
    assert task.validation["specs_unverified"] == ["S4"]


def test_observed_edges_join_only_verified_specs_through_tests_that_verify_them(task):
    task_validation_record(
        task=task, revision=task.revision, outcome=outcome(RUNS), parts=[A, B], job=None
    )
    observed = {
        (d.from_spec.key, d.to_spec.key): d.detail
        for d in task.dependencies.filter(evidence=SpecDependency.Evidence.OBSERVED)
    }
    assert set(observed) == {("S1", "S2"), ("S2", "S1"), ("S3", "S2")}
    assert observed[("S3", "S2")] == f"t::both fails without {B}"


def test_a_task_whose_specs_no_test_verifies_is_not_verified(dataset):
    task = TaskFactory(dataset=dataset, status=Task.Status.VALIDATING)
    SpecificationFactory(task=task, key="S1", part=A, owns_part=True)
    TestCaseFactory(task=task, nodeid="t::both")
    task_validation_record(
        task=task, revision=task.revision, outcome=outcome(RUNS), parts=[A, B], job=None
    )
    task.refresh_from_db()
    assert task.validation["verified"] is False
    assert "no spec is verified by a FAIL_TO_PASS test" in task.validation["reasons"]
    assert task.status == Task.Status.DRAFT


def test_a_trivial_task_is_flagged(task):
    check = TrivialCheck(trivial=True, share=1.0, visible={A: "Other.a"})
    task_validation_record(
        task=task,
        revision=task.revision,
        outcome=outcome(RUNS),
        parts=[A, B],
        job=None,
        trivial=check,
    )
    task.refresh_from_db()
    assert task.trivial is True
    assert task.metadata["trivial"]["visible"] == {A: "Other.a"}
