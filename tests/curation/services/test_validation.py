"""Validation of hand-made tasks on both sample repositories, in the real sandbox."""

import pytest

from curation.models import Finding, SpecDependency, Task, TestCase
from curation.services.validation import task_validation_enqueue
from tests.curation.tasks_fixtures import hand_made_task
from workers import gitstore
from workers.models import Job
from workers.patchcore import split_by_function
from workers.services import job_execute

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _validate(task: Task, reruns: int | None = None) -> Job:
    job = task_validation_enqueue(task=task, reruns=reruns)
    assert task.status == Task.Status.VALIDATING
    assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    return job


def _roles(task: Task) -> dict[str, str]:
    return dict(task.tests.values_list("nodeid", "role"))


def _observed(task: Task) -> set[tuple[str, str]]:
    return {
        (d.from_spec.key, d.to_spec.key)
        for d in task.dependencies.filter(evidence="observed").select_related(
            "from_spec", "to_spec"
        )
    }


def test_it_validates_the_ledger_task_and_catches_the_flaky_test(
    repo_storage, sandbox_root, dataset
):
    task = hand_made_task("ledger_allocation", dataset=dataset)
    # Six runs of each side make a coin-flip test look stable only once in a thousand.
    job = _validate(task, reruns=6)
    task.refresh_from_db()

    roles = _roles(task)
    f2p = "tests/test_allocation_spec.py::"
    assert roles == {
        f"{f2p}test_allocation_takes_the_fullest_location_first": "FAIL_TO_PASS",
        f"{f2p}test_allocation_when_short_raises_and_reserves_nothing": "FAIL_TO_PASS",
        f"{f2p}test_allocation_rejects_a_quantity_that_is_not_positive[zero [0]]": "FAIL_TO_PASS",
        f"{f2p}test_allocation_rejects_a_quantity_that_is_not_positive[n\\xe9gatif \\u22121]": (
            "FAIL_TO_PASS"
        ),
        f"{f2p}test_allocation_is_flaky_on_purpose": "flaky",
        "tests/test_reservations.py::TestReserve::test_ids_are_sequential": "PASS_TO_PASS",
        "tests/test_stock.py::TestApply::test_issue_takes_stock": "PASS_TO_PASS",
    }
    assert task.status == Task.Status.NEEDS_REVIEW
    assert task.validated_revision == task.revision
    assert task.validation["verified"] is True
    assert job.result["verified"] is True

    flaky = task.findings.get(kind=Finding.Kind.FLAKY)
    assert "test_allocation_is_flaky_on_purpose" in flaky.message
    assert flaky.severity == "high"

    # Two of the four FAIL_TO_PASS tests need both functions; the ValueError ones need one.
    assert task.interaction_score == 0.5
    needs = dict(task.tests.values_list("nodeid", "needs_parts"))
    assert sorted(needs[f"{f2p}test_allocation_takes_the_fullest_location_first"]) == [
        "src/ledger/reservations.py::ReservationBook._allocation_plan",
        "src/ledger/reservations.py::ReservationBook.allocate",
    ]
    # Observed edges join specs of different parts only: S2 and S3 are about `allocate`, which
    # S1 stands for; a test of theirs failing without `allocate` says nothing about S1.
    assert _observed(task) == {("S1", "S4"), ("S2", "S4"), ("S4", "S1")}
    assert task.validation["declared_confirmed"] == ["S1->S4", "S2->S4"]
    assert job.progress == 100


def test_it_validates_the_marktext_task(repo_storage, sandbox_root, dataset):
    task = hand_made_task("marktext_toc", dataset=dataset)
    _validate(task)
    task.refresh_from_db()

    roles = _roles(task)
    assert sorted(roles.values()).count("FAIL_TO_PASS") == 5
    assert sorted(roles.values()).count("PASS_TO_PASS") == 2
    assert (
        roles[
            "tests/test_toc_spec.py::test_toc_rejects_a_max_level_out_of_range[level 7 \\u2265 6]"
        ]
        == "FAIL_TO_PASS"
    )
    assert task.status == Task.Status.NEEDS_REVIEW
    # Only the nesting test needs all three functions.
    assert task.interaction_score == 0.2
    assert ("S1", "S2") in _observed(task)
    # The range check (S3) and S1 are both about build_toc: no observed edge between them.
    assert task.validation["declared_confirmed"] == ["S1->S2"]
    assert task.validation["declared_unconfirmed"] == ["S3->S1"]


def test_a_test_that_passes_without_the_solution_is_invalid(repo_storage, sandbox_root, dataset):
    task = hand_made_task("marktext_toc", dataset=dataset)
    # An intended FAIL_TO_PASS test that holds on the base already: it proves nothing.
    TestCase.objects.create(
        task=task, nodeid="tests/test_anchors.py::test_strip_accents", intended_role="FAIL_TO_PASS"
    )
    _validate(task, reruns=1)
    task.refresh_from_db()
    assert _roles(task)["tests/test_anchors.py::test_strip_accents"] == "invalid"
    finding = task.findings.get(kind=Finding.Kind.INVALID_TEST)
    assert "passes without the solution" in finding.message
    # The other tests still prove the task.
    assert task.status == Task.Status.NEEDS_REVIEW


def test_a_reference_that_fails_a_test_makes_the_task_invalid(repo_storage, sandbox_root, dataset):
    task = hand_made_task("marktext_toc", dataset=dataset)
    # A "solution" that leaves unique_slug unimplemented.
    parts = split_by_function(
        task.reference_patch,
        lambda path: gitstore.read_file(task.repository.git_dir, task.base_commit, path),
    )
    task.reference_patch = "".join(p.patch for p in parts if not p.name.endswith("unique_slug"))
    task.save()
    _validate(task, reruns=1)
    task.refresh_from_db()
    assert task.status == Task.Status.DRAFT
    assert task.validated_revision is None
    assert any("the reference solution fails" in r for r in task.validation["reasons"])
    assert task.findings.filter(kind=Finding.Kind.REFERENCE_FAILS).exists()


def test_a_reference_patch_that_does_not_apply_is_reported(repo_storage, sandbox_root, dataset):
    task = hand_made_task("marktext_toc", dataset=dataset)
    task.reference_patch = task.reference_patch.replace("raise NotImplementedError", "pass  # x")
    task.save()
    job = task_validation_enqueue(task=task, reruns=1)
    # Nothing could be proved: the job says so (failed), and the reasons are recorded.
    assert job_execute(job_id=job.pk) == "failed"
    task.refresh_from_db()
    assert task.status == Task.Status.DRAFT
    reason = " ".join(task.validation["reasons"])
    assert "does not apply" in reason
    assert "marktext/anchors.py" in reason


def test_validation_results_replace_the_previous_ones(repo_storage, sandbox_root, dataset):
    task = hand_made_task("marktext_toc", dataset=dataset)
    _validate(task, reruns=1)
    first = SpecDependency.objects.filter(task=task, evidence="observed").count()
    task.refresh_from_db()
    task.status = Task.Status.DRAFT
    task.save()
    _validate(task, reruns=1)
    assert SpecDependency.objects.filter(task=task, evidence="observed").count() == first
    assert task.findings.count() == 0


def test_a_sandbox_that_cannot_start_fails_the_job_and_returns_the_task_to_draft(
    repo_storage, sandbox_root, dataset, settings
):
    # An interpreter that does not exist: the sandbox cannot build the environment at all.
    settings.SPECLOOM_SANDBOX_PYTHON = "/nonexistent/python3"
    task = hand_made_task("ledger_allocation", dataset=dataset)
    job = task_validation_enqueue(task=task)
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    task.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert "/nonexistent/python3" in job.message + job.error
    assert task.status == Task.Status.DRAFT
    assert task.validation["verified"] is False
    assert "validation could not run" in task.validation["reasons"][0]
    assert "/nonexistent/python3" in task.validation["reasons"][0]
