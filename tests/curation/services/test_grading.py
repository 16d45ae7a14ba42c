"""Grading patches in the real sandbox: per test and per spec, a group of patches of one task in
one job, the stored result for a repeat, pass rates per model from grades, the command line."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from curation.models import Grade, Task, TestCase
from curation.selectors.evaluations import pass_rates_by_kind
from curation.selectors.grades import grade_as_dict
from curation.services.grading import GRADE_KIND, GradeRequest, grades_submit
from tests.curation import trajectory_fixtures as fx
from tests.curation.tasks_fixtures import hand_made_task
from workers.models import Job
from workers.services import job_execute

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

BROKEN = "diff --git a/src/ledger/nothing.py b/src/ledger/nothing.py\n--- a/src/ledger/nothing.py\n"
BROKEN += "+++ b/src/ledger/nothing.py\n@@ -1,2 +1,2 @@\n-not there\n+at all\n"


@pytest.fixture
def ledger_task(repo_storage, sandbox_root, dataset):
    task = hand_made_task("ledger_allocation", dataset=dataset)
    # Validation would find the deliberately flaky test flaky: it is not graded.
    TestCase.objects.filter(task=task, nodeid__endswith="_flaky_on_purpose").update(
        role=TestCase.Role.FLAKY
    )
    return task


def _run_jobs() -> list[Job]:
    jobs = list(Job.objects.filter(kind=GRADE_KIND, status=Job.Status.QUEUED).order_by("id"))
    for job in jobs:
        assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    return jobs


def test_a_group_of_patches_is_one_job_and_each_gets_its_tests_and_specs(ledger_task, settings):
    settings.SPECLOOM_GRADE_THREADS = 2
    patches = {
        "reference": ledger_task.reference_patch,
        "empty": "",
        "partial": fx.ledger_patch("partial"),
        "broken": BROKEN,
    }
    submitted = grades_submit(
        requests=[
            GradeRequest(task=ledger_task, patch=patch, model=name)
            for name, patch in patches.items()
        ],
        limits=False,
    )
    assert all(s.created for s in submitted)
    assert len({s.grade.job_id for s in submitted}) == 1
    assert len(_run_jobs()) == 1
    grades = {
        name: Grade.objects.get(pk=s.grade.pk) for name, s in zip(patches, submitted, strict=True)
    }
    assert {name: g.status for name, g in grades.items()} == dict.fromkeys(patches, "done")

    reference = grade_as_dict(grades["reference"])
    assert (reference["resolved"], reference["resolution"], reference["patch_applied"]) == (
        True,
        "full",
        True,
    )
    assert set(reference["tests"].values()) == {"passed"}
    assert reference["specs"] == {"S1": True, "S2": True, "S3": True, "S4": True}
    assert reference["timings"]["run_seconds"] > 0

    empty = grade_as_dict(grades["empty"])
    assert (empty["resolved"], empty["resolution"]) == (False, "none")
    assert not any(empty["specs"].values())

    partial = grade_as_dict(grades["partial"])
    assert partial["resolution"] == "partial"
    assert partial["specs"] == {"S1": True, "S2": True, "S3": False, "S4": True}
    assert partial["spec_kinds"]["error-handling"] == {"satisfied": 1, "total": 2}

    broken = grade_as_dict(grades["broken"])
    assert broken["patch_applied"] is False and broken["resolved"] is False
    assert "does not apply" in broken["patch_error"]

    # Pass rates per model and spec kind come from grades as they come from trajectories.
    rates = {(r["model"], r["kind"]): r["rate"] for r in pass_rates_by_kind(task=ledger_task)}
    assert rates[("reference", "functional")] == 1.0
    assert rates[("partial", "error-handling")] == 0.5
    assert rates[("empty", "interface")] == 0.0

    # A repeat is the stored grade: nothing queued, nothing run again.
    again = grades_submit(
        requests=[GradeRequest(task=ledger_task, patch=patches["reference"], model="other")],
        limits=False,
    )
    assert again[0].grade.pk == grades["reference"].pk and not again[0].created
    assert not Job.objects.filter(kind=GRADE_KIND, status=Job.Status.QUEUED).exists()
    assert grade_as_dict(Grade.objects.get(pk=grades["reference"].pk))["models"] == [
        "reference",
        "other",
    ]


def test_a_grade_of_a_revision_the_task_left_fails_and_asking_again_grades_the_new_one(
    ledger_task,
):
    (submitted,) = grades_submit(
        requests=[GradeRequest(task=ledger_task, patch=ledger_task.reference_patch)],
        limits=False,
    )
    Task.objects.filter(pk=ledger_task.pk).update(revision=2)
    _run_jobs()
    stale = Grade.objects.get(pk=submitted.grade.pk)
    assert stale.status == "failed" and "revision 2" in stale.error
    ledger_task.refresh_from_db()
    (fresh,) = grades_submit(
        requests=[GradeRequest(task=ledger_task, patch=ledger_task.reference_patch)],
        limits=False,
    )
    assert fresh.created and fresh.grade.task_revision == 2


def test_the_command_prints_what_the_api_answers(ledger_task, tmp_path, bob, client):
    patch = tmp_path / "reference.diff"
    patch.write_text(ledger_task.reference_patch)
    out = io.StringIO()
    call_command("grade", ledger_task.instance_id, str(patch), "--model", "cli", stdout=out)
    printed = json.loads(out.getvalue())
    assert printed["resolved"] is True and printed["models"] == ["cli"]
    client.force_login(bob)
    answered = client.get(f"/api/v1/grades/{printed['id']}").json()
    assert answered == printed


def test_an_environment_that_cannot_be_built_fails_the_grades_and_a_repeat_tries_again(
    ledger_task,
):
    ledger_task.repository.setup_command = "pip install . && exit 3"
    ledger_task.repository.save(update_fields=["setup_command"])
    (submitted,) = grades_submit(
        requests=[GradeRequest(task=ledger_task, patch=ledger_task.reference_patch)],
        limits=False,
    )
    _run_jobs()
    failed = Grade.objects.get(pk=submitted.grade.pk)
    assert failed.status == "failed"
    assert "environment cannot be built" in failed.error
    (again,) = grades_submit(
        requests=[GradeRequest(task=ledger_task, patch=ledger_task.reference_patch)],
        limits=False,
    )
    assert again.grade.pk == failed.pk and again.grade.status == "queued"
    assert again.grade.job_id not in (None, failed.job_id)
