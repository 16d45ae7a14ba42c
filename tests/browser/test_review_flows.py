"""The reviewer's main flows in Debian's Chromium: log in, claim, edit and revalidate for real,
approve; two browsers racing for the last slot; a stale edit; the keyboard; hostile content."""

import re
import time

import pytest

from curation.models import Task
from curation.services.validation import task_validation_enqueue
from review import services
from review.models import Review, ReviewAssignment
from tests.browser.conftest import PASSWORD, screenshot
from tests.curation.tasks_fixtures import hand_made_task
from tests.factories import UserFactory
from tests.review.scenario import XSS, rich_task
from workers.models import Job
from workers.services import job_execute

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def fill_rubric(page, clarity="0", validity="0", interdependency="1", difficulty="15m-1h"):
    for name, value in (
        ("spec_clarity", clarity),
        ("test_validity", validity),
        ("interdependency", interdependency),
        ("difficulty", difficulty),
    ):
        page.locator(f'input[name="{name}"][value="{value}"]').check(force=True)


@pytest.mark.slow
def test_log_in_claim_edit_a_spec_watch_revalidation_and_approve(
    new_page, live_server, alice, dataset, repo_storage, job_runner
):
    dataset.validation_reruns = 1
    dataset.save()
    task = hand_made_task("marktext_toc", dataset=dataset)
    job = task_validation_enqueue(task=task)
    job_execute(job_id=job.pk)  # or the runner thread takes it first: either way, wait for it
    for _ in range(600):
        job.refresh_from_db()
        if job.is_finished:
            break
        time.sleep(0.1)
    assert job.status == Job.Status.SUCCEEDED, job.error
    task.refresh_from_db()
    assert task.status == Task.Status.NEEDS_REVIEW and task.is_validated

    page = new_page()
    page.goto("/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", "alice")
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    page.wait_for_selector("[data-error]")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("h1:text('Dashboard')")

    page.click("text=Claim next")
    page.wait_for_url(re.compile(rf"/review/tasks/{task.pk}/$"))
    page.wait_for_selector("#lease >> text=You hold this task")
    assert page.locator("button[data-decision=approve]").is_enabled()

    page.click("#spec-S2 [data-edit]")
    page.wait_for_selector("#id_statement")
    page.fill(
        "#id_statement",
        "unique_slug(slug, seen) returns slug, then slug-1, slug-2, skipping numbers already "
        "taken; an empty slug becomes 'section'.",
    )
    page.click("[data-save]")
    page.wait_for_selector("#spec-S2 >> text=Saved as r2")
    page.wait_for_selector("#task-head >> text=r2")
    # Approve waits for r2 to validate; the job's progress shows while it runs.
    page.wait_for_selector("button[data-decision=approve][disabled]")
    # The running job shows (the page polls it), then finishes at 100%.
    page.wait_for_selector("#task-jobs .job.live", timeout=20_000)
    # An arrow function, not an expression: the page's CSP forbids eval of strings.
    page.wait_for_function(
        """() => {
            const job = document.querySelector("#task-jobs [data-job]");
            const bar = job && job.querySelector("[aria-valuenow]");
            return job && job.dataset.jobStatus === "succeeded"
                && bar.getAttribute("aria-valuenow") === "100";
        }""",
        timeout=60_000,
    )
    screenshot(page, "flow-after-revalidation")
    page.wait_for_selector("button[data-decision=approve]:not([disabled])", timeout=20_000)
    page.wait_for_selector("#task-head >> text=r2 validated")

    fill_rubric(page)
    page.click("button[data-decision=approve]")
    page.wait_for_selector("#decision >> text=The task is now approved")
    task.refresh_from_db()
    assert (
        task.status == Task.Status.APPROVED and task.revision == 2 and task.validated_revision == 2
    )
    review = Review.objects.get(task=task)
    assert review.reviewer == alice and review.task_revision == 2
    assert page.errors == []


def test_two_browsers_race_for_the_last_review_slot(new_page, dataset, bob):
    dataset.reviews_required = 2
    dataset.save()
    task = rich_task(dataset=dataset)
    services.review_claim(task=task, user=bob)  # one of two slots is taken
    racers = [UserFactory(username=name, roles=["reviewer"]) for name in ("rita", "sam")]
    dataset.members.add(*racers)
    pages = [new_page(person) for person in racers]
    for page in pages:
        page.goto(f"/review/tasks/{task.pk}/")
        page.wait_for_selector("[data-claim]")
    # Both click before either answer arrives.
    for page in pages:
        page.locator("[data-claim]").dispatch_event("click")
    outcomes = []
    for page in pages:
        page.wait_for_selector("#lease >> text=/You hold this task|No review slot is left/")
        outcomes.append(
            "won" if page.locator("#lease >> text=You hold this task").count() else "lost"
        )
    assert sorted(outcomes) == ["lost", "won"]
    task.refresh_from_db()
    assert task.review_slots_taken == 2
    assert ReviewAssignment.objects.filter(task=task, status="active").count() == 2


def test_a_stale_edit_gets_409_and_shows_the_other_change(new_page, dataset, alice, bob):
    task = rich_task(dataset=dataset)
    services.review_claim(task=task, user=alice)
    first, second = new_page(alice), new_page(bob)
    for page in (first, second):
        page.goto(f"/review/tasks/{task.pk}/")
        page.click("#spec-S1 [data-edit]")
        page.wait_for_selector("#id_statement")
    first.fill("#id_statement", "Alice: build_toc nests headings.")
    first.click("[data-save]")
    first.wait_for_selector("#spec-S1 >> text=Saved as r2")
    second.fill("#id_statement", "Bob: build_toc returns a tree.")
    with second.expect_response(
        lambda r: "/edit/spec/S1" in r.url and r.request.method == "POST"
    ) as response:
        second.click("[data-save]")
    assert response.value.status == 409
    second.wait_for_selector("[data-conflict]")
    conflict = second.inner_text("[data-conflict]")
    assert "Someone saved first" in conflict and "Alice: build_toc nests headings." in conflict
    assert (
        second.input_value("#id_statement") == "Bob: build_toc returns a tree."
    )  # nothing of Bob's is lost
    screenshot(second, "stale-edit-409")
    second.click("[data-save]")
    second.wait_for_selector("#spec-S1 >> text=Saved as r3")
    task.refresh_from_db()
    assert (
        task.revision == 3
        and task.specs.get(key="S1").statement == "Bob: build_toc returns a tree."
    )


def test_the_keyboard_shortcuts(new_page, dataset, alice):
    task = rich_task(dataset=dataset)
    services.review_claim(task=task, user=alice)
    page = new_page(alice)

    page.goto("/review/queue/")
    page.keyboard.press("j")
    assert page.locator("tr.focused").count() == 1
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/review/tasks/{task.pk}/$"))

    page.keyboard.press("?")
    assert page.locator("#help").is_visible()
    page.keyboard.press("Escape")
    assert not page.locator("#help").is_visible()

    page.keyboard.press("2")
    assert page.locator("[data-panel=reference]").is_visible()
    page.keyboard.press("u")
    assert page.locator("#patch-reference .split-view").first.is_visible()
    page.keyboard.press("u")
    page.keyboard.press("1")
    assert page.locator("[data-panel=tests]").is_visible()

    page.keyboard.press("j")  # the problem statement
    page.keyboard.press("j")  # the first spec
    assert page.locator(".item-focus").get_attribute("id") == "spec-S1"
    page.keyboard.press("e")
    page.wait_for_selector("#id_statement:focus")
    page.keyboard.press("Escape")
    page.wait_for_selector("#spec-S1 .spec-statement")

    # Approve is refused until the rubric is filled; then c requests changes with a comment.
    page.keyboard.press("a")
    page.wait_for_selector("#toast >> text=Fill in the rubric first")
    fill_rubric(page, clarity="2")
    page.fill("#decision-comment", "S2 can be read two ways.")
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("c")
    page.wait_for_selector("#decision >> text=The task is now changes requested")
    assert Review.objects.get(task=task).decision == "request_changes"
    assert page.errors == []


def test_hostile_agent_output_and_spec_statements_render_inert(new_page, dataset, alice):
    task = rich_task(dataset=dataset)
    spec = task.specs.get(key="S1")
    spec.statement = "Evil " + XSS + " [click](javascript:alert(1))"
    spec.save()
    task.problem_statement += "\n\n<script>alert('statement')</script>"
    task.save()
    page = new_page(alice)
    page.goto(f"/review/tasks/{task.pk}/")
    assert "<script>" in page.inner_text("#spec-S1")  # shown as text
    assert page.locator("#spec-S1 img").count() == 0
    assert page.locator("#spec-S1 a[href^=javascript]").count() == 0
    page.goto(f"/review/trajectories/{task.trajectories.get(model_name='gpt-oss-20b').pk}/")
    page.locator("details.fold summary").first.click()
    assert "document.body.dataset.pwned" in page.inner_text(".steps-col")
    assert page.evaluate("document.body.dataset.pwned") is None
    assert page.locator(".steps-col img, .steps-col script").count() == 0
    assert page.errors == []
