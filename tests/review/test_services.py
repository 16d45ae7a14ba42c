"""Leases, decisions, consensus and adjudication: the rules that must hold under concurrency."""

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from curation.models import Task
from review import services
from review.models import Adjudication, Review, ReviewAssignment
from tests.conftest import requires_postgres
from tests.factories import DatasetFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


def rubric(decision="approve", **kw):
    values = dict(
        decision=decision,
        spec_clarity=0,
        test_validity=0,
        interdependency=1,
        difficulty="<15m",
        comment="ok",
    )
    values.update(kw)
    return services.RubricInput(**values)


@pytest.fixture
def reviewers(dataset):
    people = [UserFactory(username=f"rev{i}", roles=["reviewer"]) for i in range(3)]
    dataset.members.add(*people)
    return people


def validated_task(dataset, **kw):
    task = TaskFactory(dataset=dataset, **kw)
    task.validated_revision = task.revision
    task.save()
    return task


def test_it_grants_no_more_slots_than_the_policy_asks(dataset, reviewers):
    dataset.reviews_required = 2
    dataset.save()
    task = validated_task(dataset)
    services.review_claim(task=task, user=reviewers[0])
    services.review_claim(task=task, user=reviewers[1])
    with pytest.raises(services.NoSlotLeft):
        services.review_claim(task=task, user=reviewers[2])
    task.refresh_from_db()
    assert task.review_slots_taken == 2


def test_claiming_twice_returns_the_same_lease_and_takes_one_slot(dataset, alice):
    task = validated_task(dataset)
    first = services.review_claim(task=task, user=alice)
    second = services.review_claim(task=task, user=alice)
    assert first.pk == second.pk
    task.refresh_from_db()
    assert task.review_slots_taken == 1


def test_it_does_not_grant_a_task_that_is_not_in_review(dataset, alice):
    task = validated_task(dataset, status=Task.Status.DRAFT)
    with pytest.raises(services.NoSlotLeft):
        services.review_claim(task=task, user=alice)


def test_claim_next_takes_the_oldest_free_task_and_resumes_a_held_lease(dataset, alice, reviewers):
    first = validated_task(dataset)
    second = validated_task(dataset)
    services.review_claim(task=first, user=reviewers[0])  # its only slot is taken
    lease = services.review_claim_next(user=alice)
    assert lease.task_id == second.pk
    assert services.review_claim_next(user=alice).pk == lease.pk
    assert services.review_claim_next(user=reviewers[1]) is None


def test_claim_next_sees_only_visible_datasets(alice):
    other = DatasetFactory(name="elsewhere")
    TaskFactory(dataset=other)
    assert services.review_claim_next(user=alice) is None


def test_an_expired_lease_gives_its_slot_back(dataset, alice, reviewers):
    task = validated_task(dataset)
    lease = services.review_claim(task=task, user=alice)
    ReviewAssignment.objects.filter(pk=lease.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert services.review_leases_expire() == 1
    lease.refresh_from_db()
    task.refresh_from_db()
    assert lease.status == "expired"
    assert task.review_slots_taken == 0
    # The slot is free again, and expiring twice does nothing.
    assert services.review_leases_expire() == 0
    services.review_claim(task=task, user=reviewers[0])


def test_claim_expires_stale_leases_lazily(dataset, alice, reviewers):
    task = validated_task(dataset)
    lease = services.review_claim(task=task, user=alice)
    ReviewAssignment.objects.filter(pk=lease.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    services.review_claim(task=task, user=reviewers[0])
    task.refresh_from_db()
    assert task.review_slots_taken == 1


def test_a_heartbeat_renews_the_lease_and_fails_once_it_is_lost(dataset, alice):
    task = validated_task(dataset)
    lease = services.review_claim(task=task, user=alice)
    ReviewAssignment.objects.filter(pk=lease.pk).update(
        expires_at=timezone.now() + timedelta(seconds=5)
    )
    assert services.review_heartbeat(assignment=lease, user=alice)
    lease.refresh_from_db()
    assert lease.expires_at > timezone.now() + timedelta(seconds=60)
    assert services.review_release(assignment=lease, user=alice)
    assert not services.review_heartbeat(assignment=lease, user=alice)
    task.refresh_from_db()
    assert task.review_slots_taken == 0


def test_a_reviewer_who_let_a_lease_lapse_can_claim_again(dataset, alice):
    task = validated_task(dataset)
    lease = services.review_claim(task=task, user=alice)
    services.review_release(assignment=lease, user=alice)
    again = services.review_claim(task=task, user=alice)
    assert again.pk == lease.pk and again.status == "active"
    assert ReviewAssignment.objects.filter(task=task, reviewer=alice).count() == 1


def test_one_review_approves_under_a_policy_of_one(dataset, alice):
    task = validated_task(dataset)
    services.review_claim(task=task, user=alice)
    outcome = services.review_submit(task=task, user=alice, rubric=rubric(), expected_revision=1)
    task.refresh_from_db()
    assert outcome.final_status == task.status == Task.Status.APPROVED
    review = Review.objects.get(task=task)
    assert review.assignment.status == "completed"
    assert review.seconds_spent is not None and review.seconds_spent >= 0


def test_approve_waits_for_the_latest_revision_to_validate(dataset, alice):
    task = TaskFactory(dataset=dataset)  # never validated
    services.review_claim(task=task, user=alice)
    with pytest.raises(services.NotValidated):
        services.review_submit(task=task, user=alice, rubric=rubric(), expected_revision=1)
    outcome = services.review_submit(
        task=task, user=alice, rubric=rubric("reject"), expected_revision=1
    )
    assert outcome.final_status == Task.Status.REJECTED


def test_a_decision_on_a_stale_revision_is_refused(dataset, alice):
    task = validated_task(dataset)
    services.review_claim(task=task, user=alice)
    with pytest.raises(services.ReviewStale):
        services.review_submit(task=task, user=alice, rubric=rubric(), expected_revision=0)


def test_a_decision_without_a_lease_is_refused(dataset, alice):
    task = validated_task(dataset)
    with pytest.raises(services.LeaseLost):
        services.review_submit(task=task, user=alice, rubric=rubric(), expected_revision=1)


def test_a_bad_rubric_is_refused(dataset, alice):
    task = validated_task(dataset)
    services.review_claim(task=task, user=alice)
    with pytest.raises(services.ReviewError):
        services.review_submit(
            task=task, user=alice, rubric=rubric(spec_clarity=7), expected_revision=1
        )
    with pytest.raises(services.ReviewError):
        services.review_submit(
            task=task, user=alice, rubric=rubric(difficulty="1 week"), expected_revision=1
        )


@pytest.mark.parametrize(
    ("rule", "decisions", "final"),
    [
        ("unanimous", ["approve", "approve"], "approved"),
        ("unanimous", ["approve", "reject"], None),
        ("majority", ["approve", "reject", "reject"], "rejected"),
        ("majority", ["approve", "request_changes"], None),
        ("majority", ["request_changes", "request_changes", "approve"], "changes_requested"),
    ],
)
def test_the_dataset_rule_sets_the_final_status(dataset, reviewers, rule, decisions, final):
    dataset.reviews_required = len(decisions)
    dataset.consensus = rule
    dataset.save()
    task = validated_task(dataset)
    outcome = None
    for person, decision in zip(reviewers, decisions, strict=False):
        services.review_claim(task=task, user=person)
        outcome = services.review_submit(
            task=task, user=person, rubric=rubric(decision), expected_revision=1
        )
    task.refresh_from_db()
    if final:
        assert outcome.final_status == task.status == final
        assert not Adjudication.objects.filter(task=task).exists()
    else:
        assert task.status == Task.Status.NEEDS_REVIEW
        adjudication = Adjudication.objects.get(task=task)
        assert outcome.adjudication == adjudication
        assert sorted(adjudication.decisions.values()) == sorted(decisions)


def test_waiting_for_more_reviews_keeps_the_task_in_review(dataset, reviewers):
    dataset.reviews_required = 2
    dataset.save()
    task = validated_task(dataset)
    services.review_claim(task=task, user=reviewers[0])
    outcome = services.review_submit(
        task=task, user=reviewers[0], rubric=rubric(), expected_revision=1
    )
    assert outcome.final_status is None and outcome.waiting_for == 1
    assert "1 more" in outcome.message


def test_a_curator_adjudicates_and_the_decision_is_final(dataset, reviewers, bob):
    dataset.reviews_required = 2
    dataset.save()
    task = validated_task(dataset)
    for person, decision in zip(reviewers, ["approve", "reject"], strict=False):
        services.review_claim(task=task, user=person)
        services.review_submit(task=task, user=person, rubric=rubric(decision), expected_revision=1)
    adjudication = Adjudication.objects.get(task=task)
    with pytest.raises(services.ReviewError):
        services.review_adjudicate(adjudication=adjudication, user=reviewers[2], rubric=rubric())
    outcome = services.review_adjudicate(
        adjudication=adjudication, user=bob, rubric=rubric("reject")
    )
    task.refresh_from_db()
    assert task.status == outcome.final_status == Task.Status.REJECTED
    adjudication.refresh_from_db()
    assert adjudication.resolved_by == bob and adjudication.review.is_adjudication
    with pytest.raises(services.NotAdjudicable):
        services.review_adjudicate(adjudication=adjudication, user=bob, rubric=rubric())


def test_approval_queues_the_dataset_webhook_with_the_decision(dataset, alice):
    from workers.models import Job

    dataset.webhook_url = "http://127.0.0.1:9/hook"
    dataset.save()
    task = validated_task(dataset)
    services.review_claim(task=task, user=alice)
    services.review_submit(task=task, user=alice, rubric=rubric("reject"), expected_revision=1)
    assert not Job.objects.exclude(kind="validate_task").exists()
    other = validated_task(dataset)
    services.review_claim(task=other, user=alice)
    services.review_submit(task=other, user=alice, rubric=rubric(), expected_revision=1)
    job = Job.objects.get()
    assert job.target_id == str(other.pk) and "approved" in str(job.params)


def test_comments_anchor_to_specs_tests_and_patch_lines(dataset, alice):
    from tests.review.scenario import rich_task

    task = rich_task(dataset=dataset)
    spec_comment = services.comment_create(
        task=task, user=alice, body="ambiguous", anchor="spec", spec_key="S2"
    )
    test = task.tests.first()
    test_comment = services.comment_create(
        task=task, user=alice, body="weak", anchor="test", test_id=test.pk
    )
    line = services.comment_create(
        task=task,
        user=alice,
        body="off by one",
        anchor="patch_line",
        patch="reference",
        file_path="marktext/anchors.py",
        line=70,
    )
    assert spec_comment.spec.key == "S2" and test_comment.test == test and line.line == 70
    for bad in (
        dict(anchor="spec", spec_key="S99"),
        dict(anchor="test", test_id=999999),
        dict(anchor="patch_line", patch="reference", file_path="", line=3),
        dict(anchor="nonsense"),
    ):
        with pytest.raises(services.ReviewError):
            services.comment_create(task=task, user=alice, body="x", **bad)
    with pytest.raises(services.ReviewError):
        services.comment_create(task=task, user=alice, body="   ")


@requires_postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_claims_never_exceed_the_policy_on_postgres():
    dataset = DatasetFactory(name="race", reviews_required=2)
    people = [UserFactory(username=f"racer{i}", roles=["reviewer"]) for i in range(8)]
    dataset.members.add(*people)
    task = validated_task(dataset)
    barrier = threading.Barrier(len(people))
    won, lost = [], []

    def claim(person):
        try:
            barrier.wait()
            services.review_claim(task=task, user=person)
            won.append(person.pk)
        except services.NoSlotLeft:
            lost.append(person.pk)
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=(p,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    task.refresh_from_db()
    assert len(won) == 2 and len(lost) == 6
    assert task.review_slots_taken == 2
    assert ReviewAssignment.objects.filter(task=task, status="active").count() == 2
