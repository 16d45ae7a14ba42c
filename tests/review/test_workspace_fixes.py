"""Defects of the reviewer's workspace found by trying it as a new user (issue 15): every panel
renders, the saved note stops polling, wording that says what happened, readable test ids."""

import pytest
from django.urls import reverse

from curation.models import Finding, Specification, Task, TestCase
from curation.services.editing import task_update_content
from review import rendering, services
from review.templatetags import review_tags
from review.views.task import PANELS
from tests.review.scenario import rich_task
from workers.models import Job

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def task(dataset):
    return rich_task(dataset=dataset)


# --- panels --------------------------------------------------------------------------------------


@pytest.mark.parametrize("panel", sorted(PANELS))
def test_it_renders_every_panel_the_workspace_names(client, alice, task, panel):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    response = client.get(reverse("review-task-panel", args=[task.pk, panel]), **HTMX)
    assert response.status_code == 200, panel
    assert b"<html" not in response.content


def test_it_answers_404_not_500_for_the_patches_panel_that_never_existed(client, alice, task):
    client.force_login(alice)
    url = reverse("review-task-panel", args=[task.pk, "patches"])
    assert client.get(url, **HTMX).status_code == 404


def test_it_refreshes_every_panel_the_page_asks_for(client, alice, task):
    """Each hx-get of the page names a panel that exists (the patches one did not)."""
    import re

    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    asked = set(re.findall(rf"/review/tasks/{task.pk}/panel/([\w-]+)", html))
    assert asked and asked <= set(PANELS)
    for panel in asked:
        url = reverse("review-task-panel", args=[task.pk, panel])
        assert client.get(url, **HTMX).status_code == 200, panel


# --- the saved note ------------------------------------------------------------------------------


def _saved_url(task, revision):
    return reverse("review-task-saved", args=[task.pk, revision])


def test_it_keeps_polling_the_saved_note_while_the_revision_validates(client, alice, task):
    task_update_content(task=task, user=alice, expected_revision=1, changes={"title": "New"})
    client.force_login(alice)
    response = client.get(_saved_url(task, 2), **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert "revalidating" in html and "every 2s" in html


@pytest.mark.parametrize(
    ("validated", "revision", "says"),
    [(True, 2, "validated ✓"), (False, 2, "did not validate"), (True, 1, "r2 is newer")],
)
def test_it_stops_polling_the_saved_note_once_validation_ended(
    client, alice, task, validated, revision, says
):
    task_update_content(task=task, user=alice, expected_revision=1, changes={"title": "New"})
    Task.objects.filter(pk=task.pk).update(
        status=Task.Status.NEEDS_REVIEW if validated else Task.Status.DRAFT,
        validated_revision=2 if validated else None,
    )
    client.force_login(alice)
    response = client.get(_saved_url(task, revision), **HTMX)
    assert response.status_code == 286
    html = response.content.decode()
    assert says in html and "revalidating" not in html and "hx-get" not in html


def test_the_saved_note_rejects_post_and_outsiders(client, alice, carol, task):
    client.force_login(alice)
    assert client.post(_saved_url(task, 1)).status_code == 405
    client.force_login(carol)
    assert client.get(_saved_url(task, 1)).status_code == 404


def test_an_edit_answers_with_a_saved_note_that_polls(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    response = client.post(
        reverse("review-task-edit", args=[task.pk, "statement"]),
        {"title": "New title", "problem_statement": "Do it.", "revision": 1},
        **HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "Saved as r2 · revalidating" in html and _saved_url(task, 2) in html


# --- wording -------------------------------------------------------------------------------------


def test_a_second_decision_click_says_already_decided(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    data = {
        "decision": "reject",
        "spec_clarity": 2,
        "test_validity": 0,
        "interdependency": 0,
        "difficulty": "<15m",
        "comment": "S2 is vague",
        "revision": 1,
    }
    url = reverse("review-task-decide", args=[task.pk])
    assert client.post(url, data, **HTMX).status_code == 200
    again = client.post(url, data, **HTMX)
    assert again.status_code == 409
    html = again.content.decode()
    assert "Already decided: your reject of r1 is recorded." in html
    assert "lease expired" not in html


def test_giving_a_task_back_says_returned_to_the_queue(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    page = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert "Return to queue" in page and ">Release<" not in page
    response = client.post(reverse("review-task-release", args=[task.pk]), follow=True)
    text = response.content.decode()
    assert f"Returned {task.instance_id} to the queue." in text
    assert "Released" not in text


def test_the_history_tab_counts_revisions(client, alice, task):
    task_update_content(task=task, user=alice, expected_revision=1, changes={"title": "A"})
    task_update_content(task=task, user=alice, expected_revision=2, changes={"title": "B"})
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert 'data-history-count title="3 revisions, 0 reviews, 0 comments">r3<' in html


# --- test ids ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "shown"),
    [
        ("t.py::test_p[\\xfcn\\xefcode]", "test_p[ünïcode]"),
        ("t.py::test_p[level 7 \\u2265 6]", "test_p[level 7 ≥ 6]"),
        ("t.py::test_p[\\U0001f600]", "test_p[😀]"),
        ("t.py::test_p[a\\\\xfc]", "test_p[a\\xfc]"),  # an escaped backslash stays text
        ("t.py::test_p[\\x00\\n]", "test_p[\\x00\\n]"),  # control characters stay escaped
        ("t.py::test_p[<b>]", "test_p[<b>]"),
    ],
)
def test_it_shows_test_ids_with_real_unicode(stored, shown):
    assert review_tags.testname(stored) == shown
    assert review_tags.testfile(stored) == "t.py"


def test_test_ids_are_readable_but_still_escaped_for_html(client, alice, task):
    test = task.tests.first()
    TestCase.objects.filter(pk=test.pk).update(
        nodeid="tests/test_toc_spec.py::test_x[\\xfcn\\xef <script>alert(1)</script>]"
    )
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert "test_x[ünï &lt;script&gt;alert(1)&lt;/script&gt;]" in html
    assert "<script>alert(1)" not in html
    # The stored id, escapes and all, stays one hover away.
    assert 'title="tests/test_toc_spec.py::test_x[\\xfcn\\xef &lt;script&gt;' in html


# --- the pass-rate chart -------------------------------------------------------------------------


def test_the_pass_rate_chart_has_columns_only_for_kinds_with_data():
    rows = [
        {"model": "m1", "kind": "functional", "satisfied": 1, "total": 2},
        {"model": "m2", "kind": "interface", "satisfied": 2, "total": 2},
        {"model": "m2", "kind": "security", "satisfied": 0, "total": 0},
    ]
    svg = str(rendering.pass_rate_svg(rows, kinds=Specification.Kind.values))
    assert ">functional<" in svg and ">interface<" in svg
    for empty in ("security", "performance", "compatibility", "error-handling"):
        assert f">{empty}<" not in svg
    assert str(rendering.pass_rate_svg([], kinds=Specification.Kind.values)) == ""


# --- findings of a validation that could not run -------------------------------------------------


def test_a_finding_shows_the_output_tail_escaped(client, alice, task):
    Finding.objects.create(
        task=task,
        kind=Finding.Kind.INVALID_TEST,
        severity="high",
        message="Validation could not run: no FAIL_TO_PASS test was collected",
        evidence={"output_tail": "E   ModuleNotFoundError: <img src=x onerror=alert(1)>"},
        source="validation",
    )
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert "data-output-tail" in html
    assert "ModuleNotFoundError: &lt;img src=x onerror=alert(1)&gt;" in html


def test_a_failed_job_shows_as_failed_on_the_task_page(client, alice, task):
    from workers.services import job_enqueue

    job = job_enqueue(kind="validate_task", target=task, params={"task_id": task.pk})
    Job.objects.filter(pk=job.pk).update(
        status=Job.Status.FAILED, message="validation could not run: no test was collected"
    )
    client.force_login(alice)
    html = client.get(reverse("review-task-jobs", args=[task.pk]), **HTMX).content.decode()
    assert 'data-job-status="failed"' in html and ">failed<" in html
    assert "succeeded" not in html.lower()


# --- jobs on the dashboard -----------------------------------------------------------------------


def test_a_reviewer_sees_synthesis_into_their_dataset_named_by_repository(client, alice, dataset):
    from tests.factories import RepositoryFactory
    from workers.services import job_enqueue

    repository = RepositoryFactory(name="marktext")
    job_enqueue(
        kind="synthesize",
        target=repository,
        params={"repository_id": repository.pk, "dataset_id": dataset.pk},
    )
    client.force_login(alice)
    html = client.get(reverse("dashboard")).content.decode()
    assert "synthesize" in html and "marktext → core" in html
    assert "Nothing running" not in html


def test_synthesis_into_a_dataset_the_reviewer_cannot_see_stays_hidden(client, alice):
    from tests.factories import DatasetFactory, RepositoryFactory
    from workers.services import job_enqueue

    other = DatasetFactory(name="secret")
    repository = RepositoryFactory(name="hidden-repo")
    job_enqueue(
        kind="synthesize",
        target=repository,
        params={"repository_id": repository.pk, "dataset_id": other.pk},
    )
    client.force_login(alice)
    html = client.get(reverse("review-running-jobs"), **HTMX).content.decode()
    assert "hidden-repo" not in html and "secret" not in html
    assert "Nothing running" in html


def test_a_curator_sees_every_synthesis_job_with_its_repository(client, bob):
    from tests.factories import RepositoryFactory
    from workers.services import job_enqueue

    repository = RepositoryFactory(name="ledger")
    job_enqueue(kind="synthesize", target=repository, params={"repository_id": repository.pk})
    client.force_login(bob)
    html = client.get(reverse("review-running-jobs"), **HTMX).content.decode()
    assert "data-job-subject>ledger<" in html


def test_the_dashboard_does_not_say_nothing_running_while_tasks_validate(client, alice, task):
    Task.objects.filter(pk=task.pk).update(status=Task.Status.VALIDATING)
    client.force_login(alice)
    html = client.get(reverse("dashboard")).content.decode()
    assert "Nothing running" not in html
    assert "1 task validating" in html
    partial = client.get(reverse("review-running-jobs"), **HTMX).content.decode()
    assert "1 task validating" in partial and "Nothing running" not in partial


def test_an_evaluation_job_names_model_and_task_for_the_reviewer(client, alice, task):
    from workers.services import job_enqueue

    trajectory = task.trajectories.get(model_name="gpt-oss-20b")
    job_enqueue(kind="evaluate_trajectory", target=trajectory)
    client.force_login(alice)
    html = client.get(reverse("review-running-jobs"), **HTMX).content.decode()
    assert f"gpt-oss-20b on {task.instance_id}" in html
    assert reverse("review-trajectory", args=[trajectory.pk]) in html
