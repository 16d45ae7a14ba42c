"""Synthesis runs end to end: the engine, the stored tasks, their validation, the report."""

import pytest
from django.core.management import CommandError, call_command

from curation.models import Task
from curation.services.synthesis import (
    SynthesisInputError,
    format_report,
    synthesis_enqueue,
)
from tests.curation.tasks_fixtures import sample_repository
from workers.models import Job
from workers.services import job_execute

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def _run(job: Job) -> Job:
    assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    job.refresh_from_db()
    return job


def test_it_turns_a_sample_repository_into_verified_tasks(repo_storage, sandbox_root, dataset):
    repository = sample_repository("marktext")
    job = _run(synthesis_enqueue(repository=repository, dataset=dataset, count=3, seed=7))
    report = job.result["report"]
    print(format_report(report))

    tasks = list(Task.objects.filter(synthesis_job=job))
    assert len(tasks) == report["tasks_produced"] == 3
    assert report["verified"] >= 2
    for task in tasks:
        assert task.origin == "procedural"
        assert task.instance_id.startswith("specloom__marktext-")
        assert task.base_commit != repository.default_commit
        assert task.specs.count() >= 2
    verified = [t for t in tasks if t.validation.get("verified")]
    for task in verified:
        assert task.status == "needs_review"
        assert task.tests.filter(role="FAIL_TO_PASS").exists()
        assert not task.tests.filter(role="flaky").exists()
        # The problem statement never quotes the removed code.
        removed = [
            line[1:].strip()
            for line in task.reference_patch.splitlines()
            if line.startswith("+") and not line.startswith("+++") and len(line.strip()) > 25
        ]
        assert not any(line in task.problem_statement for line in removed)
    assert report["dependency_edges"]["declared"] > 0
    assert report["dependency_edges"]["observed"] > 0
    assert report["seconds_per_task"] < 60
    assert job.progress == 100


def test_the_same_seed_gives_the_same_tasks_and_reuses_the_coverage_map(
    repo_storage, sandbox_root, dataset
):
    repository = sample_repository("ledger")
    first = _run(synthesis_enqueue(repository=repository, dataset=dataset, count=2, seed=3))
    second = _run(synthesis_enqueue(repository=repository, dataset=dataset, count=2, seed=3))
    titles = [
        sorted(Task.objects.filter(synthesis_job=job).values_list("title", "base_commit"))
        for job in (first, second)
    ]
    assert titles[0] == titles[1]
    assert second.result["report"]["coverage_cache_hits"] == 1


def test_a_repository_whose_tests_do_not_run_gets_a_clear_report(
    repo_storage, sandbox_root, dataset, tmp_path
):
    from curation.services.repositories import repository_import

    folder = tmp_path / "broken"
    (folder / "pkg").mkdir(parents=True)
    (folder / "pkg" / "__init__.py").write_text("def f():\n    return 1\n")
    (folder / "tests").mkdir()
    (folder / "tests" / "test_f.py").write_text(
        "from pkg import f\n\ndef test_f():\n    assert f() == 2\n"
    )
    (folder / "pyproject.toml").write_text("[project]\nname = 'pkg'\nversion = '0'\n")
    repository = repository_import(source=str(folder))
    job = synthesis_enqueue(repository=repository, dataset=dataset, count=2)
    # Nothing produced is a failed job (not "succeeded"), with the report kept.
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.message.startswith("failed: 0 task(s)")
    report = job.result["report"]
    assert report["tasks_produced"] == 0
    assert report["engine_status"] == "unusable"
    assert "none of the 1 tests passes" in report["engine_reason"]
    assert "unusable" in job.result["message"]


def test_bad_parameters_are_refused(repo_storage, dataset):
    repository = sample_repository("marktext")
    with pytest.raises(SynthesisInputError, match="unknown engine 'magic'"):
        synthesis_enqueue(repository=repository, dataset=dataset, engine="magic")
    with pytest.raises(SynthesisInputError, match="count must be at least 1"):
        synthesis_enqueue(repository=repository, dataset=dataset, count=0)


def test_the_command_queues_a_run(repo_storage, dataset, capsys):
    sample_repository("marktext")
    call_command("synthesize", "--repo", "marktext", "--count", "4", "--seed", "2")
    job = Job.objects.get(kind="synthesize")
    assert job.queue == "synthesis"
    assert job.params["count"] == 4
    assert "Queued synthesis job" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no repository named 'nope'"):
        call_command("synthesize", "--repo", "nope")
