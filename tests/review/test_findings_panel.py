"""The findings panel shows the latest set of each source, says when a set was made on an
earlier revision, and the queue counts only current findings (history is kept, not shown)."""

import pytest
from django.urls import reverse

from curation.models import Task
from curation.services.audit import audit_record
from tests.factories import TaskFactory
from workers.audit.facts import AuditResult, FindingDraft

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _audit(task, *messages):
    drafts = [FindingDraft(kind="weak_test", severity="high", message=m, key=m) for m in messages]
    audit_record(
        task=Task.objects.get(pk=task.pk),
        result=AuditResult(findings=drafts, unsafe=set()),
        llm=None,
        job=None,
    )


def test_the_panel_shows_the_latest_set_and_marks_one_from_an_earlier_revision(
    client, alice, dataset
):
    task = TaskFactory(dataset=dataset)
    _audit(task, "first audit: an empty patch passes", "first audit: another")
    _audit(task, "second audit: an empty patch passes")
    client.force_login(alice)
    panel = client.get(reverse("review-task-panel", args=[task.pk, "findings"]), **HTMX)
    assert b"second audit" in panel.content and b"first audit" not in panel.content
    assert b"made on an earlier revision" not in panel.content
    queue = client.get(reverse("review-queue"), {"findings": "yes"})
    assert b'<span class="badge medium">1</span>' in queue.content  # not 3: history is kept apart

    Task.objects.filter(pk=task.pk).update(revision=2)  # edited; r2 not audited yet
    panel = client.get(reverse("review-task-panel", args=[task.pk, "findings"]), **HTMX)
    assert b"second audit" in panel.content and b"made on an earlier revision" in panel.content
    _audit(task)  # r2 audited: nothing found
    panel = client.get(reverse("review-task-panel", args=[task.pk, "findings"]), **HTMX)
    assert b"second audit" not in panel.content and b"No open findings." in panel.content
