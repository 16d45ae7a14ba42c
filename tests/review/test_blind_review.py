"""The blind review sample: a reproducible share of a dataset's tasks whose findings stay hidden
from a reviewer until they decide (panel, trajectory page, queue count, API), and decisions that
record whether they were blind."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse

from curation.models import Dataset, in_blind_sample
from review import services
from review.models import Review
from tests.factories import DatasetFactory, UserFactory
from tests.review.scenario import rich_task
from workers.models import Job

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
DECISION = {
    "decision": "approve",
    "spec_clarity": "0",
    "test_validity": "1",
    "interdependency": "0",
    "difficulty": "15m-1h",
    "revision": "1",
}
# A message of one of rich_task's findings: visible means the panel shows findings.
FINDING_TEXT = b"passed 1 of 3 runs on the reference"


@pytest.fixture
def blind(dataset):
    dataset.blind_review_share = 100
    dataset.save()
    return rich_task(dataset=dataset)


def test_it_draws_the_sample_from_a_hash_the_same_way_every_time():
    ids = [f"specloom__ledger-{n}" for n in range(2000)]
    drawn = [in_blind_sample(dataset="core", share=20, instance_id=i) for i in ids]
    assert drawn == [in_blind_sample(dataset="core", share=20, instance_id=i) for i in ids]
    assert 0.17 < sum(drawn) / len(ids) < 0.23  # about the share
    assert not any(in_blind_sample(dataset="core", share=0, instance_id=i) for i in ids)
    assert all(in_blind_sample(dataset="core", share=100, instance_id=i) for i in ids)
    # Another dataset draws another sample; a model method gives the same answer.
    other = [in_blind_sample(dataset="extra", share=20, instance_id=i) for i in ids]
    assert other != drawn
    assert Dataset(name="core", blind_review_share=20).blind_for(ids[0]) == drawn[0]


def test_the_share_is_a_percentage(dataset):
    from django.db import IntegrityError, transaction

    dataset.blind_review_share = 101
    with pytest.raises(IntegrityError), transaction.atomic():
        dataset.save()


def test_the_panel_stays_hidden_until_the_reviewer_decides_and_the_review_says_blind(
    client, alice, blind
):
    services.review_claim(task=blind, user=alice)
    client.force_login(alice)
    page = client.get(reverse("review-task", args=[blind.pk]))
    assert page.status_code == 200
    assert b"data-findings-hidden" in page.content and FINDING_TEXT not in page.content
    assert b"blind review sample (100% of its tasks)" in page.content
    panel = client.get(reverse("review-task-panel", args=[blind.pk, "findings"]), **HTMX)
    assert b"data-findings-hidden" in panel.content and FINDING_TEXT not in panel.content
    # The panel reloads itself once the decision is in.
    assert b"task-decided from:body" in panel.content
    # An audit's job message counts findings: hidden too, on the page and when polled.
    Job.objects.create(
        kind="audit_task",
        status="succeeded",
        target_type=ContentType.objects.get_for_model(blind),
        target_id=str(blind.pk),
        message="3 heuristic findings",
    )
    jobs = client.get(reverse("review-task-jobs", args=[blind.pk]), **HTMX)
    assert b"3 heuristic findings" not in jobs.content
    assert b"stays hidden until you decide" in jobs.content
    assert (
        b"3 heuristic findings" not in client.get(reverse("review-task", args=[blind.pk])).content
    )
    trajectory = blind.trajectories.first()
    detail = client.get(reverse("review-trajectory", args=[trajectory.pk]))
    assert b"data-findings-hidden" in detail.content

    response = client.post(reverse("review-task-decide", args=[blind.pk]), DECISION, **HTMX)
    assert response.status_code == 200, response.content
    assert Review.objects.get(task=blind, reviewer=alice).blind is True
    panel = client.get(reverse("review-task-panel", args=[blind.pk, "findings"]), **HTMX)
    assert FINDING_TEXT in panel.content and b"data-findings-hidden" not in panel.content


def test_a_task_outside_the_sample_shows_its_findings_and_records_an_informed_decision(
    client, alice, dataset
):
    task = rich_task(dataset=dataset)  # the share is 0 by default
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    assert FINDING_TEXT in client.get(reverse("review-task", args=[task.pk])).content
    client.post(reverse("review-task-decide", args=[task.pk]), DECISION, **HTMX)
    assert Review.objects.get(task=task, reviewer=alice).blind is False


def test_a_curator_sees_findings_unless_they_hold_the_task_to_review_it(client, bob, blind):
    client.force_login(bob)
    assert FINDING_TEXT in client.get(reverse("review-task", args=[blind.pk])).content
    services.review_claim(task=blind, user=bob)
    assert FINDING_TEXT not in client.get(reverse("review-task", args=[blind.pk])).content


def test_a_reviewer_who_decided_an_earlier_revision_is_not_blind_again(client, alice, blind):
    services.review_claim(task=blind, user=alice)
    client.force_login(alice)
    client.post(
        reverse("review-task-decide", args=[blind.pk]),
        {**DECISION, "decision": "request_changes", "comment": "S2 is vague."},
        **HTMX,
    )
    assert Review.objects.get(task=blind).blind is True
    # They have seen the findings since: a later decision on the task is an informed one.
    page = client.get(reverse("review-task", args=[blind.pk]))
    assert FINDING_TEXT in page.content


def test_the_queue_hides_how_many_findings_a_blind_task_has(client, alice, bob, blind):
    client.force_login(alice)
    page = client.get(reverse("review-queue"))
    assert b"blind review sample: hidden until you decide" in page.content
    # The "has findings" filter says nothing either way about a blind task.
    for answer in ("yes", "no"):
        listed = client.get(reverse("review-queue"), {"findings": answer})
        assert blind.instance_id.encode() not in listed.content
    client.force_login(bob)
    assert (
        b"blind review sample: hidden until you decide"
        not in client.get(reverse("review-queue")).content
    )


def test_the_findings_api_hides_a_blind_task_from_a_reviewer_until_they_decide(
    client, alice, bob, blind
):
    url = f"/api/v1/findings?task={blind.pk}"
    runs = f"/api/v1/audits?task={blind.pk}"
    Job.objects.create(
        kind="audit_task",
        status="succeeded",
        target_type=ContentType.objects.get_for_model(blind),
        target_id=str(blind.pk),
        message="2 heuristic findings",
        result={"findings": {"heuristic": 2, "llm": 0, "unsafe": []}},
    )
    client.force_login(alice)
    assert client.get(url).json()["results"] == []
    (run,) = client.get(runs).json()["audits"]
    assert (run["message"], run["findings"]) == ("", None)
    services.review_claim(task=blind, user=alice)
    services.review_submit(
        task=blind,
        user=alice,
        rubric=services.RubricInput("approve", 0, 0, 0, "15m-1h"),
        expected_revision=1,
    )
    assert len(client.get(url).json()["results"]) == 2
    assert client.get(runs).json()["audits"][0]["findings"]["heuristic"] == 2
    client.force_login(bob)  # a curator curates: everything, always
    assert len(client.get(url).json()["results"]) == 2


def test_an_outsider_learns_nothing_from_a_blind_task(client, carol, blind):
    stranger = UserFactory(username="dave", roles=["reviewer"])
    DatasetFactory(name="other").members.add(stranger)
    client.force_login(stranger)
    assert client.get(reverse("review-task", args=[blind.pk])).status_code == 404
    client.force_login(carol)
    assert client.get(reverse("review-task", args=[blind.pk])).status_code == 404
