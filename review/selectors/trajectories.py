"""A trajectory's page: its steps paged by index, its evaluation, its final patch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404

from curation.access import visible_tasks
from curation.models import Trajectory, TrajectoryStep
from review import rendering

STEP_PAGE = 20
OBSERVATION_FOLD_CHARS = 1200
OBSERVATION_FOLD_LINES = 18
STEP_TEXT_MAX = 200_000


@dataclass
class StepView:
    step: TrajectoryStep
    fields: list[dict]


def _field_view(name: str, text: str) -> dict:
    size = len(text)
    lines = text.count("\n") + 1
    cut = size > STEP_TEXT_MAX
    shown = text[:STEP_TEXT_MAX] if cut else text
    return {
        "name": name,
        "text": shown,
        "size": size,
        "lines": lines,
        "cut": cut,
        "folded": size > OBSERVATION_FOLD_CHARS or lines > OBSERVATION_FOLD_LINES,
        "preview": "\n".join(shown[:OBSERVATION_FOLD_CHARS].split("\n")[:6]),
    }


def trajectory_steps(*, trajectory: Trajectory, after: int = -1, limit: int = STEP_PAGE):
    """One page of steps after index `after` (keyset), and the index to continue from."""
    steps = list(
        TrajectoryStep.objects.filter(trajectory=trajectory, index__gt=after).order_by("index")[
            : limit + 1
        ]
    )
    more = len(steps) > limit
    steps = steps[:limit]
    views = []
    for step in steps:
        fields = [
            _field_view(name, getattr(step, name))
            for name in ("thought", "content", "action", "observation")
            if getattr(step, name)
        ]
        views.append(StepView(step=step, fields=fields))
    return views, (steps[-1].index if more and steps else None)


def trajectory_detail(*, trajectory: Trajectory) -> dict[str, Any]:
    evaluation = getattr(trajectory, "evaluation", None)
    spec_results = []
    if evaluation is not None:
        spec_results = list(
            evaluation.spec_results.select_related("spec").order_by("spec__order", "spec__id")
        )
    return {
        "evaluation": evaluation,
        "spec_results": spec_results,
        "final_diff": rendering.parse_diff(trajectory.final_patch),
        "findings": list(trajectory.findings.filter(dismissed=False, superseded=False)),
    }


def visible_trajectory(*, user, trajectory_id) -> Trajectory:
    try:
        pk = int(trajectory_id)
    except (TypeError, ValueError):
        raise Http404("No such trajectory.") from None
    trajectory = (
        Trajectory.objects.filter(pk=pk, task__in=visible_tasks(user))
        .select_related("task", "task__dataset", "task__repository", "evaluation")
        .first()
    )
    if trajectory is None:
        raise Http404("No such trajectory.")
    return trajectory
