"""Every page and partial of the workspace: roles, wrong methods, bad input, and what they do."""

import pytest
from django.urls import reverse

from curation.models import Task
from review import services
from review.models import Comment, Review, ReviewAssignment
from tests.factories import DatasetFactory, TaskFactory, UserFactory
from tests.review.scenario import rich_task

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def task(dataset):
    return rich_task(dataset=dataset)


@pytest.fixture
def dave(db):
    """A reviewer, but not of the `core` dataset: an outsider to its tasks."""
    return UserFactory(username="dave", roles=["reviewer"])


def task_urls(task):
    traj = task.trajectories.first()
    spec = task.specs.first()
    test = task.tests.first()
    get = [
        reverse("review-task", args=[task.pk]),
        reverse("review-task-panel", args=[task.pk, "decision"]),
        reverse("review-task-history", args=[task.pk]),
        reverse("review-task-jobs", args=[task.pk]),
        reverse("review-task-saved", args=[task.pk, task.revision]),
        reverse("review-trajectory", args=[traj.pk]),
    ]
    post = [
        reverse("review-task-claim", args=[task.pk]),
        reverse("review-task-release", args=[task.pk]),
        reverse("review-task-heartbeat", args=[task.pk]),
        reverse("review-task-decide", args=[task.pk]),
        reverse("review-task-comment", args=[task.pk]),
        reverse("review-task-edit-item", args=[task.pk, "spec", spec.key]),
        reverse("review-task-edit-item", args=[task.pk, "test", test.pk]),
        reverse("review-task-edit", args=[task.pk, "statement"]),
    ]
    return get, post


PAGES = ["dashboard", "review-queue", "review-agreement"]


# --- roles -------------------------------------------------------------------------------------


def test_anonymous_users_are_sent_to_log_in(client, task):
    get, post = task_urls(task)
    for url in [reverse(n) for n in PAGES] + get:
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"], url
    for url in post:
        assert client.post(url).status_code == 302, url


def test_a_user_without_a_role_gets_403_pages_and_404_tasks(client, carol, task):
    client.force_login(carol)
    for name in PAGES:
        response = client.get(reverse(name))
        assert response.status_code == 403
        assert b"No access yet" in response.content
    assert client.get(reverse("review-adjudication")).status_code == 403
    get, post = task_urls(task)
    for url in get:
        assert client.get(url).status_code == 404, url
    for url in post:
        assert client.post(url).status_code == 404, url


def test_a_reviewer_of_another_dataset_gets_404_for_every_task_url(client, dave, task):
    client.force_login(dave)
    get, post = task_urls(task)
    for url in get:
        assert client.get(url, **HTMX).status_code == 404, url
    for url in post:
        assert client.post(url, **HTMX).status_code == 404, url
    response = client.get(reverse("review-queue"))
    assert task.instance_id not in response.content.decode()


def test_only_curators_open_the_adjudication_queue(client, alice, bob):
    client.force_login(alice)
    assert client.get(reverse("review-adjudication")).status_code == 403
    client.force_login(bob)
    assert client.get(reverse("review-adjudication")).status_code == 200


def test_only_curators_adjudicate(client, alice, task):
    client.force_login(alice)
    assert client.post(reverse("review-task-adjudicate", args=[task.pk]), **HTMX).status_code == 403


def test_navigation_follows_the_role(client, alice, bob):
    client.force_login(alice)
    html = client.get(reverse("dashboard")).content.decode()
    assert "Queue" in html and "Adjudication" not in html
    client.force_login(bob)
    assert "Adjudication" in client.get(reverse("dashboard")).content.decode()


# --- methods -----------------------------------------------------------------------------------


def test_pages_reject_post_and_actions_reject_get(client, alice, task):
    client.force_login(alice)
    get, post = task_urls(task)
    for url in [reverse(n) for n in PAGES] + get:
        assert client.post(url).status_code == 405, url
    for url in [*post[:5], reverse("review-claim-next")]:
        assert client.get(url).status_code == 405, url
    assert client.put(reverse("review-task-edit", args=[task.pk, "statement"])).status_code == 405


# --- dashboard and queue -------------------------------------------------------------------------


def test_the_dashboard_shows_counts_leases_jobs_and_the_chart(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    html = client.get(reverse("dashboard")).content.decode()
    assert "Tasks by status" in html and task.instance_id in html
    assert '<svg class="chart"' in html and "qwen3-coder-30b" in html
    assert client.get(reverse("review-running-jobs"), **HTMX).status_code == 200
    assert client.get(reverse("dashboard"), {"dataset": "nope"}).status_code == 404


def test_the_queue_filters_searches_and_pages_by_cursor(client, alice, dataset, task):
    for n in range(60):
        TaskFactory(dataset=dataset, title=f"Other task {n}", status=Task.Status.DRAFT)
    client.force_login(alice)
    url = reverse("review-queue")
    page = client.get(url).context["page"]
    assert len(page.rows) == 50 and page.next_cursor
    second = client.get(url, {"cursor": page.next_cursor}).context["page"]
    assert {t.pk for t in second.rows}.isdisjoint({t.pk for t in page.rows})
    assert len(second.rows) == 11 and not second.next_cursor
    assert [t.pk for t in client.get(url, {"status": "needs_review"}).context["page"].rows] == [
        task.pk
    ]
    assert [t.pk for t in client.get(url, {"findings": "yes"}).context["page"].rows] == [task.pk]
    assert [t.pk for t in client.get(url, {"q": "unique anchors"}).context["page"].rows] == [
        task.pk
    ]
    assert [t.pk for t in client.get(url, {"origin": "procedural"}).context["page"].rows] == [
        task.pk
    ]
    assert [t.pk for t in client.get(url, {"difficulty": "15m-1h"}).context["page"].rows] == [
        task.pk
    ]
    assert [
        t.pk for t in client.get(url, {"repository": task.repository.name}).context["page"].rows
    ] == [task.pk]
    newest = client.get(url, {"sort": "newest"}).context["page"].rows
    assert newest[0].pk > newest[-1].pk
    updated = client.get(url, {"sort": "updated"}).context["page"]
    deeper = client.get(url, {"sort": "updated", "cursor": updated.next_cursor}).context["page"]
    assert {t.pk for t in deeper.rows}.isdisjoint({t.pk for t in updated.rows})
    partial = client.get(url, {"status": "draft"}, HTTP_HX_TARGET="queue-results", **HTMX)
    assert partial.status_code == 200 and b"<html" not in partial.content


def test_the_queue_ignores_bad_filters_and_refuses_a_bad_cursor(client, alice, task):
    client.force_login(alice)
    url = reverse("review-queue")
    response = client.get(url, {"status": "bogus", "sort": "'; drop", "findings": "maybe"})
    assert response.status_code == 200 and response.context["page"].rows
    response = client.get(url, {"cursor": "not-a-cursor"})
    assert response.status_code == 302
    assert (
        client.get(url, {"cursor": "!!!"}, HTTP_HX_TARGET="queue-results", **HTMX).status_code
        == 400
    )


def test_claim_next_opens_the_claimed_task_or_says_the_queue_is_empty(client, alice, task):
    client.force_login(alice)
    response = client.post(reverse("review-claim-next"))
    assert response.status_code == 302 and response["Location"] == reverse(
        "review-task", args=[task.pk]
    )
    assert ReviewAssignment.objects.get(task=task, reviewer=alice).status == "active"
    other = UserFactory(username="erin", roles=["reviewer"])
    task.dataset.members.add(other)
    client.force_login(other)
    response = client.post(reverse("review-claim-next"), follow=True)
    assert b"Nothing left to claim" in response.content
    response = client.post(reverse("review-claim-next"), **HTMX)
    assert response.status_code == 200 and response["HX-Redirect"]


# --- the task page -----------------------------------------------------------------------------


def test_the_task_page_shows_everything_needed_for_the_decision(client, alice, task):
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    for expected in [
        "Problem statement",
        "depgraph",
        "S1",
        "S2",
        "S3",
        "declared",
        "observed",
        "FAIL_TO_PASS",
        "PASS_TO_PASS",
        "flaky",
        "marktext/anchors.py",
        "diff-table",
        "qwen3-coder-30b",
        "Specs satisfied per model",
        "Findings",
        "Claim this task",
    ]:
        assert expected in html, expected
    # Not holding the task: no decision form, no edit buttons.
    assert 'id="decision-form"' not in html and "data-edit hx-get" not in html


def test_the_task_page_shows_which_tests_verify_each_spec_and_the_unverified_ones(
    client, alice, task
):
    spec = task.specs.get(key="S3")
    spec.verified = False
    spec.verification_note = "none of its FAIL_TO_PASS tests fails without pkg/m.py::f"
    spec.save()
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert "2 verified · 1 unverified" in html
    assert "Unverified, not counted: none of its FAIL_TO_PASS tests fails without pkg/m.py::f" in (
        html
    )
    assert html.count(">unverified</span>") == 1
    verifier = task.specs.get(key="S1").tests.first()
    assert f'href="#test-{verifier.pk}"' in html


def test_the_task_page_query_count_does_not_grow_with_the_task(
    client, alice, dataset, django_assert_max_num_queries
):
    small = rich_task(dataset=dataset)
    services.review_claim(task=small, user=alice)
    client.force_login(alice)
    with django_assert_max_num_queries(20):
        assert client.get(reverse("review-task", args=[small.pk])).status_code == 200


@pytest.mark.parametrize(
    "panel",
    [
        "header",
        "decision",
        "approve",
        "specs",
        "tests",
        "findings",
        "comments",
        "patch-reference",
        "patch-test",
    ],
)
def test_every_panel_renders_alone(client, alice, task, panel):
    client.force_login(alice)
    response = client.get(reverse("review-task-panel", args=[task.pk, panel]), **HTMX)
    assert response.status_code == 200
    assert b"<html" not in response.content


def test_an_unknown_panel_is_404(client, alice, task):
    client.force_login(alice)
    assert client.get(reverse("review-task-panel", args=[task.pk, "secrets"])).status_code == 404


def test_the_jobs_partial_answers_286_when_the_watched_job_is_done(client, alice, task):
    from workers.models import Job
    from workers.services import job_enqueue

    job = job_enqueue(kind="echo", target=task)
    client.force_login(alice)
    url = reverse("review-task-jobs", args=[task.pk])
    running = client.get(url, **HTMX)
    assert running.status_code == 200 and b"every 1s" in running.content
    Job.objects.filter(pk=job.pk).update(status="succeeded", progress=100)
    done = client.get(url, {"watching": "1"}, **HTMX)
    assert done.status_code == 286 and "task-validated" in done["HX-Trigger"]
    assert b"every 1s" not in done.content


# --- leases ------------------------------------------------------------------------------------


def test_claim_heartbeat_and_release(client, alice, task):
    client.force_login(alice)
    assert client.post(reverse("review-task-claim", args=[task.pk]), **HTMX)["HX-Redirect"]
    beat = client.post(reverse("review-task-heartbeat", args=[task.pk]), **HTMX)
    assert beat.status_code == 200 and b"You hold this task" in beat.content
    released = client.post(reverse("review-task-release", args=[task.pk]), **HTMX)
    assert released["HX-Redirect"] == reverse("review-queue")
    task.refresh_from_db()
    assert task.review_slots_taken == 0
    lost = client.post(reverse("review-task-heartbeat", args=[task.pk]), **HTMX)
    assert lost.status_code == 286 and b"lease on this task ended" in lost.content
    assert client.post(reverse("review-task-release", args=[task.pk]), **HTMX).status_code == 409


def test_claiming_a_full_task_is_409(client, alice, bob, task):
    services.review_claim(task=task, user=bob)
    client.force_login(alice)
    response = client.post(reverse("review-task-claim", args=[task.pk]), **HTMX)
    assert response.status_code == 409 and b"No review slot is left" in response.content


# --- decisions ---------------------------------------------------------------------------------

DECISION = {
    "spec_clarity": "0",
    "test_validity": "1",
    "interdependency": "0",
    "difficulty": "15m-1h",
    "revision": "1",
}


def test_approve_records_the_review_and_applies_consensus(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    response = client.post(
        reverse("review-task-decide", args=[task.pk]), {**DECISION, "decision": "approve"}, **HTMX
    )
    assert response.status_code == 200, response.content
    assert b"now approved" in response.content and "task-decided" in response["HX-Trigger"]
    task.refresh_from_db()
    assert task.status == "approved"
    review = Review.objects.get(task=task)
    assert (review.spec_clarity, review.test_validity, review.difficulty) == (0, 1, "15m-1h")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"decision": "approve"}, "Rate spec clarity"),
        ({**DECISION, "decision": "maybe"}, "Select a valid choice"),
        ({**DECISION, "decision": "approve", "spec_clarity": "9"}, "Select a valid choice"),
        ({**DECISION, "decision": "approve", "test_validity": "2"}, "cannot be approved as is"),
        ({**DECISION, "decision": "reject"}, "Say what is wrong"),
    ],
)
def test_a_bad_decision_gets_400_with_the_reason(client, alice, task, data, message):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    response = client.post(reverse("review-task-decide", args=[task.pk]), data, **HTMX)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Review.objects.exists()


def test_deciding_without_a_lease_or_on_a_stale_revision_is_409(client, alice, task):
    client.force_login(alice)
    url = reverse("review-task-decide", args=[task.pk])
    response = client.post(url, {**DECISION, "decision": "approve"}, **HTMX)
    assert response.status_code == 409 and b"do not hold this task" in response.content
    services.review_claim(task=task, user=alice)
    response = client.post(url, {**DECISION, "decision": "approve", "revision": "7"}, **HTMX)
    assert response.status_code == 409 and b"changed while you reviewed" in response.content


def test_approve_of_an_unvalidated_revision_is_409_and_the_button_is_disabled(
    client, alice, dataset
):
    task = rich_task(dataset=dataset, validated=False)
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert 'data-decision="approve" disabled' in html
    response = client.post(
        reverse("review-task-decide", args=[task.pk]), {**DECISION, "decision": "approve"}, **HTMX
    )
    assert (
        response.status_code == 409
        and b"waits until the latest revision has validated" in response.content
    )


def test_a_decision_without_htmx_redirects_with_a_message(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    response = client.post(
        reverse("review-task-decide", args=[task.pk]),
        {**DECISION, "decision": "approve"},
        follow=True,
    )
    assert b"now approved" in response.content


def test_a_curator_adjudicates_from_the_task_page(client, bob, dataset, task):
    dataset.reviews_required = 2
    dataset.save()
    people = [UserFactory(username=f"r{i}", roles=["reviewer"]) for i in range(2)]
    dataset.members.add(*people)
    for person, decision in zip(people, ["approve", "reject"], strict=True):
        services.review_claim(task=task, user=person)
        services.review_submit(
            task=task,
            user=person,
            expected_revision=1,
            rubric=services.RubricInput(decision, 0, 0, 0, "<15m", "why"),
        )
    client.force_login(bob)
    assert task.instance_id in client.get(reverse("review-adjudication")).content.decode()
    html = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert "Adjudicate" in html and "review-task-adjudicate" not in html
    response = client.post(
        reverse("review-task-adjudicate", args=[task.pk]),
        {**DECISION, "decision": "reject", "comment": "tests are weak"},
        **HTMX,
    )
    assert response.status_code == 200 and b"now rejected" in response.content
    assert (
        client.post(
            reverse("review-task-adjudicate", args=[task.pk]),
            {**DECISION, "decision": "reject"},
            **HTMX,
        ).status_code
        == 404
    )


# --- edit in place -----------------------------------------------------------------------------


def test_a_reviewer_must_hold_the_task_to_edit(client, alice, task):
    client.force_login(alice)
    url = reverse("review-task-edit-item", args=[task.pk, "spec", "S1"])
    assert client.get(url, **HTMX).status_code == 403


def test_editing_a_spec_makes_a_revision_and_queues_revalidation(client, alice, task):
    from workers.models import Job

    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    url = reverse("review-task-edit-item", args=[task.pk, "spec", "S2"])
    form = client.get(url, **HTMX)
    assert form.status_code == 200 and b"Edit S2" in form.content
    response = client.post(
        url,
        {
            "statement": "unique_slug(slug, seen) numbers repeats.",
            "kind": "interface",
            "rationale": "",
            "depends_on": ["S3"],
            "revision": "1",
        },
        **HTMX,
    )
    assert response.status_code == 200, response.content
    assert b"Saved as r2" in response.content and "task-updated" in response["HX-Trigger"]
    task.refresh_from_db()
    assert task.revision == 2 and task.status == "validating"
    revision = task.revisions.get(revision=2)
    assert set(revision.changes) == {"specs.S2.statement", "specs.S2.depends_on"}
    assert revision.author == alice
    assert Job.objects.filter(kind="validate_task", params__revision=2).exists()
    assert list(
        task.dependencies.filter(from_spec__key="S2", evidence="declared").values_list(
            "to_spec__key", flat=True
        )
    ) == ["S3"]


def test_a_stale_edit_gets_409_with_the_other_persons_change(client, alice, bob, task):
    services.review_claim(task=task, user=alice)
    url = reverse("review-task-edit-item", args=[task.pk, "spec", "S1"])
    data = {
        "statement": "Alice's version.",
        "kind": "functional",
        "rationale": "",
        "depends_on": ["S2"],
        "revision": "1",
    }
    client.force_login(alice)
    assert client.post(url, data, **HTMX).status_code == 200
    client.force_login(bob)
    response = client.post(url, {**data, "statement": "Bob's version."}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 409
    assert (
        "Someone saved first" in html
        and "Alice&#x27;s version." in html
        and "Bob&#x27;s version." in html
    )
    assert 'name="revision" value="2"' in html
    # Saving again on top of r2 is an explicit choice, and it works.
    assert (
        client.post(
            url, {**data, "statement": "Bob's version.", "revision": "2"}, **HTMX
        ).status_code
        == 200
    )
    task.refresh_from_db()
    assert task.revision == 3 and task.specs.get(key="S1").statement == "Bob's version."


def test_ones_own_earlier_save_of_another_field_is_not_a_conflict(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    statement = reverse("review-task-edit", args=[task.pk, "statement"])
    assert (
        client.post(
            statement,
            {"title": task.title, "problem_statement": "New text.", "revision": "1"},
            **HTMX,
        ).status_code
        == 200
    )
    spec = reverse("review-task-edit-item", args=[task.pk, "spec", "S3"])
    response = client.post(
        spec,
        {"statement": "S3 now.", "kind": "error-handling", "depends_on": ["S1"], "revision": "1"},
        **HTMX,
    )
    assert response.status_code == 200
    task.refresh_from_db()
    assert task.revision == 3


@pytest.mark.parametrize(
    ("part", "ident", "data", "message"),
    [
        (
            "spec",
            "S1",
            {"statement": "", "kind": "functional", "revision": "1"},
            "This field is required",
        ),
        (
            "spec",
            "S1",
            {"statement": "x", "kind": "vibes", "revision": "1"},
            "Select a valid choice",
        ),
        (
            "spec",
            "S1",
            {"statement": "x", "kind": "functional", "depends_on": ["S1"], "revision": "1"},
            "Select a valid choice",
        ),
        (
            "statement",
            None,
            {"title": "", "problem_statement": "x", "revision": "1"},
            "This field is required",
        ),
        ("reference_patch", None, {"patch": "not a diff", "revision": "1"}, "reference patch"),
        ("test", None, {"code": "x", "revision": "abc"}, "Enter a whole number"),
    ],
)
def test_bad_edits_get_400_and_change_nothing(client, alice, task, part, ident, data, message):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    if part == "test":
        ident = str(task.tests.first().pk)
    url = (
        reverse("review-task-edit-item", args=[task.pk, part, ident])
        if ident
        else reverse("review-task-edit", args=[task.pk, part])
    )
    response = client.post(url, data, **HTMX)
    assert response.status_code == 400
    assert message in response.content.decode()
    task.refresh_from_db()
    assert task.revision == 1


def test_unknown_edit_targets_are_404(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    assert client.get(reverse("review-task-edit", args=[task.pk, "secrets"])).status_code == 404
    assert (
        client.get(reverse("review-task-edit-item", args=[task.pk, "spec", "S99"])).status_code
        == 404
    )
    assert (
        client.get(reverse("review-task-edit-item", args=[task.pk, "test", "x"])).status_code == 404
    )


def test_a_decided_task_cannot_be_edited(client, bob, dataset):
    task = rich_task(dataset=dataset, status=Task.Status.APPROVED)
    client.force_login(bob)
    assert (
        client.get(reverse("review-task-edit", args=[task.pk, "statement"]), **HTMX).status_code
        == 403
    )


def test_cancel_returns_the_display(client, alice, task):
    services.review_claim(task=task, user=alice)
    client.force_login(alice)
    response = client.get(
        reverse("review-task-edit-item", args=[task.pk, "spec", "S1"]), {"cancel": "1"}, **HTMX
    )
    assert response.status_code == 200 and b'id="spec-S1"' in response.content


# --- comments ----------------------------------------------------------------------------------


def test_comments_anchor_and_render_escaped(client, alice, task):
    client.force_login(alice)
    url = reverse("review-task-comment", args=[task.pk])
    response = client.post(
        url, {"body": "Is <b>this</b> **right**?", "anchor": "spec", "spec": "S2"}, **HTMX
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert "&lt;b&gt;this&lt;/b&gt;" in html and "<strong>right</strong>" in html
    assert (
        client.post(
            url,
            {
                "body": "line",
                "anchor": "patch_line",
                "patch": "reference",
                "file_path": "marktext/anchors.py",
                "line": "70",
            },
            **HTMX,
        ).status_code
        == 200
    )
    assert Comment.objects.filter(task=task).count() == 2
    page = client.get(reverse("review-task", args=[task.pk])).content.decode()
    assert "line-comments" in page


def test_a_new_comment_answers_with_the_thread_of_its_spot(client, alice, task):
    client.force_login(alice)
    url = reverse("review-task-comment", args=[task.pk])
    client.post(url, {"body": "first on S2", "anchor": "spec", "spec": "S2"}, **HTMX)
    client.post(url, {"body": "about S1", "anchor": "spec", "spec": "S1"}, **HTMX)
    response = client.post(url, {"body": "second on S2", "anchor": "spec", "spec": "S2"}, **HTMX)
    html = response.content.decode()
    assert html.index("first on S2") < html.index("second on S2")
    assert "about S1" not in html and "<html" not in html
    assert "comments-changed" in response["HX-Trigger"]


@pytest.mark.parametrize(
    "data",
    [
        {"body": "", "anchor": "task"},
        {"body": "x", "anchor": "spec", "spec": "S99"},
        {"body": "x", "anchor": "patch_line", "patch": "reference", "file_path": "a.py"},
        {"body": "x", "anchor": "elsewhere"},
    ],
)
def test_bad_comments_get_400(client, alice, task, data):
    client.force_login(alice)
    response = client.post(reverse("review-task-comment", args=[task.pk]), data, **HTMX)
    assert response.status_code == 400
    assert not Comment.objects.exists()


# --- trajectories and agreement ------------------------------------------------------------------


def test_the_trajectory_viewer_pages_steps_and_folds_long_output(client, alice, task):
    trajectory = task.trajectories.get(model_name="qwen3-coder-30b")
    client.force_login(alice)
    url = reverse("review-trajectory", args=[trajectory.pk])
    response = client.get(url)
    html = response.content.decode()
    assert response.status_code == 200
    assert 'id="step-19"' in html and 'id="step-20"' not in html and "Load more steps" in html
    assert "300 lines" in html  # the long observation is folded with its size shown
    more = client.get(url, {"after": "19"}, **HTMX)
    assert b'id="step-20"' in more.content and b"<html" not in more.content
    assert client.get(url, {"after": "x"}).status_code == 400


def test_agent_output_is_escaped_everywhere(client, alice, task):
    from tests.review.scenario import XSS

    client.force_login(alice)
    bad = task.trajectories.get(model_name="gpt-oss-20b")
    html = client.get(reverse("review-trajectory", args=[bad.pk])).content.decode()
    assert XSS not in html and "&lt;script&gt;" in html
    response = client.get(reverse("review-task", args=[task.pk]))
    assert "script-src 'self' 'nonce-" in response["Content-Security-Policy"]


def test_the_agreement_page(client, alice, dataset):
    dataset.reviews_required = 2
    dataset.save()
    people = [alice, UserFactory(username="frank", roles=["reviewer"])]
    dataset.members.add(people[1])
    for n in range(4):
        t = TaskFactory(dataset=dataset)
        t.validated_revision = 1
        t.save()
        for person in people:
            services.review_claim(task=t, user=person)
            services.review_submit(
                task=t,
                user=person,
                expected_revision=1,
                rubric=services.RubricInput(
                    "approve" if n % 2 else "reject", n % 2, 0, 1, "<15m", "c"
                ),
            )
    client.force_login(alice)
    response = client.get(reverse("review-agreement"))
    report = response.context["report"]
    assert report["multi_rated"] == 4
    assert next(i for i in report["items"] if i["field"] == "decision")["alpha"] == 1.0
    assert report["pairs"][0].kappa == 1.0 and report["pairs"][0].shared == 4
    stats = {r.reviewer: r for r in report["reviewers"]}
    assert stats["alice"].reviews == 4 and stats["alice"].agreement == 1.0
    assert client.get(reverse("review-agreement"), {"dataset": "nope"}).status_code == 404
    other = DatasetFactory(name="hidden")
    assert client.get(reverse("review-agreement"), {"dataset": other.name}).status_code == 404
