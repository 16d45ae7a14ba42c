"""The task page: the whole workspace, its zones re-rendered one at a time, its history, its
job progress, and comments."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from curation.models import Specification, Task
from review import services
from review.forms import RUBRIC_HELP, CommentForm
from review.models import Comment
from review.selectors import workspace as selectors
from review.selectors.history import task_history as history_events
from review.views.common import partial, reviewer_required, stop_polling, task_for


def workspace_context(request, task: Task) -> dict:
    workspace = selectors.task_workspace(task=task, user=request.user)
    prev_id, next_id = selectors.neighbours(task=task, user=request.user)
    return {
        "nav": "queue",
        "w": workspace,
        "task": task,
        "prev_id": prev_id,
        "next_id": next_id,
        "rubric_help": RUBRIC_HELP,
        "difficulties": Task.Difficulty.choices,
        "spec_kinds": Specification.Kind.values,
        "form": None,
    }


def patch_vars(workspace: selectors.Workspace, name: str) -> dict:
    """What the `patch-block` partial needs for the reference or the test patch."""
    if name == "reference":
        return {
            "patch_name": "reference",
            "diff": workspace.reference_diff,
            "patch_field": "reference_patch",
        }
    return {"patch_name": "test", "diff": workspace.test_diff, "patch_field": "test_patch"}


@require_GET
@reviewer_required
def task_detail(request, task_id):
    task = task_for(request, task_id)
    return render(request, "review/task.html", workspace_context(request, task))


PANELS = {
    "header": "header",
    "approve": "approve",
    "patch-reference": "patch-block",
    "patch-test": "patch-block",
    "decision": "decision",
    "specs": "specs",
    "tests": "tests",
    "findings": "findings",
    "comments": "comments",
}


@require_GET
@reviewer_required
def task_panel(request, task_id, panel):
    """Re-render one zone of the task page after an edit, a validation or a decision."""
    if panel not in PANELS:
        raise Http404("No such panel.")
    task = task_for(request, task_id)
    context = workspace_context(request, task)
    if panel.startswith("patch-"):
        context.update(patch_vars(context["w"], panel.removeprefix("patch-")))
    return partial(request, "review/task.html", PANELS[panel], context)


@require_GET
@reviewer_required
def task_history(request, task_id):
    task = task_for(request, task_id)
    return partial(
        request,
        "review/task.html",
        "history",
        {"task": task, "events": history_events(task=task)},
    )


@require_GET
@reviewer_required
def task_jobs(request, task_id):
    """The task's jobs with progress. Polled while one runs; 286 stops the polling when done."""
    task = task_for(request, task_id)
    jobs = selectors.task_jobs(task)
    running = any(not j.is_finished for j in jobs)
    hidden = selectors.findings_hidden(task=task, user=request.user)
    context = {"task": task, "jobs": jobs, "polling": running, "findings_hidden": hidden}
    if request.GET.get("watching") and not running:
        response = stop_polling(request, "review/task.html", "jobs", context)
        trigger_client_event(response, "task-validated")
        return response
    return partial(request, "review/task.html", "jobs", context)


@require_GET
@reviewer_required
def task_saved(request, task_id, revision):
    """The "Saved as rN" note of an edit, polled while rN validates; 286 once that ended."""
    task = task_for(request, task_id)
    if task.revision != revision:
        state = "superseded"
    elif task.status == Task.Status.VALIDATING:
        state = "validating"
    else:
        state = "validated" if task.validated_revision == revision else "invalid"
    context = {
        "task": task,
        "saved_revision": revision,
        "saved_state": state,
        "saved_final": state != "validating",
    }
    if state == "validating":
        return partial(request, "review/task.html", "saved-note", context)
    return stop_polling(request, "review/task.html", "saved-note", context)


@require_POST
@reviewer_required
def task_comment(request, task_id):
    task = task_for(request, task_id)

    def refused(message: str, status: int):
        if request.htmx:
            return HttpResponse(format_html("<p class='error'>{}</p>", message), status=status)
        messages.error(request, message)
        return redirect("review-task", task_id=task.pk)

    form = CommentForm(request.POST)
    if not form.is_valid():
        return refused("; ".join(e for errs in form.errors.values() for e in errs), 400)
    data = form.cleaned_data
    try:
        comment = services.comment_create(
            task=task,
            user=request.user,
            body=data["body"],
            anchor=data["anchor"],
            spec_key=data.get("spec") or "",
            test_id=data.get("test"),
            patch=data.get("patch") or "",
            file_path=data.get("file_path") or "",
            line=data.get("line"),
        )
    except services.ReviewError as exc:
        return refused(str(exc), exc.status)
    if not request.htmx:
        return redirect(f"{reverse('review-task', args=[task.pk])}#comment-{comment.pk}")
    if comment.anchor == Comment.Anchor.TASK:
        response = partial(
            request, "review/task.html", "comments", workspace_context(request, task)
        )
    else:
        response = partial(
            request,
            "review/task.html",
            "comment-list",
            {
                "comments": selectors.comment_thread(comment=comment),
                "task": task,
                "anchor": comment.anchor,
            },
        )
    trigger_client_event(response, "comments-changed")
    return response
