"""review.selectors.trajectories: steps paged by index, long text folded, access by dataset."""

import pytest
from django.http import Http404

from review.selectors.trajectories import (
    OBSERVATION_FOLD_CHARS,
    trajectory_detail,
    trajectory_steps,
    visible_trajectory,
)
from tests.review.scenario import XSS, rich_task

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(dataset):
    return rich_task(dataset=dataset)


def test_steps_come_in_pages_that_continue_from_the_last_index(task):
    good = task.trajectories.get(model_name="qwen3-coder-30b")
    first, after = trajectory_steps(trajectory=good, limit=20)
    assert [v.step.index for v in first] == list(range(20)) and after == 19
    second, after = trajectory_steps(trajectory=good, after=after, limit=20)
    assert [v.step.index for v in second] == list(range(20, 40)) and after == 39
    last, after = trajectory_steps(trajectory=good, after=after, limit=20)
    assert [v.step.index for v in last] == list(range(40, 45)) and after is None


def test_only_filled_fields_show_and_long_ones_fold(task):
    good = task.trajectories.get(model_name="qwen3-coder-30b")
    views, _ = trajectory_steps(trajectory=good, limit=2)
    assert [f["name"] for f in views[0].fields] == ["thought", "action"]
    (observation,) = views[1].fields
    assert observation["name"] == "observation" and observation["lines"] == 300
    assert observation["folded"] and not observation["cut"]
    assert len(observation["preview"].split("\n")) == 6
    assert len(observation["preview"]) <= OBSERVATION_FOLD_CHARS


def test_the_detail_has_the_evaluation_spec_results_and_the_final_diff(task):
    good = task.trajectories.get(model_name="qwen3-coder-30b")
    detail = trajectory_detail(trajectory=good)
    assert detail["evaluation"].resolved == "full"
    assert [r.spec.key for r in detail["spec_results"]] == ["S1", "S2", "S3"]
    assert all(r.satisfied for r in detail["spec_results"])
    assert [f.path for f in detail["final_diff"].files] == ["marktext/anchors.py"]
    bad = task.trajectories.get(model_name="gpt-oss-20b")
    assert trajectory_detail(trajectory=bad)["final_diff"].files == []
    views, _ = trajectory_steps(trajectory=bad)
    assert views[0].fields[0]["text"] == XSS  # escaped by the template, never here


def test_a_trajectory_outside_the_users_datasets_is_a_404(task, alice, carol, bob):
    good = task.trajectories.get(model_name="qwen3-coder-30b")
    assert visible_trajectory(user=alice, trajectory_id=str(good.pk)) == good
    assert visible_trajectory(user=bob, trajectory_id=good.pk) == good
    for user, ident in ((carol, good.pk), (alice, "nope"), (alice, 10**9)):
        with pytest.raises(Http404):
            visible_trajectory(user=user, trajectory_id=ident)
