"""The quality report of a set of tasks: are they tasks a benchmark author would sign?

Per synthesis run, per dataset (API, dataset admin) and per release (datasheet): how many specs
are tested requirements, how many hidden tests each task has and how many of them verify a
spec, how much the tests need several parts of the solution, how many tasks are trivial, and
how many functions to implement come with an example outside the hidden tests. Figures are
taken over verified tasks unless asked otherwise; unverified specs are never counted as specs.
"""

from __future__ import annotations

import statistics
from typing import Any

from django.db.models import Count, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce

from curation.models import Specification, Task, TestCase

# Example sources that count: anything but the hidden tests (workers.synthesis.briefs).
_EXAMPLE_KINDS = ("doctest", "docs", "visible test", "call site")


def _distribution(values: list[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)
    quartiles = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else [ordered[0]] * 3
    return {
        "min": ordered[0],
        "p25": round(quartiles[0], 3),
        "median": round(statistics.median(ordered), 3),
        "p75": round(quartiles[2], 3),
        "max": ordered[-1],
        "mean": round(statistics.mean(ordered), 3),
    }


def verified_tasks(tasks: QuerySet[Task]) -> QuerySet[Task]:
    return tasks.filter(validation__verified=True)


def quality_report(*, tasks: QuerySet[Task], verified_only: bool = True) -> dict[str, Any]:
    """Figures over `tasks` (their verified ones unless `verified_only` is False)."""
    total = tasks.count()
    chosen = verified_tasks(tasks) if verified_only else tasks
    rows = list(
        chosen.annotate(
            tested_specs=_count(Specification.objects.filter(verified=True)),
            f2p=_count(TestCase.objects.filter(role=TestCase.Role.FAIL_TO_PASS)),
        ).values(
            "pk",
            "tested_specs",
            "f2p",
            "interaction_score",
            "trivial",
            "metadata",
        )
    )
    ids = [row["pk"] for row in rows]
    linked = _linked_f2p(ids)
    interaction = _interaction_tests(ids)
    f2p_total = sum(row["f2p"] for row in rows)
    functions = with_example = 0
    for row in rows:
        examples = ((row["metadata"] or {}).get("synthesis") or {}).get("examples") or {}
        for sources in examples.values():
            functions += 1
            with_example += any(str(s).split(":", 1)[0] in _EXAMPLE_KINDS for s in sources)
    scores = [row["interaction_score"] or 0.0 for row in rows]
    unverified = Specification.objects.filter(task__in=ids, verified=False).count()
    return {
        "tasks": total,
        "tasks_measured": len(rows),
        "verified_only": verified_only,
        "tested_specs_per_task": _distribution([row["tested_specs"] for row in rows]),
        "median_tested_specs_per_task": _median([row["tested_specs"] for row in rows]),
        "unverified_specs_not_counted": unverified,
        "f2p_tests_per_task": _distribution([row["f2p"] for row in rows]),
        "median_f2p_tests_per_task": _median([row["f2p"] for row in rows]),
        "f2p_linked_share": round(sum(linked.values()) / f2p_total, 4) if f2p_total else None,
        "interaction_score": _distribution(scores),
        "median_interaction_score": _median(scores),
        "tasks_without_interaction_test": sum(1 for pk in ids if pk not in interaction),
        "trivial_share": round(sum(1 for row in rows if row["trivial"]) / len(rows), 4)
        if rows
        else None,
        "functions_with_examples": with_example,
        "functions_to_implement": functions,
        "example_coverage": round(with_example / functions, 4) if functions else None,
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 3) if values else None


def _count(rows: QuerySet) -> Subquery:
    """A per-task count as a subquery (two joined counts would multiply each other)."""
    return Coalesce(
        Subquery(
            rows.filter(task=OuterRef("pk"))
            .order_by()
            .values("task")
            .annotate(n=Count("id"))
            .values("n")[:1]
        ),
        0,
    )


def _linked_f2p(ids: list[int]) -> dict[int, int]:
    rows = (
        TestCase.objects.filter(task__in=ids, role=TestCase.Role.FAIL_TO_PASS, specs__isnull=False)
        .values("task_id")
        .annotate(n=Count("id", distinct=True))
    )
    return {row["task_id"]: row["n"] for row in rows}


def _interaction_tests(ids: list[int]) -> set[int]:
    """Tasks with a FAIL_TO_PASS test that needs two or more parts of the solution."""
    found: set[int] = set()
    for task_id, needs in TestCase.objects.filter(
        task__in=ids, role=TestCase.Role.FAIL_TO_PASS
    ).values_list("task_id", "needs_parts"):
        if task_id not in found and len(needs or []) >= 2:
            found.add(task_id)
    return found
