"""Screenshots of the main pages into var/screenshots/ (not committed) for a person to look at.

They also prove the pages run without a script error under the Content-Security-Policy.
"""

import pytest

from review import services
from tests.browser.conftest import screenshot
from tests.factories import TaskFactory, UserFactory
from tests.review.scenario import rich_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_it_shows_the_main_pages(new_page, alice, bob, dataset):
    task = rich_task(dataset=dataset)
    for n in range(30):
        TaskFactory(
            dataset=dataset,
            title=f"Parse durations with units, case {n}",
            status=["needs_review", "draft", "approved", "validating"][n % 4],
        )
    frank = UserFactory(username="frank", roles=["reviewer"])
    dataset.members.add(frank)
    dataset.reviews_required = 2
    dataset.save()
    for n in range(6):
        reviewed = TaskFactory(dataset=dataset, title=f"Reviewed task {n}")
        reviewed.validated_revision = 1
        reviewed.save()
        for person, decision in ((alice, "approve"), (frank, "approve" if n % 3 else "reject")):
            services.review_claim(task=reviewed, user=person)
            services.review_submit(
                task=reviewed,
                user=person,
                expected_revision=1,
                rubric=services.RubricInput(decision, n % 2, n % 3 // 2, 1, "15m-1h", "why"),
            )
    services.review_claim(task=task, user=alice)
    login = new_page()
    login.goto("/accounts/login/")
    screenshot(login, "login")
    page = new_page(alice)

    page.goto("/")
    page.wait_for_selector("h1:text('Dashboard')")
    screenshot(page, "dashboard")

    page.goto("/review/queue/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    screenshot(page, "queue")

    page.goto(f"/review/tasks/{task.pk}/")
    page.wait_for_selector("#decision-form")
    page.click("text=Spec clarity >> xpath=.. >> label:nth-child(2)")
    screenshot(page, "task-tests")
    page.keyboard.press("2")
    screenshot(page, "task-reference-unified")
    page.keyboard.press("u")
    screenshot(page, "task-reference-split")
    page.keyboard.press("u")
    page.keyboard.press("4")
    screenshot(page, "task-trajectories")
    page.keyboard.press("5")
    page.wait_for_selector(".timeline")
    screenshot(page, "task-history")
    page.keyboard.press("1")
    page.keyboard.press("?")
    screenshot(page, "help")
    page.keyboard.press("Escape")

    page.goto(f"/review/trajectories/{task.trajectories.get(model_name='qwen3-coder-30b').pk}/")
    screenshot(page, "trajectory")
    page.goto("/review/agreement/")
    screenshot(page, "agreement")
    assert page.errors == []
    curator = new_page(bob)
    curator.goto("/review/adjudication/")
    screenshot(curator, "adjudication")
    curator.goto("/")
    screenshot(curator, "dashboard-curator")
    assert curator.errors == []
