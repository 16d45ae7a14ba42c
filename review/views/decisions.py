"""Decisions on a task: a reviewer's rubric, and a curator's adjudication of a disagreement."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import trigger_client_event

from review import services
from review.forms import DecisionForm
from review.selectors.dashboard import adjudication_queue as open_adjudications
from review.selectors.workspace import open_adjudication
from review.views.common import TASK_QS, curator_required, partial, reviewer_required, task_for
from review.views.task import workspace_context


def _rubric(form: DecisionForm) -> services.RubricInput:
    data = form.cleaned_data
    return services.RubricInput(
        decision=data["decision"],
        spec_clarity=data["spec_clarity"],
        test_validity=data["test_validity"],
        interdependency=data["interdependency"],
        difficulty=data["difficulty"],
        comment=data.get("comment") or "",
    )


def _decision_response(request, task, *, form=None, error="", outcome=None, status=200):
    context = workspace_context(request, TASK_QS.get(pk=task.pk))
    context.update({"form": form, "error": error, "outcome": outcome})
    response = partial(request, "review/task.html", "decision", context, status=status)
    if outcome is not None:
        trigger_client_event(response, "task-decided")
    return response


@require_POST
@reviewer_required
def task_decide(request, task_id):
    task = task_for(request, task_id)
    return _decision_post(
        request,
        task,
        lambda form: services.review_submit(
            task=task,
            user=request.user,
            rubric=_rubric(form),
            expected_revision=form.cleaned_data["revision"],
        ),
    )


@require_POST
@curator_required
def task_adjudicate(request, task_id):
    task = task_for(request, task_id)
    adjudication = open_adjudication(task=task)
    if adjudication is None:
        raise Http404("Nothing to adjudicate on this task.")
    return _decision_post(
        request,
        task,
        lambda form: services.review_adjudicate(
            adjudication=adjudication, user=request.user, rubric=_rubric(form)
        ),
    )


def _decision_post(request, task, decide):
    """A decision or an adjudication from the decision form: `decide(form)` calls the service.
    Answers the htmx partial, or (without htmx) redirects to the task page with a message."""
    form = DecisionForm(request.POST)
    if not form.is_valid():
        if not request.htmx:
            messages.error(request, "; ".join(e for errs in form.errors.values() for e in errs))
            return redirect("review-task", task_id=task.pk)
        return _decision_response(request, task, form=form, status=400)
    try:
        outcome = decide(form)
    except services.ReviewError as exc:
        if not request.htmx:
            messages.error(request, str(exc))
            return redirect("review-task", task_id=task.pk)
        return _decision_response(request, task, form=form, error=str(exc), status=exc.status)
    if not request.htmx:
        messages.success(request, outcome.message)
        return redirect("review-task", task_id=task.pk)
    return _decision_response(request, task, outcome=outcome)


@require_GET
@curator_required
def adjudication_queue(request):
    return render(
        request,
        "review/adjudication.html",
        {"nav": "adjudication", "items": open_adjudications(user=request.user)},
    )
