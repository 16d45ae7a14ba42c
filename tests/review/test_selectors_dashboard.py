"""review.selectors.dashboard on real rows: counts, the user's leases, running jobs named by
what they work on (and hidden when the user may not know of it), throughput, curator cards."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from curation.models import Task
from review import services
from review.models import Adjudication
from review.selectors.dashboard import (
    JobItem,
    adjudication_queue,
    calibration_card,
    my_queue,
    open_adjudication_count,
    running_jobs,
    status_counts,
    throughput,
    validating_count,
)
from tests.factories import DatasetFactory, RepositoryFactory, TaskFactory, TrajectoryFactory
from workers.models import Job

pytestmark = pytest.mark.django_db


def _job(target, *, status=Job.Status.RUNNING, **params) -> Job:
    return Job.objects.create(
        kind="k",
        status=status,
        params=params,
        target_type=ContentType.objects.get_for_model(target),
        target_id=str(target.pk),
    )


def test_status_counts_per_visible_dataset(dataset, alice):
    TaskFactory(dataset=dataset)
    TaskFactory(dataset=dataset, status=Task.Status.DRAFT)
    TaskFactory()  # another dataset
    empty = DatasetFactory(name="empty")
    empty.members.add(alice)
    rows = {r["dataset"]: r for r in status_counts(user=alice)}
    assert set(rows) == {"core", "empty"}
    counts = dict(rows["core"]["counts"])
    assert rows["core"]["total"] == 2 and counts["needs_review"] == 1 and counts["draft"] == 1
    assert rows["empty"]["total"] == 0


def test_my_queue_lists_my_live_leases_and_what_waits(dataset, alice):
    held = TaskFactory(dataset=dataset)
    TaskFactory(dataset=dataset)
    TaskFactory(dataset=dataset, status=Task.Status.DRAFT)
    services.review_claim(task=held, user=alice)
    mine = my_queue(user=alice)
    assert [lease.task for lease in mine["leases"]] == [held]
    assert mine["waiting"] == 1 and mine["reviewed_this_week"] == 0


def test_running_jobs_are_named_by_what_they_work_on(dataset, alice, bob):
    task = TaskFactory(dataset=dataset)
    trajectory = TrajectoryFactory(task=task, model_name="m1")
    hidden_task = TaskFactory()
    synthesis_in = RepositoryFactory(name="into-core")
    synthesis_elsewhere = RepositoryFactory(name="elsewhere")
    jobs = {
        "task": _job(task),
        "trajectory": _job(trajectory),
        "hidden": _job(hidden_task),
        "into": _job(synthesis_in, dataset_id=dataset.pk),
        "elsewhere": _job(synthesis_elsewhere),
        "dataset": _job(dataset),
        "done": _job(task, status=Job.Status.SUCCEEDED),
    }
    shown = running_jobs(user=alice, limit=20)
    assert all(isinstance(item, JobItem) for item in shown)
    by_job = {item.job.pk: item for item in shown}
    assert set(by_job) == {jobs["task"].pk, jobs["trajectory"].pk, jobs["into"].pk}
    assert (by_job[jobs["task"].pk].subject, by_job[jobs["task"].pk].subject_url) == (
        task.instance_id,
        reverse("review-task", args=[task.pk]),
    )
    assert by_job[jobs["trajectory"].pk].subject == f"m1 on {task.instance_id}"
    assert by_job[jobs["trajectory"].pk].subject_url == reverse(
        "review-trajectory", args=[trajectory.pk]
    )
    assert by_job[jobs["into"].pk].subject == "into-core → core"
    assert by_job[jobs["into"].pk].subject_url == ""
    curator = {item.job.pk: item.subject for item in running_jobs(user=bob, limit=20)}
    assert curator[jobs["elsewhere"].pk] == "elsewhere"
    assert curator[jobs["dataset"].pk] == "core"
    assert curator[jobs["hidden"].pk] == hidden_task.instance_id
    assert jobs["done"].pk not in curator
    assert len(running_jobs(user=bob, limit=2)) == 2


def test_validating_count_and_throughput(dataset, alice):
    TaskFactory(dataset=dataset, status=Task.Status.VALIDATING)
    TaskFactory(status=Task.Status.VALIDATING)
    assert validating_count(user=alice) == 1
    task = TaskFactory(dataset=dataset)
    services.review_claim(task=task, user=alice)
    services.review_submit(
        task=task,
        user=alice,
        rubric=services.RubricInput(
            decision="reject",
            spec_clarity=1,
            test_validity=1,
            interdependency=1,
            difficulty="<15m",
            comment="no",
        ),
        expected_revision=task.revision,
    )
    figures = throughput(user=alice, days=7)
    assert len(figures["series"]) == 7 and figures["series"][-1] == 1 and figures["total"] == 1
    assert figures["decisions"] == {"reject": 1} and "<svg" in str(figures["svg"])
    assert my_queue(user=alice)["reviewed_this_week"] == 1


def test_curator_cards_are_for_curators(dataset, alice, bob, carol):
    assert calibration_card(user=alice) is None
    card = calibration_card(user=bob, dataset=dataset)
    assert isinstance(card, list) and len(card) == 1
    task = TaskFactory(dataset=dataset)
    Adjudication.objects.create(task=task, task_revision=1, reason="split")
    assert open_adjudication_count() == 1
    assert [a.task for a in adjudication_queue(user=bob)] == [task]
    assert adjudication_queue(user=carol) == []
