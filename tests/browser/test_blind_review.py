"""Blind review in Debian's Chromium: the findings panel of a task in the blind sample stays
hidden while the reviewer works and shows once they have decided; the calibration page then
counts the decision as blind."""

import re

import pytest

from review.models import Review
from tests.browser.conftest import screenshot
from tests.browser.test_review_flows import fill_rubric
from tests.curation.calibration_seed import seed_calibration
from tests.review.scenario import rich_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FINDING_TEXT = "passed 1 of 3 runs on the reference"


def test_the_findings_panel_stays_hidden_until_the_reviewer_decides(new_page, alice, dataset):
    dataset.blind_review_share = 100
    dataset.save()
    task = rich_task(dataset=dataset)
    page = new_page(alice)
    page.goto("/")
    page.click("text=Claim next")
    page.wait_for_url(re.compile(rf"/review/tasks/{task.pk}/$"))
    page.wait_for_selector("#lease >> text=You hold this task")
    panel = page.locator("#findings")
    assert panel.locator("[data-findings-hidden]").is_visible()
    assert FINDING_TEXT not in panel.inner_text()
    assert FINDING_TEXT not in page.content()  # not merely hidden by a style: not sent at all
    # Nor on the trajectory page, nor as the "unsafe" hint in the trajectories tab.
    page.goto(f"/review/trajectories/{task.trajectories.first().pk}/")
    page.wait_for_selector("[data-findings-hidden]")
    page.go_back()
    page.wait_for_selector("#decision-form")
    screenshot(page, "task-blind")

    fill_rubric(page)
    page.click("button[data-decision=approve]")
    page.wait_for_selector("#decision >> text=The task is now approved")
    # The decision reloads the panel: now the reviewer sees what the agent found.
    page.wait_for_selector(f"#findings >> text={FINDING_TEXT}")
    assert page.locator("#findings [data-findings-hidden]").count() == 0
    assert Review.objects.get(task=task, reviewer=alice).blind is True
    assert page.errors == []


def test_the_calibration_page_tells_blind_from_informed(new_page, bob, dataset):
    seed_calibration(dataset)
    page = new_page(bob)
    page.goto("/calibration/?dataset=core")
    blind = page.locator('tr[data-calibration="blind:review_agent"]')
    assert blind.get_attribute("data-verdict") == "beats_every_baseline"
    assert "beats every baseline" in blind.inner_text()
    assert "anchoring possible" in page.locator("#group-informed").inner_text()
    screenshot(page, "calibration")
    page.goto("/?dataset=core")
    card = page.locator("#calibration-card")
    assert "beats every baseline" in card.inner_text()
    screenshot(page, "dashboard-calibration")
    assert page.errors == []
