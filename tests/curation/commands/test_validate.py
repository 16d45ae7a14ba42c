import pytest
from django.core.management import CommandError, call_command

from curation.models import Task
from tests.curation.tasks_fixtures import hand_made_task
from workers.models import Job

pytestmark = pytest.mark.django_db


def test_it_queues_validation_of_one_task(repo_storage, dataset, capsys):
    task = hand_made_task("marktext_toc", dataset=dataset)
    call_command("validate", "--task", task.instance_id, "--reruns", "2")
    job = Job.objects.get(kind="validate_task")
    assert job.params == {"task_id": task.pk, "revision": 1, "reruns": 2}
    assert f"Queued 1 validation job(s): {job.pk}" in capsys.readouterr().out


def test_it_queues_every_draft_of_a_repository(repo_storage, dataset):
    first = hand_made_task("marktext_toc", dataset=dataset)
    second = hand_made_task("marktext_toc", dataset=dataset)
    Task.objects.filter(pk__in=[first.pk, second.pk]).update(status="draft")
    call_command("validate", "--repo", "marktext")
    assert Job.objects.filter(kind="validate_task").count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--task", "specloom__nope-1"], "no task 'specloom__nope-1'"),
        (["--repo", "nope"], "no repository named 'nope'"),
        (["--task", "1", "--reruns", "0"], "--reruns must be at least 1"),
    ],
    ids=["unknown task", "unknown repo", "zero reruns"],
)
def test_bad_input_gets_a_clear_error(db, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("validate", *args)


def test_wait_draws_a_progress_bar_until_the_job_ends(repo_storage, dataset, capsys):
    from curation.management.commands._progress import follow_jobs

    job = Job.objects.create(kind="echo", status="succeeded", progress=100, message="done")
    finished = follow_jobs(__import__("sys").stdout, [job.pk], poll=0.01)
    assert finished[0].status == "succeeded"
    assert "[##############################] 100% succeeded: done" in capsys.readouterr().out
