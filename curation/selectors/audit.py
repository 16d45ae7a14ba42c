"""Reads about the review agent: its audit runs, and how well it predicts human decisions."""

from __future__ import annotations

from typing import Any

from django.contrib.contenttypes.models import ContentType

from curation.models import Dataset, Finding, Task
from curation.services.audit import AUDIT_KIND, HEURISTIC_SOURCE, LLM_SOURCE_PREFIX
from workers.audit.calibration import always_approve, random_flagging, score
from workers.models import Job

# The positive class: a human decided the task should not be approved as it is.
NOT_APPROVED = (Task.Status.REJECTED, Task.Status.CHANGES_REQUESTED)
APPROVED = (Task.Status.APPROVED, Task.Status.RELEASED)
# A verdict of "should not be approved": any finding at these severities.
FLAGGING_SEVERITIES = (Finding.Severity.MEDIUM, Finding.Severity.HIGH)


def task_audit_runs(*, task: Task, limit: int = 20) -> list[dict[str, Any]]:
    """The task's latest audit jobs: state, findings written, and the LLM audit's outcome."""
    jobs = Job.objects.filter(Job.target_filter(task), kind=AUDIT_KIND).order_by("-id")[:limit]
    return [
        {
            "job": job.pk,
            "status": job.status,
            "message": job.message,
            "created_at": job.created_at,
            "finished_at": job.finished_at,
            "findings": (job.result or {}).get("findings"),
            "unsafe": (job.result or {}).get("unsafe", []),
            "llm": (job.result or {}).get("llm"),
            "error": job.error[-2000:],
        }
        for job in jobs
    ]


def _audited(task_ids: list[int], *, llm: bool) -> set[int]:
    jobs = Job.objects.filter(
        kind=AUDIT_KIND,
        status=Job.Status.SUCCEEDED,
        target_type=ContentType.objects.get_for_model(Task),
        target_id__in=[str(pk) for pk in task_ids],
    )
    if llm:
        jobs = jobs.filter(result__llm__status="ok")
    return {int(pk) for pk in jobs.values_list("target_id", flat=True)}


def audit_calibration(*, dataset: Dataset) -> dict[str, Any]:
    """Precision, recall and Cohen's kappa of "should not be approved" for the heuristic
    auditor, the LLM auditor and both together, over the dataset's tasks that humans decided
    and the auditor audited, beside the always-approve and random baselines."""
    decided = dict(
        dataset.tasks.filter(status__in=[*NOT_APPROVED, *APPROVED]).values_list("pk", "status")
    )
    actual = {pk: status in NOT_APPROVED for pk, status in decided.items()}
    flagging = Finding.objects.filter(task_id__in=list(actual), severity__in=FLAGGING_SEVERITIES)
    heuristic_flags = set(
        flagging.filter(source=HEURISTIC_SOURCE).values_list("task_id", flat=True)
    )
    llm_flags = set(
        flagging.filter(source__startswith=LLM_SOURCE_PREFIX).values_list("task_id", flat=True)
    )
    audited = _audited(list(actual), llm=False)
    llm_audited = _audited(list(actual), llm=True)

    def scored(flags: set[int], over: set[int]) -> dict[str, Any]:
        subset = {pk: truth for pk, truth in actual.items() if pk in over}
        return score({pk: pk in flags for pk in subset}, subset).as_dict()

    agent = scored(heuristic_flags | llm_flags, audited)
    in_scope = {pk: truth for pk, truth in actual.items() if pk in audited}
    positives = sum(1 for truth in in_scope.values() if truth)
    return {
        "dataset": dataset.name,
        "decided_tasks": len(actual),
        "audited_tasks": len(in_scope),
        "not_approved": positives,
        "prevalence": round(positives / len(in_scope), 4) if in_scope else None,
        "positive_class": "should not be approved (rejected, or changes requested)",
        "flag_rule": "the auditor raised a finding of medium or high severity",
        "auditors": {
            "review_agent": agent,
            "heuristic": scored(heuristic_flags, audited),
            "llm": scored(llm_flags, llm_audited),
        },
        "baselines": {
            "always_approve": always_approve(in_scope).as_dict(),
            "random": random_flagging(in_scope, agent["flag_rate"] or 0.0).as_dict(),
        },
    }
