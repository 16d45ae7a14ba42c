"""Reads about the review agent: its audit runs, its current findings on a task, and how well
it predicts human decisions (calibration).

Calibration compares each human decision with the findings that existed for the revision it
decided, when it was made: the latest audit of that revision recorded before the decision (for
the LLM row, the latest audit of it whose LLM part succeeded). Decisions are split into blind
ones (the reviewer did not see the findings: the dataset's blind review sample) and informed
ones (the findings may have anchored the reviewer). One computation (`audit_calibration`) feeds
the calibration page, the dashboard card, the API and the release datasheet.

Reviews belong to the review app, which nothing here imports (DESIGN.md); they are read
through the port curation owns (`curation.review_port`).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.conf import settings as django_settings

from curation import access
from curation.models import Audit, Dataset, Finding, Task, in_blind_sample
from curation.review_port import TURNED_DOWN, review_port
from curation.services.audit import AUDIT_KIND, HEURISTIC_SOURCE, LLM_SOURCE_PREFIX
from workers.audit.calibration import Settings, calibrate
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
            "revision": (job.result or {}).get("revision"),
            "unsafe": (job.result or {}).get("unsafe", []),
            "llm": (job.result or {}).get("llm"),
            "error": job.error[-2000:],
        }
        for job in jobs
    ]


SEVERITY_ORDER = ("high", "medium", "low", "info")

GROUPS = {
    "blind": (
        "Blind decisions",
        "The reviewer decided without seeing the review agent's findings (the dataset's blind "
        "review sample): agreement here is not inflated by anchoring.",
    ),
    "informed": (
        "Informed decisions",
        "The reviewer saw the findings before deciding, so the findings may have anchored the "
        "decision: agreement here is an upper bound.",
    ),
    "all": ("All decisions", "Blind and informed decisions together."),
}
ROWS = {
    "review_agent": "Review agent (heuristic + LLM)",
    "heuristic": "Heuristic auditor",
    "llm": "LLM auditor",
}
NOTES = {
    "unit": "one reviewer's decision on one task revision (adjudications are left out: they "
    "settle a disagreement, they are not another reviewer's judgement)",
    "positive_class": "should not be approved (rejected, or changes requested)",
    "flag_rule": "the auditor raised a finding of medium or high severity that no one dismissed",
    "pinning": "each decision is compared with the findings of the latest audit of the "
    "revision it decided that existed when it was made; decisions on a revision with no "
    "audit by then are not compared",
    "dismissed": "dismissed findings are not counted as flags; they are reported apart",
    "kappa_without_variance": "kappa is 0 when every decision and every verdict fall in one "
    "agreeing cell (chance agreement is already 1: no agreement beyond chance can be shown)",
    "baselines": "always approve; always flag; random flags at the row's own flag rate "
    "(closed-form expectation, from the unrounded rate)",
    "interval": "percentile bootstrap, resampling tasks with all their decisions, seeded",
    "verdict": "beats every baseline when the lower bound of the difference in accuracy and "
    "in kappa is above 0 for every baseline; loses when a baseline is better (upper bound "
    "below 0); ties otherwise; not enough decisions below the minimum",
}


def current_findings(*, task: Task) -> list[Finding]:
    """The findings a reviewer sees: the latest set of each source, not dismissed, most severe
    first. A set made on an earlier revision stays until the new revision is audited; its
    `task_revision` says so."""
    return sorted(
        Finding.objects.filter(task=task, dismissed=False, superseded=False).select_related(
            "trajectory"
        ),
        key=lambda f: (SEVERITY_ORDER.index(f.severity), f.pk),
    )


def findings_hidden(
    *, task: Task, user, decided: bool | None = None, holds_lease: bool | None = None
) -> bool:
    """The blind review sample: the review agent's findings stay hidden from whoever has not
    decided this task yet, so their decision measures the agent instead of following it. A
    curator who does not hold the task (curating, adjudicating) sees them. `decided` and
    `holds_lease` may be given by a caller that already knows them (no query then)."""
    if not task.dataset.blind_for(task.instance_id):
        return False
    if decided is None:
        decided = review_port().has_decided(task=task, user=user)
    if decided:
        return False
    if holds_lease is None:
        holds_lease = review_port().holds_lease(task=task, user=user)
    return holds_lease or not access.is_curator(user)


def blind_task_ids(*, user) -> list[int]:
    """Tasks whose findings `user` may not read yet: in their dataset's blind review sample
    and not yet decided by them (curators curate: they see everything). `findings_hidden`
    for lists, such as the API's findings."""
    if access.is_curator(user):
        return []
    candidates = (
        access.visible_tasks(user)
        .filter(dataset__blind_review_share__gt=0)
        .exclude(pk__in=review_port().decided_task_ids(user=user))
        .values_list("pk", "instance_id", "dataset__name", "dataset__blind_review_share")
    )
    return [
        pk
        for pk, instance_id, dataset, share in candidates.iterator(chunk_size=5000)
        if in_blind_sample(dataset=dataset, share=share, instance_id=instance_id)
    ]


def calibration_settings() -> Settings:
    return Settings(
        min_decisions=django_settings.CALIBRATION_MIN_DECISIONS,
        resamples=django_settings.CALIBRATION_RESAMPLES,
        seed=django_settings.CALIBRATION_SEED,
    )


def _sets_by_audit(dataset: Dataset) -> dict[int, dict[str, list[int]]]:
    """Per audit and source (heuristic, llm): [open, dismissed] flagging findings."""
    sets: dict[int, dict[str, list[int]]] = defaultdict(
        lambda: {"heuristic": [0, 0], "llm": [0, 0]}
    )
    rows = Finding.objects.filter(
        audit__task__dataset=dataset, severity__in=FLAGGING_SEVERITIES
    ).values_list("audit_id", "source", "dismissed")
    for audit_id, source, dismissed in rows.iterator(chunk_size=5000):
        if source == HEURISTIC_SOURCE:
            kind = "heuristic"
        elif source.startswith(LLM_SOURCE_PREFIX):
            kind = "llm"
        else:
            continue
        sets[audit_id][kind][1 if dismissed else 0] += 1
    return sets


def _pinned_decisions(dataset: Dataset) -> list[dict[str, Any]]:
    """Every reviewer's decision with, per row, the verdict in force when it was made: None
    (no audit yet: not compared), or (flagged, dismissed flagging findings)."""
    audits: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for row in (
        Audit.objects.filter(task__dataset=dataset)
        .order_by("created_at", "id")
        .values_list("task_id", "task_revision", "created_at", "pk", "llm_status")
    ):
        audits[(row[0], row[1])].append(row[2:])
    sets = _sets_by_audit(dataset)
    decisions = []
    for review in review_port().reviews(dataset=dataset):
        if review.is_adjudication:
            continue
        task_id, revision, created_at = review.task_id, review.task_revision, review.created_at
        before = [a for a in audits.get((task_id, revision), ()) if a[0] <= created_at]
        latest = before[-1] if before else None
        latest_llm = next((a for a in reversed(before) if a[2] == Audit.LLMStatus.OK), None)
        heuristic = sets[latest[1]]["heuristic"] if latest else None
        llm = sets[latest_llm[1]]["llm"] if latest_llm else None
        verdicts: dict[str, tuple[bool, int] | None] = {
            "heuristic": (heuristic[0] > 0, heuristic[1]) if heuristic else None,
            "llm": (llm[0] > 0, llm[1]) if llm else None,
        }
        verdicts["review_agent"] = (
            (
                heuristic[0] > 0 or bool(llm and llm[0] > 0),
                heuristic[1] + (llm[1] if llm else 0),
            )
            if heuristic
            else None
        )
        decisions.append(
            {
                "task": task_id,
                "turned_down": review.decision in TURNED_DOWN,
                "blind": review.blind,
                "verdicts": verdicts,
            }
        )
    return decisions


def _row(decisions: list[dict], name: str, settings: Settings) -> dict[str, Any]:
    compared = [d for d in decisions if d["verdicts"][name] is not None]
    row = calibrate(
        [(d["task"], d["turned_down"], d["verdicts"][name][0]) for d in compared],
        settings=settings,
    )
    row["label"] = ROWS[name]
    row["dismissed"] = {
        "findings": sum(d["verdicts"][name][1] for d in compared),
        # Decisions the row would have flagged had dismissed findings counted.
        "decisions": sum(
            1 for d in compared if not d["verdicts"][name][0] and d["verdicts"][name][1]
        ),
    }
    return row


def audit_calibration(*, dataset: Dataset) -> dict[str, Any]:
    """The review agent (and its heuristic and LLM parts) against human decisions, for blind
    and informed decisions apart and together: scores, baselines, 95% intervals, verdicts."""
    settings = calibration_settings()
    decisions = _pinned_decisions(dataset)
    by_group = {
        "blind": [d for d in decisions if d["blind"]],
        "informed": [d for d in decisions if not d["blind"]],
        "all": decisions,
    }
    groups = {}
    for key, members in by_group.items():
        label, description = GROUPS[key]
        groups[key] = {
            "label": label,
            "description": description,
            "decisions": len(members),
            "rows": {name: _row(members, name, settings) for name in ROWS},
        }
    everything = groups["all"]["rows"]
    agent = everything["review_agent"]
    return {
        "dataset": dataset.name,
        # The figures this endpoint always gave (now over decisions pinned to their revision).
        "decided_tasks": len({d["task"] for d in decisions}),
        "audited_tasks": agent["tasks"],
        "not_approved": agent["positives"],
        "prevalence": agent["prevalence"],
        "positive_class": NOTES["positive_class"],
        "flag_rule": NOTES["flag_rule"],
        "auditors": {
            name: {key: value for key, value in row.items() if key != "baselines"}
            for name, row in everything.items()
        },
        "baselines": {
            name: {key: value for key, value in base.items() if key != "difference"}
            for name, base in agent["baselines"].items()
        },
        # What the issue of showing, not just computing, added.
        "decisions": {
            "total": len(decisions),
            "blind": len(by_group["blind"]),
            "informed": len(by_group["informed"]),
            "compared": agent["n"],
        },
        "blind_review_share": dataset.blind_review_share,
        "method": {**settings.as_dict(), **NOTES},
        "groups": groups,
    }
