"""review.selectors.history: revisions as field diffs (cut by the patch core), with reviews."""

import pytest

from curation.services.editing import task_update_content
from review import services
from review.selectors.history import revision_changes, task_history, text_diff
from tests.review.scenario import rich_task

pytestmark = pytest.mark.django_db


def test_a_text_change_is_a_unified_diff_of_kinds_and_lines():
    before = "one\ntwo\nthree\nfour\nfive\nsix\n"
    after = "one\ntwo\n3\nfour\nfive\nsix\nseven"
    assert text_diff(before, after) == [
        ("hunk", "@@ -1,6 +1,7 @@"),
        ("ctx", " one"),
        ("ctx", " two"),
        ("del", "-three"),
        ("add", "+3"),
        ("ctx", " four"),
        ("ctx", " five"),
        ("ctx", " six"),
        ("add", "+seven"),
    ]


def test_lines_that_look_like_diff_headers_stay_content():
    # A statement may quote a diff; its lines are content, not the diff's own headers.
    assert text_diff("--- a\n+++ b\n@@ x", "--- a\n+++ c\n@@ x") == [
        ("hunk", "@@ -1,3 +1,3 @@"),
        ("ctx", " --- a"),
        ("del", "-+++ b"),
        ("add", "++++ c"),
        ("ctx", " @@ x"),
    ]


def test_single_lines_and_empty_sides_use_difflibs_headers():
    assert text_diff("a", "b") == [("hunk", "@@ -1 +1 @@"), ("del", "-a"), ("add", "+b")]
    assert text_diff("", "new") == [("hunk", "@@ -0,0 +1 @@"), ("add", "+new")]
    assert text_diff("same", "same") == []


def test_a_long_change_is_cut_for_the_page():
    after = "\n".join(str(n) for n in range(1000))
    assert len(text_diff("", after)) == 400


def test_revision_changes_diff_text_and_show_other_values_whole():
    changes = {
        "title": {"before": "Old", "after": "New"},
        "specs.S1.depends_on": {"before": ["S2"], "after": []},
    }
    assert revision_changes(changes) == [
        {"name": "title", "diff": [("hunk", "@@ -1 +1 @@"), ("del", "-Old"), ("add", "+New")]},
        {"name": "specs.S1.depends_on", "before": ["S2"], "after": []},
    ]


def test_the_history_interleaves_revisions_and_reviews_newest_first(dataset, alice):
    task = rich_task(dataset=dataset)
    task_update_content(task=task, user=alice, expected_revision=1, changes={"title": "Renamed"})
    task.refresh_from_db()
    task.status = "needs_review"
    task.validated_revision = task.revision
    task.save()
    services.review_claim(task=task, user=alice)
    services.review_submit(
        task=task,
        user=alice,
        rubric=services.RubricInput(
            decision="request_changes",
            spec_clarity=3,
            test_validity=3,
            interdependency=3,
            difficulty="15m-1h",
            comment="tighten S2",
        ),
        expected_revision=2,
    )
    events = task_history(task=task)
    assert [e["kind"] for e in events] == ["review", "revision", "created"]
    revision = events[1]
    assert revision["rev"].revision == 2 and revision["rev"].author == alice
    assert revision["changes"][0]["name"] == "title"
    assert ("add", "+Renamed") in revision["changes"][0]["diff"]
    assert events[0]["review"].comment == "tighten S2"
