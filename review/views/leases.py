"""Claiming a task, giving it back, and the heartbeat that keeps the lease while it is open."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect, trigger_client_event

from curation.models import Task
from review import services
from review.selectors.leases import active_assignment, lease_completed, lease_for
from review.views.common import partial, reviewer_required, stop_polling, task_for


def _lease_context(request, task: Task, note: str) -> dict:
    return {"task": task, "lease": lease_for(task, request.user), "note": note}


def _lease_response(request, task: Task, *, note: str = "", status: int = 200):
    return partial(
        request, "review/task.html", "lease", _lease_context(request, task, note), status=status
    )


@require_POST
@reviewer_required
def task_claim(request, task_id):
    task = task_for(request, task_id)
    try:
        services.review_claim(task=task, user=request.user)
    except services.ReviewError as exc:
        if request.htmx:
            return _lease_response(request, task, note=str(exc), status=exc.status)
        messages.error(request, str(exc))
        return redirect("review-task", task_id=task.pk)
    if request.htmx:
        return HttpResponseClientRedirect(reverse("review-task", args=[task.pk]))
    return redirect("review-task", task_id=task.pk)


@require_POST
@reviewer_required
def task_release(request, task_id):
    task = task_for(request, task_id)
    assignment = active_assignment(task=task, user=request.user)
    if assignment is None or not services.review_release(assignment=assignment, user=request.user):
        if request.htmx:
            return _lease_response(request, task, note="You do not hold this task.", status=409)
        messages.error(request, "You do not hold this task.")
        return redirect("review-task", task_id=task.pk)
    # Not "released": on this site a release is a dataset version.
    messages.info(request, f"Returned {task.instance_id} to the queue.")
    if request.htmx:
        return HttpResponseClientRedirect(reverse("review-queue"))
    return redirect("review-queue")


@require_POST
@reviewer_required
def task_heartbeat(request, task_id):
    """Renews the lease while the page is open; answers 286 (stop polling) once it is lost."""
    task = task_for(request, task_id)
    assignment = active_assignment(task=task, user=request.user)
    if assignment is not None and services.review_heartbeat(
        assignment=assignment, user=request.user
    ):
        return _lease_response(request, task)
    decided = lease_completed(task=task, user=request.user)
    note = (
        "Your decision is recorded."
        if decided
        else "Your lease on this task ended. Claim it again to decide."
    )
    response = stop_polling(
        request, "review/task.html", "lease", _lease_context(request, task, note)
    )
    if not decided:
        trigger_client_event(response, "lease-lost")
    return response
