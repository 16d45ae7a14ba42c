"""Synthesis outcomes are honest: a shortfall is stated, nothing verified is a failure with a
fix, the command exits non-zero, and no crash or retry leaves tasks behind."""

import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from curation.models import Task
from curation.services.repositories import repository_import
from curation.services.synthesis import no_task_reason, synthesis_enqueue
from tests.curation.tasks_fixtures import hand_made_task
from workers.models import Job
from workers.services import job_execute, job_reap

REPOS = Path(__file__).resolve().parents[2] / "fixtures" / "repos"


@pytest.mark.django_db
@pytest.mark.slow
def test_a_shortfall_is_stated_in_the_job(repo_storage, sandbox_root, dataset):
    repository = repository_import(source=str(REPOS / "one_cluster"), name="one-cluster")
    job = synthesis_enqueue(repository=repository, dataset=dataset, count=6, seed=1)
    outcome = job_execute(job_id=job.pk)
    job.refresh_from_db()
    report = job.result["report"]
    assert report["verified"] < 6
    if outcome == "succeeded":
        assert job.message.startswith(f"{report['verified']} of 6 asked verified")
        assert f"short by {6 - report['verified']}" in job.message
        assert "cluster(s) of coupled functions" in job.message
    else:  # none verified: a failure, with its cause and a fix
        assert job.message.startswith("0 of 6 asked verified") and "Fix:" in job.message


@pytest.mark.django_db(transaction=True)
@pytest.mark.slow
def test_the_command_exits_non_zero_when_nothing_verifies(repo_storage, sandbox_root, tmp_path):
    folder = tmp_path / "failing"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_f.py").write_text(
        "from pkg import f\n\ndef test_f():\n    assert f() == 2\n"
    )
    (folder / "pyproject.toml").write_text("[project]\nname = 'pkg'\nversion = '0'\n")
    repository_import(source=str(folder), name="failing")

    def worker() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            job = Job.objects.filter(kind="synthesize", status="queued").first()
            if job is not None:
                job_execute(job_id=job.pk)
                return
            time.sleep(0.1)

    thread = threading.Thread(target=worker)
    thread.start()
    try:
        with pytest.raises(CommandError, match=r"0 of 2 asked.*Fix:"):
            call_command("synthesize", "--repo", "failing", "--count", "2", "--wait")
    finally:
        thread.join()


@pytest.mark.django_db
def test_a_worker_lost_for_good_leaves_no_task_validating(repo_storage, dataset, settings):
    task = hand_made_task("ledger_allocation", dataset=dataset)
    job = synthesis_enqueue(repository=task.repository, dataset=dataset, count=2)
    Task.objects.filter(pk=task.pk).update(synthesis_job=job, status=Task.Status.VALIDATING)
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING,
        attempts=job.max_attempts,
        worker="gone",
        lease_expires_at=timezone.now() - timedelta(seconds=5),
    )
    assert job_reap()["failed"] == 1
    assert not Task.objects.filter(pk=task.pk).exists()


@pytest.mark.django_db
def test_a_validation_whose_worker_is_lost_for_good_returns_the_task_to_draft(
    repo_storage, dataset
):
    from curation.services.validation import task_validation_enqueue

    task = hand_made_task("ledger_allocation", dataset=dataset)
    job = task_validation_enqueue(task=task)
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.RUNNING,
        attempts=job.max_attempts,
        worker="gone",
        lease_expires_at=timezone.now() - timedelta(seconds=5),
    )
    job_reap()
    task.refresh_from_db()
    assert task.status == Task.Status.DRAFT
    assert "worker running the validation was lost" in task.validation["reasons"][0]


def test_the_cause_of_a_shortfall_comes_with_a_fix():
    cause, fix = no_task_reason(
        {
            "engine_status": "no tasks",
            "engine_reason": "every cluster was rejected (most often: stub runs at import)",
        }
    )
    assert "stub runs at import" in cause and "another seed" in fix
    cause, fix = no_task_reason(
        {"rejected_by_reason": {"validation: reference fails tests": 3}, "rejected_total": 3}
    )
    assert cause == "3 rejected (most often 3x: validation: reference fails tests)"
    assert "flaky" in fix


@pytest.mark.django_db
@pytest.mark.slow
def test_a_suite_that_mostly_cannot_collect_is_named_as_the_cause(
    repo_storage, sandbox_root, dataset, tmp_path
):
    # As an sdist that leaves out tests/__init__.py, which the test modules import helpers from:
    # only one test file collects; the job names that, not just what the engine met next.
    folder = tmp_path / "helpers_missing"
    (folder / "calc").mkdir(parents=True)
    (folder / "calc" / "__init__.py").write_text(
        "def double(x):\n    return twice(x)\n\n\ndef twice(x):\n    return x + x\n"
    )
    (folder / "tests").mkdir()
    for name in ("a", "b", "c"):
        (folder / "tests" / f"test_{name}.py").write_text(
            "from tests import OrderedDict\nfrom calc import double\n\n"
            f"def test_{name}():\n    assert double(2) == 4\n"
        )
    (folder / "tests" / "test_ok.py").write_text(
        "from calc import double\n\ndef test_ok():\n    assert double(1) == 2\n"
    )
    (folder / "pyproject.toml").write_text("[project]\nname = 'calc'\nversion = '0'\n")
    repository = repository_import(source=str(folder), name="helpers-missing")
    job = synthesis_enqueue(repository=repository, dataset=dataset, count=2, seed=1)
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.message.startswith("0 of 2 asked verified")
    assert "3 of 4 test files fail to collect (first: tests/test_a.py: ImportError" in job.message
    assert "Fix: most of its suite does not run in this environment" in job.message
