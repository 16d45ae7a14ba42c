"""Reads about grades: who sees which, and a grade as the API and the command line show it."""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import Http404

from curation import access
from curation.models import Grade, GradeSpecResult, GradeSubmission

PATCH_ERROR_CHARS = 4000


def grades_visible(user) -> QuerySet[Grade]:
    """Grades of the tasks `user` can see, with what showing one needs."""
    return (
        Grade.objects.filter(task__in=access.visible_tasks(user).values("pk"))
        .select_related("task")
        .prefetch_related(
            Prefetch(
                "spec_results",
                queryset=GradeSpecResult.objects.select_related("spec").order_by(
                    "spec__order", "spec_id"
                ),
            ),
            Prefetch("submissions", queryset=GradeSubmission.objects.order_by("id")),
        )
        .order_by("id")
    )


def get_grade_for_user(user, grade_id) -> Grade:
    try:
        pk = int(grade_id)
    except (TypeError, ValueError):
        raise Http404("No such grade.") from None
    grade = grades_visible(user).filter(pk=pk).first()
    if grade is None:
        raise Http404("No such grade.")
    return grade


def _seconds(start, end) -> float | None:
    return round((end - start).total_seconds(), 3) if start and end else None


def grade_as_dict(grade: Grade) -> dict[str, Any]:
    """A grade: per test and per spec, resolved or not, whether the patch applied, timings."""
    finished = grade.status == Grade.Status.DONE
    specs = {result.spec.key: result.satisfied for result in grade.spec_results.all()}
    kinds: dict[str, dict[str, int]] = {}
    for result in grade.spec_results.all():
        kind = kinds.setdefault(result.spec.kind, {"satisfied": 0, "total": 0})
        kind["total"] += 1
        kind["satisfied"] += int(result.satisfied)
    return {
        "id": grade.pk,
        "task": grade.task_id,
        "instance_id": grade.task.instance_id,
        "task_revision": grade.task_revision,
        "patch_sha256": grade.patch_sha256,
        "models": [submission.model_name for submission in grade.submissions.all()],
        "status": grade.status,
        "job": grade.job_id,
        "resolved": (grade.resolved == "full") if finished else None,
        "resolution": grade.resolved or None,
        "patch_applied": grade.patch_applied if finished else None,
        "patch_error": grade.patch_error[-PATCH_ERROR_CHARS:],
        "tests": grade.test_outcomes,
        "specs": specs,
        "spec_kinds": kinds,
        "flaky_tests": grade.flaky_tests,
        "problems": grade.problems,
        "error": grade.error[-PATCH_ERROR_CHARS:],
        "timings": {
            "queued_seconds": _seconds(grade.created_at, grade.started_at),
            "run_seconds": round(grade.run_seconds, 3) if grade.run_seconds is not None else None,
            "total_seconds": _seconds(grade.created_at, grade.finished_at),
        },
        "created_at": grade.created_at.isoformat() if grade.created_at else None,
        "started_at": grade.started_at.isoformat() if grade.started_at else None,
        "finished_at": grade.finished_at.isoformat() if grade.finished_at else None,
    }
