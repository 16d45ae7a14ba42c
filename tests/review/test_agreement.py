"""Krippendorff's alpha has one implementation (review/agreement.py): its undefined cases, and
the same figure on the agreement page and in a release's datasheet."""

import pytest
from django.urls import reverse

from curation.review_port import Decision
from review.agreement import krippendorff_alpha, percent_agreement
from tests.curation.release_helpers import cut, review, reviewed_task
from tests.factories import UserFactory

# --- the statistic ---------------------------------------------------------------------------


def test_alpha_of_agreement_with_variation_is_one():
    units = [{"a": 0, "b": 0}, {"a": 1, "b": 1}, {"a": 2, "b": 2}]
    assert krippendorff_alpha(units, "nominal") == 1.0
    assert percent_agreement(units) == 1.0


def test_alpha_of_partial_disagreement_matches_the_hand_computation():
    # Coincidences: o00 = 2, o11 = 2, o01 = o10 = 1; n = 6, n0 = n1 = 3.
    # D_o = 2/6, D_e = 2 * 3 * 3 / (6 * 5) = 0.6, alpha = 1 - (1/3) / 0.6 = 0.444...
    units = [{"a": 0, "b": 0}, {"a": 1, "b": 1}, {"a": 0, "b": 1}]
    assert krippendorff_alpha(units, "nominal") == 0.444
    assert percent_agreement(units) == pytest.approx(2 / 3, abs=0.001)


def test_alpha_of_systematic_disagreement_is_negative():
    # D_o = 4/4, D_e = 2 * 2 * 2 / (4 * 3) = 2/3, alpha = 1 - 1.5 = -0.5.
    assert krippendorff_alpha([{"a": 0, "b": 1}, {"a": 1, "b": 0}], "nominal") == -0.5


def test_alpha_is_undefined_when_everyone_agrees_on_one_value():
    # No variation at all: expected disagreement is 0 and alpha is 0/0, not 1 by convention;
    # percent agreement is what says they agreed.
    units = [{"a": 1, "b": 1}, {"a": 1, "b": 1, "c": 1}]
    assert krippendorff_alpha(units, "nominal") is None
    assert krippendorff_alpha(units, "ordinal") is None
    assert percent_agreement(units) == 1.0


def test_alpha_is_undefined_with_too_few_ratings():
    assert krippendorff_alpha([], "nominal") is None
    # Single ratings share nothing: there is no unit rated twice.
    lone = [{"a": 0}, {"b": 1}, {"a": 2}]
    assert krippendorff_alpha(lone, "nominal") is None
    assert percent_agreement(lone) is None


def test_units_rated_once_do_not_change_alpha():
    shared = [{"a": 0, "b": 0}, {"a": 1, "b": 1}, {"a": 0, "b": 1}]
    assert krippendorff_alpha([*shared, {"c": 2}], "nominal") == krippendorff_alpha(
        shared, "nominal"
    )


# --- one figure everywhere ---------------------------------------------------------------------


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"


def _page_alpha(client, user, dataset):
    client.force_login(user)
    response = client.get(reverse("review-agreement"), {"dataset": dataset.name})
    assert response.status_code == 200
    item = next(i for i in response.context["report"]["items"] if i["field"] == "decision")
    return item, response.content.decode()


@pytest.mark.django_db
def test_the_datasheet_and_the_agreement_page_report_the_same_alpha(client, bob, dataset):
    a, b, c = (UserFactory(username=f"rev{i}", roles=["reviewer"]) for i in range(3))
    plan = [
        [(a, Decision.APPROVE), (b, Decision.APPROVE)],
        [(a, Decision.APPROVE), (c, Decision.REJECT)],
        [(a, Decision.REJECT), (b, Decision.REJECT), (c, Decision.REJECT)],
        [(b, Decision.REQUEST_CHANGES), (c, Decision.APPROVE)],
        [(a, Decision.APPROVE)],  # a single review: nothing to agree with
    ]
    tasks = []
    for decisions in plan:
        tasks.append(reviewed_task(dataset=dataset))
        for reviewer, decision in decisions:
            review(tasks[-1], reviewer, decision)
    # A reviewer's second word on a revision replaces their first, on both sides.
    review(tasks[0], a, Decision.REJECT)

    sheet = cut(dataset).datasheet["agreement"]
    item, html = _page_alpha(client, bob, dataset)

    assert sheet["items"] == 4 and sheet["reviews"] == 9
    assert sheet["krippendorff_alpha"] is not None
    assert sheet["krippendorff_alpha"] == item["alpha"]
    assert sheet["percent_agreement"] == item["percent_agreement"]
    assert f"{item['alpha']:.3f}" in html
    release = dataset.releases.get()
    detail = client.get(reverse("release-detail", args=[release.pk])).content.decode()
    assert str(sheet["krippendorff_alpha"]) in detail


@pytest.mark.django_db
def test_both_say_undefined_when_every_reviewer_approved(client, bob, dataset):
    a, b = (UserFactory(username=f"rev{i}", roles=["reviewer"]) for i in range(2))
    for _ in range(2):
        task = reviewed_task(dataset=dataset)
        review(task, a, Decision.APPROVE)
        review(task, b, Decision.APPROVE)

    sheet = cut(dataset).datasheet["agreement"]
    item, _ = _page_alpha(client, bob, dataset)

    assert sheet["krippendorff_alpha"] is None and item["alpha"] is None
    assert sheet["percent_agreement"] == item["percent_agreement"] == 1.0
