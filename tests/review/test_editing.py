"""curation.services.editing: every save is a revision, stale saves are refused with the other
person's change, and revalidation is queued (the service the API will call too)."""

import pytest

from curation.models import Task
from curation.services.editing import (
    EditNotAllowed,
    StaleRevision,
    task_update_content,
    task_update_content_over_own_saves,
    touched_fields,
)
from curation.services.tasks import TaskInputError
from review import services
from tests.review.scenario import rich_task
from workers.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(dataset):
    return rich_task(dataset=dataset)


def test_a_save_makes_a_revision_and_queues_validation(task, alice):
    result = task_update_content(
        task=task,
        user=alice,
        expected_revision=1,
        changes={"problem_statement": "Do it.\r\nWell.", "specs": {"S1": {"kind": "interface"}}},
    )
    assert result.changed and task.revision == 2 and task.status == Task.Status.VALIDATING
    task.refresh_from_db()
    assert task.problem_statement == "Do it.\nWell."
    assert task.specs.get(key="S1").kind == "interface"
    assert result.revision.changes["specs.S1.kind"] == {
        "before": "functional",
        "after": "interface",
    }
    assert result.revision.summary == "edited problem statement, S1 kind"
    assert result.job.kind == "validate_task" and result.job.params["revision"] == 2
    assert Job.objects.filter(kind="validate_task").count() == 1


def test_nothing_changed_means_no_revision(task, alice):
    result = task_update_content(
        task=task,
        user=alice,
        expected_revision=1,
        changes={"title": task.title, "specs": {"S1": {"kind": "functional"}}},
    )
    assert not result.changed
    task.refresh_from_db()
    assert task.revision == 1 and not Job.objects.exists()


def test_a_stale_save_carries_the_other_persons_change(task, alice, bob):
    task_update_content(
        task=task,
        user=alice,
        expected_revision=1,
        changes={"specs": {"S2": {"statement": "Alice's."}}},
    )
    with pytest.raises(StaleRevision) as caught:
        task_update_content(
            task=task,
            user=bob,
            expected_revision=1,
            changes={"specs": {"S2": {"statement": "Bob's."}}},
        )
    stale = caught.value
    assert (stale.expected, stale.current) == (1, 2)
    assert stale.revisions[0].author == alice
    assert stale.as_dict()["changes"][0]["changes"]["specs.S2.statement"]["after"] == "Alice's."
    task.refresh_from_db()
    assert task.specs.get(key="S2").statement == "Alice's."


def test_ones_own_saves_of_other_fields_are_not_a_conflict(task, alice, bob):
    task_update_content(task=task, user=alice, expected_revision=1, changes={"title": "A"})
    # Alice's second form still says r1; her own save touched another field: applied on top.
    result = task_update_content_over_own_saves(
        task=task,
        user=alice,
        expected_revision=1,
        changes={"specs": {"S2": {"statement": "Alice's."}}},
    )
    assert result.revision.revision == 3
    task.refresh_from_db()
    assert task.title == "A" and task.specs.get(key="S2").statement == "Alice's."
    # The same field she saved since is a conflict, and so is anyone else's save.
    with pytest.raises(StaleRevision) as own_overlap:
        task_update_content_over_own_saves(
            task=task,
            user=alice,
            expected_revision=2,
            changes={"specs": {"S2": {"statement": "Again."}}},
        )
    assert own_overlap.value.current == 3
    task_update_content(task=task, user=bob, expected_revision=3, changes={"title": "B"})
    with pytest.raises(StaleRevision):
        task_update_content_over_own_saves(
            task=task, user=alice, expected_revision=3, changes={"problem_statement": "New."}
        )
    assert Task.objects.get(pk=task.pk).revision == 4  # the refused saves wrote nothing


def test_touched_fields_name_what_a_revision_would_record():
    changes = {
        "title": "T",
        "specs": {"S1": {"kind": "interface", "depends_on": []}},
        "tests": {"t.py::test_a": {"code": "x"}},
    }
    assert touched_fields(changes) == {
        "title",
        "specs.S1.kind",
        "specs.S1.depends_on",
        "tests.t.py::test_a.code",
    }


def test_dependencies_and_test_links_are_edited(task, alice):
    test = task.tests.get(nodeid__contains="test_heading_anchors_are_unique")
    task_update_content(
        task=task,
        user=alice,
        expected_revision=1,
        changes={
            "specs": {"S3": {"depends_on": ["S2"]}},
            "tests": {
                test.nodeid: {
                    "specs": ["S1", "S2"],
                    "code": "def test_heading_anchors_are_unique():\n    assert True",
                }
            },
        },
    )
    declared = set(
        task.dependencies.filter(evidence="declared").values_list("from_spec__key", "to_spec__key")
    )
    assert declared == {("S1", "S2"), ("S3", "S2")}
    test.refresh_from_db()
    assert sorted(test.specs.values_list("key", flat=True)) == ["S1", "S2"]
    # The code is the test patch's: the stored copy follows it.
    task.refresh_from_db()
    assert "+def test_heading_anchors_are_unique():\n+    assert True\n" in task.test_patch
    assert test.code == "def test_heading_anchors_are_unique():\n    assert True"
    # Linking a test to a spec claims it verifies the spec; validation checks the claim.
    assert test.nodeid in task.specs.get(key="S1").claimed_tests
    assert test.nodeid in task.specs.get(key="S2").claimed_tests


@pytest.mark.parametrize(
    "changes",
    [
        {"specs": {"S9": {"statement": "x"}}},
        {"specs": {"S1": {"statement": "  "}}},
        {"specs": {"S1": {"kind": "vibes"}}},
        {"specs": {"S1": {"depends_on": ["S1"]}}},
        {"specs": {"S1": {"depends_on": ["S7"]}}},
        {"specs": {"S1": {"owner": "me"}}},
        {"tests": {"tests/nope.py::test": {"code": "x"}}},
        {"reference_patch": "not a diff"},
        {"reference_patch": ""},
        {"title": ""},
        {"status": "approved"},
        {"problem_statement": 42},
    ],
)
def test_invalid_changes_are_refused_whole(task, alice, changes):
    with pytest.raises(TaskInputError):
        task_update_content(task=task, user=alice, expected_revision=1, changes=changes)
    task.refresh_from_db()
    assert task.revision == 1 and not task.revisions.exists()


def test_a_decided_task_is_frozen(dataset, alice):
    task = rich_task(dataset=dataset, status=Task.Status.APPROVED)
    with pytest.raises(EditNotAllowed):
        task_update_content(task=task, user=alice, expected_revision=1, changes={"title": "New"})


def test_an_edit_reopens_review_slots_held_by_older_reviews(dataset, alice, bob):
    dataset.reviews_required = 2
    dataset.save()
    task = rich_task(dataset=dataset)
    services.review_claim(task=task, user=alice)
    services.review_submit(
        task=task,
        user=alice,
        expected_revision=1,
        rubric=services.RubricInput("request_changes", 2, 0, 0, "<15m", "S2 is vague"),
    )
    services.review_claim(task=task, user=bob)
    task.refresh_from_db()
    assert task.review_slots_taken == 2
    task_update_content(
        task=task,
        user=bob,
        expected_revision=1,
        changes={"specs": {"S2": {"statement": "Clearer."}}},
    )
    task.refresh_from_db()
    # Alice's review was of r1: her slot is free again; Bob still holds his lease.
    assert task.review_slots_taken == 1
