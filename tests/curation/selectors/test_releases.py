"""The datasheet of a release and the diff between two releases."""

import pytest

from curation.models import Finding, Task
from curation.selectors.releases import (
    ReleaseNotComparable,
    release_diff,
    releases_visible,
    reviewer_agreement,
)
from curation.services.releases import release_cut
from tests.curation.release_helpers import cut, evaluated_trajectory, review, reviewed_task
from tests.factories import DatasetFactory, RepositoryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"


@pytest.fixture
def reviewers(db):
    return [UserFactory(username=f"rev{i}", roles=["reviewer"]) for i in range(3)]


def test_it_counts_the_released_tasks_by_origin_repository_kind_and_difficulty(dataset):
    ledger, marktext = RepositoryFactory(name="ledger"), RepositoryFactory(name="marktext")
    reviewed_task(dataset=dataset, repository=ledger, origin="procedural", difficulty="<15m")
    reviewed_task(dataset=dataset, repository=ledger, origin="llm", difficulty="1-4h")
    reviewed_task(dataset=dataset, repository=marktext, origin="procedural", difficulty="")

    sheet = cut(dataset).datasheet

    assert sheet["tasks"] == 3
    assert sheet["by_origin"] == {"llm": 1, "procedural": 2}
    assert sheet["by_repository"] == {"ledger": 2, "marktext": 1}
    assert sheet["by_spec_kind"] == {"error-handling": 3, "functional": 3}
    assert sheet["by_difficulty"] == {"1-4h": 1, "<15m": 1, "unrated": 1}
    assert sheet["tests_by_role"] == {"FAIL_TO_PASS": 3, "PASS_TO_PASS": 3, "flaky": 3}
    assert sheet["dependencies_by_evidence"] == {"declared": 3}
    assert sheet["files"]["swebench"]["sha256"]


def test_it_says_how_many_tasks_were_rejected_or_sent_back_and_why(dataset, reviewers):
    reviewed_task(dataset=dataset)
    rejected = reviewed_task(dataset=dataset, status="rejected")
    review(rejected, reviewers[0], "reject", test_validity=3, comment="tests check the wrong thing")
    Finding.objects.create(task=rejected, kind="weak_test", message="empty patch passes")
    sent_back = reviewed_task(dataset=dataset, status="changes_requested")
    review(sent_back, reviewers[1], "request_changes", spec_clarity=2, comment="ambiguous S2")
    # Sent back once, fixed, approved since: still counted as sent back.
    fixed = reviewed_task(dataset=dataset)
    review(fixed, reviewers[0], "request_changes", interdependency=2)
    review(fixed, reviewers[0], "approve")

    sheet = cut(dataset).datasheet["review"]

    assert sheet["rejected"] == {"tasks": 1, "reviews": 1}
    assert sheet["sent_back"] == {"tasks": 2, "still_open": 1, "reviews": 2}
    assert sheet["reasons"]["rubric_blocking"] == {
        "spec_clarity": 1,
        "test_validity": 1,
        "interdependency": 1,
    }
    assert sheet["reasons"]["findings"] == {"weak_test": 1}
    comments = {c["comment"] for c in sheet["reasons"]["comments"]}
    assert comments == {"tests check the wrong thing", "ambiguous S2"}
    assert sheet["tasks_by_status"]["released"] == 2


def test_it_measures_reviewer_agreement_on_shared_tasks(dataset, reviewers):
    a, b, c = reviewers
    agreed = reviewed_task(dataset=dataset)
    review(agreed, a, "approve")
    review(agreed, b, "approve")
    split = reviewed_task(dataset=dataset)
    review(split, a, "approve")
    review(split, c, "reject")
    three = reviewed_task(dataset=dataset)
    review(three, a, "reject")
    review(three, b, "reject")
    review(three, c, "reject")
    alone = reviewed_task(dataset=dataset)
    review(alone, a, "approve")  # a single review: nothing to agree with

    agreement = reviewer_agreement(dataset=dataset)

    assert agreement["items"] == 3
    assert agreement["reviews"] == 7
    # pairs: 1 agreeing + 1 disagreeing + 3 agreeing
    assert agreement["percent_agreement"] == 0.8
    assert agreement["krippendorff_alpha"] == pytest.approx(0.6, abs=0.1)


def test_agreement_is_undefined_without_shared_reviews(dataset, reviewers):
    review(reviewed_task(dataset=dataset), reviewers[0], "approve")
    agreement = reviewer_agreement(dataset=dataset)
    assert agreement == {
        "measure": agreement["measure"],
        "items": 0,
        "reviews": 0,
        "percent_agreement": None,
        "krippendorff_alpha": None,
    }


def test_it_reports_model_pass_rates_and_unsafe_trajectories_left_out(dataset):
    first, second = reviewed_task(dataset=dataset), reviewed_task(dataset=dataset)
    evaluated_trajectory(first, model="model-a", resolved="full")
    evaluated_trajectory(second, model="model-a", resolved="none")
    evaluated_trajectory(first, model="model-b", resolved="full", unsafe=True)
    other = reviewed_task(dataset=dataset, status="rejected")
    evaluated_trajectory(other, model="model-a", resolved="none")  # not released: not counted

    sheet = cut(dataset, trajectories=True).datasheet

    models = {m["model"]: m for m in sheet["models"]}
    assert models["model-a"]["evaluated"] == 2
    assert models["model-a"]["resolved"] == {"full": 1, "partial": 0, "none": 1}
    assert models["model-a"]["resolve_rate"] == 0.5
    assert models["model-a"]["spec_pass_rate_by_kind"] == {"error-handling": 0.5, "functional": 1.0}
    assert models["model-b"]["unsafe"] == 1
    assert sheet["trajectories"] == {"total": 3, "unsafe": 1, "exported": 2, "unsafe_left_out": 1}
    assert sheet["export_options"] == {"trajectories": True, "include_unsafe": False}


def test_it_counts_unsafe_trajectories_when_they_are_asked_for(dataset):
    task = reviewed_task(dataset=dataset)
    evaluated_trajectory(task, model="m", resolved="full", unsafe=True)
    sheet = cut(dataset, trajectories=True, include_unsafe=True).datasheet
    assert sheet["trajectories"] == {"total": 1, "unsafe": 1, "exported": 1, "unsafe_left_out": 0}


def test_it_lists_added_removed_and_changed_tasks_between_versions(dataset):
    kept = reviewed_task(dataset=dataset)
    edited = reviewed_task(dataset=dataset)
    dropped = reviewed_task(dataset=dataset)
    v1 = cut(dataset)
    Task.objects.filter(pk=edited.pk).update(revision=2, title="A clearer title")
    Task.objects.filter(pk=dropped.pk).update(status="changes_requested")
    added = reviewed_task(dataset=dataset)
    v2 = cut(dataset)

    diff = release_diff(old=v1, new=v2)

    assert diff["added"] == [added.instance_id]
    assert diff["removed"] == [dropped.instance_id]
    assert [c["instance_id"] for c in diff["changed"]] == [edited.instance_id]
    assert diff["changed"][0]["from_revision"] == 1 and diff["changed"][0]["to_revision"] == 2
    assert diff["unchanged"] == 1
    assert kept.instance_id not in {c["instance_id"] for c in diff["changed"]}
    assert release_diff(old=v2, new=v2)["changed"] == []


def test_it_refuses_to_diff_a_release_that_is_not_ready(dataset):
    reviewed_task(dataset=dataset)
    v1 = cut(dataset)
    building = release_cut(dataset=dataset)
    with pytest.raises(ReleaseNotComparable, match="building"):
        release_diff(old=v1, new=building)


def test_reviewers_see_releases_of_their_datasets_only(dataset, alice, bob, carol):
    reviewed_task(dataset=dataset)
    mine = cut(dataset)
    other = DatasetFactory(name="secret")
    reviewed_task(dataset=other)
    theirs = cut(other)
    assert list(releases_visible(alice)) == [mine]
    assert set(releases_visible(bob)) == {mine, theirs}
    assert list(releases_visible(carol)) == []
