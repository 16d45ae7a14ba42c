"""The renderers put repository and agent text on the page: everything must come out inert."""

from types import SimpleNamespace

import pytest
from django.conf import settings

from review import graph, rendering

HOSTILE = "<script>alert(1)</script><img src=x onerror=alert(2)>\"'&"


def test_markdown_is_sanitized():
    html = rendering.markdown_html(f"# Title\n\n{HOSTILE}\n\n[x](javascript:alert(3)) **ok**")
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html
    assert "<strong>ok</strong>" in html and "<h1>Title</h1>" in html


def test_diffs_escape_code_and_mark_changed_words():
    patch = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,2 @@\n"
        f' x = "{HOSTILE}"\n-y = compute(a, b)\n+y = compute(a, c)\n'
    )
    diff = rendering.parse_diff(patch)
    assert not diff.error and diff.added == 1 and diff.removed == 1
    html = str(rendering.diff_tables(diff.files[0], "reference", {}))
    assert "<script" not in html and "<img" not in html and "&lt;script&gt;" in html
    assert '<mark class="wd">' in html
    assert 'class="unified-view"' in html.replace("diff-table ", "")
    assert len(diff.files[0].rows) == 2  # the split layout pairs the changed lines


def test_a_broken_diff_reports_instead_of_failing():
    short = rendering.parse_diff("--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n x\n")
    assert short.files == []
    assert short.error == "not a valid unified diff: Hunk is shorter than expected"
    headless = rendering.parse_diff("@@ nonsense")
    assert headless.files == []
    assert headless.error == "not a valid unified diff: it names no file"
    assert rendering.parse_diff("  \n") == rendering.Diff(files=[])  # no patch is no error


def test_multiline_strings_stay_strings_across_lines():
    lines = rendering.highlight_code('x = """one\ntwo <b>\nthree"""')
    assert 'class="s2"' in lines[1] and "&lt;b&gt;" in lines[1]


def test_the_dependency_graph_escapes_labels_and_draws_both_evidences():
    specs = [
        SimpleNamespace(key="S1", kind="functional", statement=HOSTILE),
        SimpleNamespace(key="S2<x>", kind="interface", statement="ok"),
        SimpleNamespace(key="S3", kind="security", statement="ok"),
    ]
    edges = [
        {"from": "S1", "to": "S2<x>", "declared": True, "observed": True, "detail": HOSTILE},
        {"from": "S3", "to": "S2<x>", "declared": False, "observed": True, "detail": ""},
        {"from": "S3", "to": "S1", "declared": True, "observed": False, "detail": ""},
    ]
    svg = str(graph.dependency_svg(specs, edges))
    assert "<script" not in svg and "S2&lt;x&gt;" in svg
    assert 'class="edge both"' in svg and 'class="edge observed"' in svg
    assert 'class="edge declared"' in svg


def test_the_pass_rate_chart_escapes_model_names():
    rows = [{"model": "<b>m</b>", "kind": "security", "satisfied": 1, "total": 2}]
    svg = str(rendering.pass_rate_svg(rows, kinds=["functional", "security"]))
    assert "<b>" not in svg and "&lt;b&gt;m&lt;/b&gt;" in svg and "50%" in svg


@pytest.mark.django_db
def test_the_beat_task_expires_leases(dataset, alice):
    from datetime import timedelta

    from django.utils import timezone

    from review import services
    from review.models import ReviewAssignment
    from review.tasks import expire_leases
    from tests.factories import TaskFactory

    task = TaskFactory(dataset=dataset)
    lease = services.review_claim(task=task, user=alice)
    ReviewAssignment.objects.filter(pk=lease.pk).update(expires_at=timezone.now() - timedelta(1))
    assert expire_leases() == 1
    assert "review.expire_leases" in {e["task"] for e in settings.CELERY_BEAT_SCHEDULE.values()}
