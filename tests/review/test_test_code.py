"""One model of a test: what a reviewer edits is the test patch (what runs and ships).

The workspace shows a test's code as the hidden test patch leaves it; saving an edit rewrites
the test patch, makes a revision, revalidates, and the export carries the edit.
"""

import pytest
from django.urls import reverse

from curation.exports.records import task_records
from curation.models import Finding, Task
from curation.services.editing import task_update_content
from curation.services.tasks import TaskInputError
from review import services
from tests.curation.tasks_fixtures import hand_made_task
from tests.review.scenario import rich_task
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
NODEID = "tests/test_toc_spec.py::test_heading_anchors_are_unique"
EDITED = (
    "def test_heading_anchors_are_unique():\n"
    "    anchors = [anchor for _, anchor in heading_anchors(parse_blocks(DOC))]\n"
    "    assert len(anchors) == len(set(anchors))  # reviewed by alice\n"
)


@pytest.fixture
def task(dataset):
    return rich_task(dataset=dataset)


def _export(task):
    return next(task_records(Task.objects.filter(pk=task.pk)))


def test_editing_a_tests_code_edits_the_test_patch_and_the_export(task, alice):
    test = task.tests.get(nodeid=NODEID)
    before_patch = task.test_patch
    result = task_update_content(
        task=task, user=alice, expected_revision=1, changes={"tests": {NODEID: {"code": EDITED}}}
    )
    task.refresh_from_db()
    assert result.changed and task.revision == 2 and task.status == Task.Status.VALIDATING
    assert "+    assert len(anchors) == len(set(anchors))  # reviewed by alice\n" in task.test_patch
    assert result.revision.changes["test_patch"]["before"] == before_patch
    assert result.revision.changes["test_patch"]["after"] == task.test_patch
    assert result.revision.changes[f"tests.{NODEID}.code"]["after"] == EDITED.rstrip()
    assert "test test_heading_anchors_are_unique" in result.revision.summary
    assert Job.objects.get(kind="validate_task").params["revision"] == 2
    # What ships is the edited patch; nothing else of the patch moved.
    record = _export(task)
    assert record["test_patch"] == task.test_patch
    assert "# reviewed by alice" in record["test_patch"]
    untouched = "def test_toc_nests_headings_and_numbers_repeated_anchors():"
    assert untouched in record["test_patch"]
    test.refresh_from_db()
    assert test.code == EDITED.rstrip()


def test_the_same_code_makes_no_revision(task, alice):
    from workers.testpatch import source_of_test

    source, _ = source_of_test(task.test_patch, NODEID, None)
    result = task_update_content(
        task=task, user=alice, expected_revision=1, changes={"tests": {NODEID: {"code": source}}}
    )
    assert not result.changed


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("def test_something_else():\n    pass", "must still define"),
        ("def test_heading_anchors_are_unique(:\n    pass", r"test_toc_spec\.py, line 37"),
    ],
)
def test_code_that_would_not_run_under_the_test_id_is_refused(task, alice, code, says):
    with pytest.raises(TaskInputError, match=says):
        task_update_content(
            task=task, user=alice, expected_revision=1, changes={"tests": {NODEID: {"code": code}}}
        )
    task.refresh_from_db()
    assert task.revision == 1


def test_the_display_never_diverges_from_the_patch(client, alice, task):
    """A stale stored copy of the code is not what the page shows: the patch is."""
    task.tests.filter(nodeid=NODEID).update(code="def test_heading_anchors_are_unique():\n    0")
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    test = task.tests.get(nodeid=NODEID)
    page = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert "source in the test patch" in page
    form = client.get(reverse("review-task-edit-item", args=[task.pk, "test", test.pk]), **HTMX)
    html = form.content.decode()
    assert "in heading_anchors(parse_blocks(DOC))]" in html and "    0</textarea>" not in html
    assert "saved into the test patch" in html


def test_a_reviewer_edits_a_test_in_the_workspace_and_the_test_patch_follows(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    test = task.tests.get(nodeid=NODEID)
    response = client.post(
        reverse("review-task-edit-item", args=[task.pk, "test", test.pk]),
        {"code": EDITED, "specs": ["S2"], "revision": 1},
        **HTMX,
    )
    assert response.status_code == 200, response.content.decode()[:2000]
    assert "task-updated" in response["HX-Trigger"]
    assert "# reviewed by alice" in response.content.decode()
    task.refresh_from_db()
    assert "# reviewed by alice" in task.test_patch
    # The test patch tab shows the edit too (it refreshes on task-updated).
    panel = client.get(reverse("review-task-panel", args=[task.pk, "patch-test"]), **HTMX)
    assert "# reviewed by alice" in panel.content.decode()
    assert "task-updated from:body" in panel.content.decode()


def test_a_bad_test_edit_in_the_workspace_is_400_with_the_reason(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    test = task.tests.get(nodeid=NODEID)
    response = client.post(
        reverse("review-task-edit-item", args=[task.pk, "test", test.pk]),
        {"code": "def renamed():\n    pass", "specs": ["S2"], "revision": 1},
        **HTMX,
    )
    assert response.status_code == 400
    assert "must still define test_heading_anchors_are_unique" in response.content.decode()


@pytest.mark.slow
def test_the_edited_test_is_what_validation_runs(repo_storage, sandbox_root, dataset, alice):
    """End to end in the sandbox: break a test through its code, and validation sees it."""
    task = hand_made_task("marktext_toc", dataset=dataset)
    broken = EDITED.replace("# reviewed by alice", "\n    assert False, 'edited by a reviewer'")
    result = task_update_content(
        task=task,
        user=alice,
        expected_revision=task.revision,
        changes={"tests": {NODEID: {"code": broken}}},
    )
    assert job_execute(job_id=result.job.pk) == "succeeded", Job.objects.get(pk=result.job.pk)
    task.refresh_from_db()
    test = task.tests.get(nodeid=NODEID)
    assert test.role == "invalid"
    assert "edited by a reviewer" in test.last_message
    assert task.findings.filter(kind=Finding.Kind.REFERENCE_FAILS, message__contains=NODEID)
    assert "edited by a reviewer" in _export(task)["test_patch"]
