"""Which requirements each model honours: the models x specs matrix and pass rates by kind."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, Q, QuerySet

from curation.models import (
    Dataset,
    Evaluation,
    GradeSpecResult,
    Release,
    Specification,
    SpecResult,
    Task,
    TestCase,
)


@dataclass
class MatrixCell:
    satisfied: int = 0
    total: int = 0

    @property
    def rate(self) -> float | None:
        return round(self.satisfied / self.total, 4) if self.total else None


@dataclass
class SpecMatrix:
    models: list[str]
    specs: list[Specification]
    cells: dict[tuple[str, str], MatrixCell] = field(default_factory=dict)

    def cell(self, model: str, spec_key: str) -> MatrixCell:
        return self.cells.get((model, spec_key), MatrixCell())

    def as_dict(self) -> dict:
        return {
            "models": self.models,
            "specs": [{"key": s.key, "kind": s.kind, "statement": s.statement} for s in self.specs],
            "cells": [
                {
                    "model": model,
                    "spec": key,
                    "satisfied": cell.satisfied,
                    "total": cell.total,
                    "rate": cell.rate,
                }
                for (model, key), cell in sorted(self.cells.items())
            ],
        }


def _results(
    *,
    task: Task | None = None,
    dataset: Dataset | None = None,
    dataset_ids: list[int] | None = None,
    release: Release | None = None,
) -> QuerySet:
    results = _by_task_scope(SpecResult.objects.all(), task, dataset, dataset_ids)
    if release is not None:
        results = results.filter(evaluation__trajectory__task__release_entries__release=release)
    return results


def _by_task_scope(
    results: QuerySet, task: Task | None, dataset: Dataset | None, dataset_ids: list[int] | None
) -> QuerySet:
    """Spec results (of trajectories or of grades) of one task, a dataset, or some datasets."""
    if task is not None:
        results = results.filter(spec__task=task)
    if dataset is not None:
        results = results.filter(spec__task__dataset=dataset)
    if dataset_ids is not None:
        results = results.filter(spec__task__dataset_id__in=dataset_ids)
    return results


def spec_matrix(*, task: Task) -> SpecMatrix:
    """Per model (over its trajectories on this task), how often each spec was satisfied."""
    rows = (
        _results(task=task)
        .values("evaluation__trajectory__model_name", "spec__key")
        .annotate(total=Count("id"), satisfied=Count("id", filter=Q(satisfied=True)))
    )
    cells = {
        (row["evaluation__trajectory__model_name"], row["spec__key"]): MatrixCell(
            satisfied=row["satisfied"], total=row["total"]
        )
        for row in rows
    }
    models = sorted({model for model, _ in cells})
    return SpecMatrix(models=models, specs=list(task.specs.order_by("order", "id")), cells=cells)


def _grade_results(
    *,
    task: Task | None = None,
    dataset: Dataset | None = None,
    dataset_ids: list[int] | None = None,
    release: Release | None = None,
) -> QuerySet:
    results = GradeSpecResult.objects.filter(grade__submissions__isnull=False)
    results = _by_task_scope(results, task, dataset, dataset_ids)
    if release is not None:
        results = results.filter(spec__task__release_entries__release=release)
    return results


def pass_rates_by_kind(
    *,
    task: Task | None = None,
    dataset: Dataset | None = None,
    dataset_ids: list[int] | None = None,
    release: Release | None = None,
) -> list[dict]:
    """Per model and spec kind: satisfied / total spec results, over a task, a dataset, a set of
    datasets or the tasks of a release (the filters given all apply). Evaluated trajectories and
    grades both count: a grade counts once for every model that asked for it."""
    filters = {"task": task, "dataset": dataset, "dataset_ids": dataset_ids, "release": release}
    rows = list(
        _results(**filters)
        .values("evaluation__trajectory__model_name", "spec__kind")
        .annotate(total=Count("id"), satisfied=Count("id", filter=Q(satisfied=True)))
        .values_list("evaluation__trajectory__model_name", "spec__kind", "satisfied", "total")
    )
    rows += list(
        _grade_results(**filters)
        .values("grade__submissions__model_name", "spec__kind")
        .annotate(total=Count("id"), satisfied=Count("id", filter=Q(satisfied=True)))
        .values_list("grade__submissions__model_name", "spec__kind", "satisfied", "total")
    )
    merged: dict[tuple[str, str], list[int]] = {}
    for model, kind, satisfied, total in rows:
        counts = merged.setdefault((model, kind), [0, 0])
        counts[0] += satisfied
        counts[1] += total
    return [
        {
            "model": model,
            "kind": kind,
            "satisfied": satisfied,
            "total": total,
            "rate": round(satisfied / total, 4) if total else None,
        }
        for (model, kind), (satisfied, total) in sorted(merged.items())
    ]


def resolution_by_model(*, task: Task | None = None, dataset: Dataset | None = None) -> list[dict]:
    """Per model: its evaluated trajectories, how many resolved the task fully or partly, and
    how many patches did not apply."""
    evaluations = Evaluation.objects.all()
    if task is not None:
        evaluations = evaluations.filter(trajectory__task=task)
    if dataset is not None:
        evaluations = evaluations.filter(trajectory__task__dataset=dataset)
    rows = (
        evaluations.values("trajectory__model_name")
        .annotate(
            evaluated=Count("id"),
            full=Count("id", filter=Q(resolved="full")),
            partial=Count("id", filter=Q(resolved="partial")),
            not_applied=Count("id", filter=Q(patch_applied=False) | ~Q(patch_error="")),
        )
        .order_by("trajectory__model_name")
    )
    return [
        {
            "model": row["trajectory__model_name"],
            "evaluated": row["evaluated"],
            "full": row["full"],
            "partial": row["partial"],
            "none": row["evaluated"] - row["full"] - row["partial"],
            "not_applied": row["not_applied"],
            "resolved_rate": round(row["full"] / row["evaluated"], 4) if row["evaluated"] else None,
        }
        for row in rows
    ]


# The tests `evaluated_role` gives a role to, as a filter (every intended role is one of the two).
EVALUATED_TESTS = Q(role__in=(TestCase.Role.FAIL_TO_PASS, TestCase.Role.PASS_TO_PASS)) | Q(
    role=TestCase.Role.UNVALIDATED
)


def task_has_evaluated_tests(task: Task) -> bool:
    return task.tests.filter(EVALUATED_TESTS).exists()


def evaluated_role(test: TestCase) -> str | None:
    """The role a test is evaluated in: its validated role, or the intended one if it was
    never validated (an imported task, a test added since); flaky and invalid tests are not
    evaluated at all."""
    if test.role in (TestCase.Role.FAIL_TO_PASS, TestCase.Role.PASS_TO_PASS):
        return test.role
    if test.role == TestCase.Role.UNVALIDATED:
        return test.intended_role
    return None
