"""Synthesis reports: what was tried, what came of it, and why when nothing did.

The procedural engine's report is made here; both engines count their proposals the same way
(`proposal_totals`).
"""

from __future__ import annotations

import time
from collections import Counter

from workers.sandbox.types import RunResult
from workers.synthesis.clusters import Cluster
from workers.synthesis.proposals import Rejection, SynthesisOutcome, TaskProposal


def synthesis_report(
    *,
    proposals: list[TaskProposal],
    rejected: list[Rejection],
    candidates: list[str],
    skipped: dict[str, str],
    clusters: list[Cluster],
    tried: int,
    baseline: RunResult,
    elapsed: float,
) -> dict:
    outcomes = Counter(r.outcome.value for r in baseline.tests.values())
    tasks = len(proposals)
    return {
        "status": "ok" if tasks else "no tasks",
        "reason": "" if tasks else _no_task_reason(candidates, clusters, rejected),
        "tests_at_snapshot": dict(sorted(outcomes.items())),
        "collection_errors_at_snapshot": len(baseline.collection_errors),
        "baseline_seconds": round(baseline.wall_seconds, 2),
        "functions_skipped": dict(sorted(Counter(skipped.values()).items())),
        "candidates": len(candidates),
        "clusters": len(clusters),
        "clusters_tried": tried,
        **proposal_totals(proposals, rejected, elapsed),
    }


def proposal_totals(
    proposals: list[TaskProposal], rejected: list[Rejection], elapsed: float
) -> dict:
    """What both engines' reports count: tasks, rejections, specs, edges, tests and time."""
    tasks = len(proposals)
    return {
        "tasks": tasks,
        "rejections": dict(sorted(Counter(r.reason for r in rejected).items())),
        # A spec no hidden test is claimed to check is not counted (it is stated unverified).
        "mean_specs_per_task": round(
            sum(1 for p in proposals for s in p.specs if s.verified_by) / max(tasks, 1), 2
        ),
        "unverified_specs": sum(1 for p in proposals for s in p.specs if not s.verified_by),
        "declared_edges": sum(len(p.dependencies) for p in proposals),
        "fail_to_pass": sum(len(p.fail_to_pass) for p in proposals),
        "pass_to_pass": sum(len(p.pass_to_pass) for p in proposals),
        "seconds_total": round(elapsed, 2),
        "seconds_per_task": round(elapsed / tasks, 2) if tasks else None,
    }


def _no_task_reason(
    candidates: list[str], clusters: list[Cluster], rejected: list[Rejection]
) -> str:
    if not candidates:
        return "no function with a real body is covered by a passing test"
    if not clusters:
        return "no two candidate functions are coupled (no calls or shared tests between them)"
    if rejected:
        top = Counter(r.reason for r in rejected).most_common(1)[0][0]
        return f"every cluster was rejected (most often: {top})"
    return "no cluster was tried"


def unusable_outcome(reason: str, started: float) -> SynthesisOutcome:
    return SynthesisOutcome(
        proposals=[],
        rejected=[],
        report={
            "status": "unusable",
            "reason": reason,
            "candidates": 0,
            "clusters": 0,
            "clusters_tried": 0,
            **proposal_totals([], [], time.monotonic() - started),
        },
    )
