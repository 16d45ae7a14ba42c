"""Curation reads human review through the port it owns, which the review app implements:
real rows in, values out, and the selectors built on it (calibration, blind sample, datasheet)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from curation import review_port as port_module
from curation.review_port import TURNED_DOWN, Decision, ReviewRecord, review_port
from curation.selectors.audit import blind_task_ids, findings_hidden
from curation.selectors.releases import review_outcomes, reviewer_agreement
from review import services
from review.models import Review
from tests.curation.release_helpers import review, reviewed_task
from tests.factories import DatasetFactory, TaskFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def reviewers(dataset):
    people = [UserFactory(username=f"rev{i}", roles=["reviewer"]) for i in range(2)]
    dataset.members.add(*people)
    return people


def test_the_review_app_registers_the_port_and_owns_no_second_decision_enum():
    assert type(review_port()).__module__ == "review.port"
    assert Review.Decision is Decision
    assert set(TURNED_DOWN) == {Decision.REJECT, Decision.REQUEST_CHANGES}


def test_without_the_review_app_curation_says_so(monkeypatch):
    monkeypatch.setattr(port_module, "_port", None)
    with pytest.raises(ImproperlyConfigured, match="review app"):
        review_port()


def test_reviews_of_a_dataset_are_values_oldest_first(dataset, reviewers):
    a, b = reviewers
    task = reviewed_task(dataset=dataset)
    first = review(task, a, Decision.APPROVE, comment="fine")
    second = review(task, b, Decision.REJECT, test_validity=3)
    adjudication = review(task, a, Decision.REJECT)
    Review.objects.filter(pk=adjudication.pk).update(is_adjudication=True)
    elsewhere = reviewed_task(dataset=DatasetFactory(name="other"))
    review(elsewhere, a, Decision.APPROVE)

    records = review_port().reviews(dataset=dataset)

    assert [r.id for r in records] == [first.pk, second.pk, adjudication.pk]
    assert all(isinstance(r, ReviewRecord) for r in records)
    assert records[0].instance_id == task.instance_id
    assert (records[0].decision, records[0].comment, records[0].reviewer_id) == (
        "approve",
        "fine",
        a.pk,
    )
    assert records[1].test_validity == 3 and not records[1].is_adjudication
    assert records[2].is_adjudication


def test_decided_and_leased_come_from_real_rows(dataset, reviewers):
    a, b = reviewers
    task = TaskFactory(dataset=dataset)
    task.validated_revision = task.revision
    task.save()
    port = review_port()
    assert not port.has_decided(task=task, user=a) and not port.holds_lease(task=task, user=a)

    services.review_claim(task=task, user=a)
    assert port.holds_lease(task=task, user=a) and not port.holds_lease(task=task, user=b)

    review(task, b, Decision.APPROVE)
    assert port.has_decided(task=task, user=b) and not port.has_decided(task=task, user=a)
    assert list(port.decided_task_ids(user=b).values_list("task_id", flat=True)) == [task.pk]


def test_the_blind_sample_is_read_through_the_port(dataset, reviewers):
    a, _ = reviewers
    dataset.blind_review_share = 100
    dataset.save()
    task = TaskFactory(dataset=dataset)
    assert findings_hidden(task=task, user=a)
    assert blind_task_ids(user=a) == [task.pk]

    review(task, a, Decision.REQUEST_CHANGES)
    assert not findings_hidden(task=task, user=a)
    assert blind_task_ids(user=a) == []


def test_the_datasheet_figures_come_through_the_port(dataset, reviewers):
    a, b = reviewers
    agreed, split = reviewed_task(dataset=dataset), reviewed_task(dataset=dataset)
    review(agreed, a, Decision.REJECT, spec_clarity=2, comment="ambiguous")
    review(agreed, b, Decision.REJECT)
    review(split, a, Decision.APPROVE)
    review(split, b, Decision.REQUEST_CHANGES, comment="tests too weak")

    outcomes = review_outcomes(dataset=dataset)
    assert outcomes["rejected"]["reviews"] == 2
    assert outcomes["sent_back"] == {"tasks": 1, "still_open": 0, "reviews": 1}
    assert outcomes["reasons"]["rubric_blocking"]["spec_clarity"] == 1
    # Newest first.
    assert [c["comment"] for c in outcomes["reasons"]["comments"]] == [
        "tests too weak",
        "ambiguous",
    ]
    agreement = reviewer_agreement(dataset=dataset)
    assert agreement == review_port().decision_agreement(dataset=dataset)
    assert (agreement["items"], agreement["reviews"], agreement["percent_agreement"]) == (2, 4, 0.5)
