"""The reviewer's workspace in Chromium at 1400x900 and 1024x768: the spec graph is readable
and clickable at 3 and 14 specs, the tab bar stays on one line, nothing spills into the next
column, and editing a test's code changes the test patch the export ships.

Screenshots go to screenshots/ at the repository root (gitignored) for a person to look at.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from curation.models import Task
from review import services
from tests.review.scenario import many_specs_task, rich_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(__file__).resolve().parents[2] / "screenshots"
SIZES = {"1400": (1400, 900), "1024": (1024, 768)}


def shot(page, name: str, *, full_page: bool = False) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def box(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()


def _open(new_page, user, task, size: str):
    page = new_page(user, viewport=SIZES[size])
    page.goto(f"/review/tasks/{task.pk}/")
    page.wait_for_selector("#decision")
    return page


@pytest.mark.parametrize("size", sorted(SIZES))
@pytest.mark.parametrize("count", [3, 14])
def test_the_spec_graph_is_readable_and_links_to_its_specs(new_page, alice, dataset, size, count):
    task = many_specs_task(dataset=dataset, specs=count)
    services.review_claim(task=task, user=alice)
    page = _open(new_page, alice, task, size)
    # Near the top of the page, beside the specs (a long statement is folded): its top is
    # within the first screen and a half, not thousands of pixels down.
    top = page.evaluate(
        "() => document.getElementById('spec-graph').getBoundingClientRect().top + scrollY"
    )
    assert top < 1.5 * SIZES[size][1], top
    page.locator("#spec-graph").scroll_into_view_if_needed()
    shot(page, f"graph-{count}-specs-{size}")
    # Readable: the labels are drawn at 11 px or more on screen, whatever the spec count.
    label = box(page, "svg.depgraph a.node text.key")
    assert label["height"] >= 11, label
    nodes = page.locator("svg.depgraph a.node")
    assert nodes.count() == count
    # Every node sits inside the drawing (nothing clipped off its edges).
    svg = box(page, "svg.depgraph")
    for i in range(count):
        b = nodes.nth(i).bounding_box()
        assert svg["x"] - 1 <= b["x"] and b["x"] + b["width"] <= svg["x"] + svg["width"] + 1
    # The legend names both kinds of edge, and both are drawn.
    legend = page.locator("#spec-graph .legend").inner_text()
    assert "declared" in legend and "observed" in legend
    if count > 3:
        assert page.locator("svg.depgraph path.edge.observed").count() >= 1
        assert page.locator("svg.depgraph path.edge.declared").count() >= 1

    # A node takes you to its spec.
    last = f"S{count}"
    page.locator(f'svg.depgraph a.node[data-spec="{last}"]').click()
    expect(page.locator(f"#spec-{last}")).to_have_class(re.compile("item-focus"))
    page.wait_for_timeout(600)  # the smooth scroll
    card = box(page, f"#spec-{last}")
    assert 0 <= card["y"] < SIZES[size][1]

    # Zoom in, then enlarge: the drawing grows, the page does not break.
    before = box(page, "svg.depgraph")["width"]
    page.click("[data-graph-zoom='1']")
    assert box(page, "svg.depgraph")["width"] > before
    page.click("[data-graph-enlarge]")
    assert "enlarged" in page.locator("#spec-graph").get_attribute("class")
    shot(page, f"graph-{count}-specs-{size}-enlarged")
    page.keyboard.press("Escape")
    assert "enlarged" not in page.locator("#spec-graph").get_attribute("class")
    # The same graph in words.
    page.click("text=The graph as a list")
    assert page.locator("[data-graph-list] li").count() == count
    assert page.errors == []


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_dense_graph_opens_as_a_matrix(new_page, alice, dataset, size):
    """Real synthesised tasks have specs that all need each other (100+ observed edges): as
    lines they cannot be followed, so the card opens on the matrix; the graph is one click."""
    task = many_specs_task(dataset=dataset, specs=14, dense=True)
    page = _open(new_page, alice, task, size)
    card = page.locator("#spec-graph")
    assert card.get_attribute("data-view") == "matrix"
    page.locator("#spec-graph").scroll_into_view_if_needed()
    matrix = page.locator(".spec-matrix")
    assert matrix.is_visible() and not page.locator("svg.depgraph").is_visible()
    assert page.locator(".spec-matrix tbody tr").count() == 14
    # Every cell stays readable: at least 20 px a side, and the matrix fits its column or
    # scrolls inside it, never over the middle column.
    cell = page.locator(".spec-matrix tbody td").first.bounding_box()
    assert cell["width"] >= 20 and cell["height"] >= 20
    wrap = box(page, ".spec-matrix-wrap")
    assert (
        wrap["x"] + wrap["width"]
        <= box(page, "#spec-graph")["x"] + box(page, "#spec-graph")["width"]
    )
    observed = page.locator(".spec-matrix td.observed").first
    assert "needs" in observed.get_attribute("title")
    shot(page, f"graph-dense-matrix-{size}")
    page.click("[data-graph-view='graph']")
    assert page.locator("svg.depgraph").is_visible() and not matrix.is_visible()
    shot(page, f"graph-dense-lines-{size}")
    page.locator(".spec-matrix-wrap").evaluate("e => e")  # still in the page
    page.click("[data-graph-view='matrix']")
    page.locator('.spec-matrix tbody th a[href="#spec-S7"]').click()
    assert page.errors == []


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_workspace_layout_holds_at_common_widths(new_page, alice, dataset, size):
    task = rich_task(dataset=dataset)
    test = task.tests.first()
    test.nodeid = (
        "tests/test_toc_spec.py::test_a_rather_long_parametrised_name_that_keeps_going"
        "[case with spaces and \\xfcn\\xefcode and more words]"
    )
    test.save()
    services.review_claim(task=task, user=alice)
    page = _open(new_page, alice, task, size)
    shot(page, f"task-tests-{size}")

    # The tab bar is one line: every tab has the same top and a single line of text.
    tabs = page.locator(".tabs [data-tab]")
    tops = {round(tabs.nth(i).bounding_box()["y"]) for i in range(tabs.count())}
    heights = {round(tabs.nth(i).bounding_box()["height"]) for i in range(tabs.count())}
    assert len(tops) == 1 and max(heights) < 40, (tops, heights)
    # Every tab is whole inside the bar (none scrolled out of sight), and the bar does not
    # reach into the right column (the History key hint overlapped the lease badge).
    bar = box(page, ".tabs")
    last_tab = tabs.nth(tabs.count() - 1).bounding_box()
    assert last_tab["x"] + last_tab["width"] <= bar["x"] + bar["width"] + 1
    right = box(page, ".zone-right")
    if right["y"] < bar["y"] + bar["height"]:  # the right column sits beside the tabs
        assert bar["x"] + bar["width"] <= right["x"] + 1
    # "verified by" chips stay inside the spec card.
    card = box(page, "#spec-S1")
    for chip in page.locator("#spec-S1 .test-chip").all():
        b = chip.bounding_box()
        assert b["x"] + b["width"] <= card["x"] + card["width"] + 1
    # Unicode in ids reads as such.
    assert "ünïcode" in page.locator(".test-name").first.inner_text()
    assert "\\xfc" not in page.locator(".zone-middle").inner_text()

    page.keyboard.press("5")
    page.wait_for_selector(".timeline")
    shot(page, f"task-history-{size}")
    page.keyboard.press("2")
    shot(page, f"task-reference-{size}")
    page.keyboard.press("1")
    page.goto("/")
    shot(page, f"dashboard-{size}")
    assert page.errors == []


def test_a_reviewer_edits_a_test_and_the_export_carries_it(
    new_page, alice, dataset, repo_storage, job_runner
):
    """In the browser, on a real repository: edit a test's code, see the saved note end when
    the real validation does and the test patch tab change; the export carries the edit."""
    from curation.exports.records import task_records
    from tests.curation.tasks_fixtures import hand_made_task

    dataset.validation_reruns = 1
    dataset.save()
    task = hand_made_task("marktext_toc", dataset=dataset)
    Task.objects.filter(pk=task.pk).update(
        status=Task.Status.NEEDS_REVIEW, validated_revision=task.revision
    )
    task.refresh_from_db()
    services.review_claim(task=task, user=alice)
    page = _open(new_page, alice, task, "1400")
    nodeid = "tests/test_toc_spec.py::test_heading_anchors_are_unique"
    test = task.tests.get(nodeid=nodeid)
    card = page.locator(f"#test-{test.pk}")
    card.locator("[data-edit]").click()
    area = page.locator("#id_code")
    area.wait_for()
    code = area.input_value()
    assert code.startswith("def test_heading_anchors_are_unique():")
    area.fill(code + "\n    assert len(anchors) == 5  # checked by a reviewer")
    shot(page, "edit-test-form-1400")
    page.keyboard.press("Control+Enter")
    note = page.locator(f"#test-{test.pk} [data-saved-note]")
    note.wait_for()
    assert "Saved as r2" in note.inner_text()
    # The validation job runs (in this test's worker thread); when it ends the header says
    # so and the note no longer says "revalidating" (it stopped polling, or its panel was
    # refreshed with the validated task).
    page.wait_for_selector("#task-head >> text=r2 validated", timeout=90_000)
    expect(page.locator("[data-saved-note]:has-text('revalidating')")).to_have_count(
        0, timeout=10_000
    )
    shot(page, "edit-test-saved-1400")
    assert page.locator("[data-history-count]").inner_text() == "r2"
    page.keyboard.press("3")
    page.wait_for_selector("#patch-test >> text=checked by a reviewer", timeout=60_000)
    shot(page, "edit-test-patch-tab-1400")
    task.refresh_from_db()
    assert task.revision == 2
    assert "+    assert len(anchors) == 5  # checked by a reviewer\n" in task.test_patch
    record = next(task_records(Task.objects.filter(pk=task.pk)))
    assert "# checked by a reviewer" in record["test_patch"]
    assert page.errors == []


@pytest.mark.parametrize("size", sorted(SIZES))
def test_screenshots_of_the_review_pages(new_page, alice, bob, dataset, size, settings):
    """Every review page at both sizes, error pages included, without a script error."""
    from tests.factories import TaskFactory, UserFactory

    task = rich_task(dataset=dataset)
    for n in range(12):
        TaskFactory(dataset=dataset, title=f"Parse durations with units, case {n}")
    frank = UserFactory(username="frank", roles=["reviewer"])
    dataset.members.add(frank)
    services.review_claim(task=task, user=alice)
    page = new_page(alice, viewport=SIZES[size])
    pages = {
        "dashboard": "/",
        "queue": "/review/queue/",
        "trajectory": f"/review/trajectories/{task.trajectories.first().pk}/",
        "agreement": "/review/agreement/",
        "404": "/review/tasks/999999/",
        "403": "/review/adjudication/",
    }
    for name, url in pages.items():
        page.goto(url)
        shot(page, f"page-{name}-{size}")
    assert "Not allowed" in page.content()
    page.goto(f"/review/tasks/{task.pk}/")
    for key, name in (
        ("1", "tests"),
        ("2", "reference"),
        ("3", "testpatch"),
        ("4", "trajectories"),
    ):
        page.keyboard.press(key)
        shot(page, f"page-task-{name}-{size}")
    curator = new_page(bob, viewport=SIZES[size])
    curator.goto("/review/adjudication/")
    shot(curator, f"page-adjudication-{size}")
    assert page.errors == [] and curator.errors == []
