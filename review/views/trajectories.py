"""A trajectory's page, and the next page of its steps for htmx."""

from __future__ import annotations

from django.http import HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from review.selectors import trajectories as selectors
from review.selectors.workspace import findings_hidden
from review.views.common import partial, reviewer_required


@require_GET
@reviewer_required
def trajectory_detail(request, trajectory_id):
    trajectory = selectors.visible_trajectory(user=request.user, trajectory_id=trajectory_id)
    try:
        after = int(request.GET.get("after", -1))
    except ValueError:
        return HttpResponseBadRequest("after must be a step index")
    steps, next_after = selectors.trajectory_steps(trajectory=trajectory, after=after)
    context = {
        "nav": "queue",
        "trajectory": trajectory,
        "task": trajectory.task,
        "steps": steps,
        "next_after": next_after,
    }
    if request.htmx and after >= 0:
        return partial(request, "review/trajectory.html", "steps", context)
    context.update(selectors.trajectory_detail(trajectory=trajectory))
    context["findings_hidden"] = findings_hidden(task=trajectory.task, user=request.user)
    return render(request, "review/trajectory.html", context)
