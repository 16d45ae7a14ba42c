import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from curation.models import Dataset, Repository, Task, Trajectory
from review.models import Adjudication, Review
from tests.curation.tasks_fixtures import hand_made_task
from workers.models import Job
from workers.services import job_enqueue, job_execute

pytestmark = pytest.mark.django_db


def test_it_prepares_the_demo_once(repo_storage, capsys, monkeypatch):
    monkeypatch.setenv("SPECLOOM_ADMIN_PASSWORD", "a-demo-password")
    call_command("demo_setup")
    out = capsys.readouterr().out
    assert "Imported sample repository ledger" in out
    assert "Created admin 'admin' with password (from SPECLOOM_ADMIN_PASSWORD)" in out
    assert "Created reviewer 'dave' with password" in out
    assert set(Repository.objects.values_list("name", flat=True)) == {"ledger", "marktext"}
    assert get_user_model().objects.get(username="admin").check_password("a-demo-password")
    synthesis = list(Job.objects.filter(kind="synthesize").values_list("pk", flat=True))
    assert len(synthesis) == 2
    demo = Dataset.objects.get(name="demo")
    assert demo.reviews_required == 2
    assert set(demo.members.values_list("username", flat=True)) == {"alice", "bob", "dave"}
    seed = Job.objects.get(kind="demo_seed")
    assert sorted(seed.params["after"]) == sorted(synthesis)
    assert seed.params["reviewers"] == ["alice", "dave"]

    call_command("demo_setup")
    assert "Created" not in capsys.readouterr().out
    assert Job.objects.filter(kind="synthesize").count() == 2
    assert Job.objects.filter(kind="demo_seed").count() == 1


def _validated(task: Task) -> Task:
    """What a validation of the hand-made task finds (tests/curation/services/test_validation),
    without running it three times here: its tests keep their intended roles, one is flaky."""
    for test in task.tests.all():
        test.role = "flaky" if "flaky_on_purpose" in test.nodeid else test.intended_role
        test.save(update_fields=["role"])
    Task.objects.filter(pk=task.pk).update(
        status="needs_review", validated_revision=task.revision, validation={"verified": True}
    )
    return task


@pytest.mark.slow
def test_the_seeded_data_is_real_trajectories_evaluations_and_reviews(
    repo_storage, sandbox_root, alice, settings
):
    users = get_user_model()
    dave = users.objects.create_user(username="dave", password="x")
    dave.groups.add(*alice.groups.all())
    dataset = Dataset.objects.create(name="demo", reviews_required=2)
    dataset.members.add(alice, dave)
    tasks = [_validated(hand_made_task("ledger_allocation", dataset=dataset)) for _ in range(3)]

    seed = job_enqueue(
        kind="demo_seed",
        target=dataset,
        params={"dataset_id": dataset.pk, "after": [], "reviewers": ["alice", "dave"]},
    )
    assert job_execute(job_id=seed.pk) == "succeeded", Job.objects.get(pk=seed.pk).error
    seed.refresh_from_db()
    assert seed.message.startswith("9 trajectories imported (0 already there, 0 refused)")
    formats = dict(Trajectory.objects.values_list("model_name", "source_format").distinct())
    assert formats == {
        "demo/gpt-4.1-gold": "predictions",
        "demo/qwen3-coder-30b": "swe-agent",
        "demo/llama-3.3-70b": "openhands-eval",
    }
    for job in Job.objects.filter(kind="evaluate_trajectory"):
        assert job_execute(job_id=job.pk) == "succeeded", Job.objects.get(pk=job.pk).error
    resolved = {
        t.model_name: t.evaluation.resolved for t in Trajectory.objects.filter(task=tasks[0])
    }
    assert resolved["demo/gpt-4.1-gold"] == "full"
    # Each half of a coupled solution fails the FAIL_TO_PASS tests that need both halves.
    assert resolved["demo/qwen3-coder-30b"] != "full"
    assert resolved["demo/llama-3.3-70b"] != "full"
    patches = {t.model_name: t.final_patch for t in Trajectory.objects.filter(task=tasks[0])}
    assert len(set(patches.values())) == 3

    reviews = Job.objects.get(kind="demo_reviews")
    assert job_execute(job_id=reviews.pk) == "succeeded", Job.objects.get(pk=reviews.pk).error
    assert Review.objects.count() == 6
    first, second, third = (Task.objects.get(pk=t.pk) for t in tasks)
    assert first.status == "approved"
    assert second.status == "approved"
    # The reviewers disagree on the third: a curator settles it.
    assert Adjudication.objects.get().task == third
