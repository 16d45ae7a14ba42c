"""The review queue: the tasks a user can see, filtered, sorted and paged by a keyset cursor."""

from __future__ import annotations

import base64
import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.db.models import Count, Exists, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce

from curation.access import is_curator, visible_datasets, visible_tasks
from curation.models import Finding, Specification, Task, TestCase
from curation.selectors.audit import blind_task_ids
from review.models import Review

PAGE_SIZE = 50

SORTS = {
    "oldest": ("id", False),
    "newest": ("id", True),
    "updated": ("updated_at", True),
}


@dataclass
class QueueFilters:
    dataset: str = ""
    status: str = ""
    origin: str = ""
    repository: str = ""
    findings: str = ""  # "yes" | "no" | ""
    difficulty: str = ""
    q: str = ""
    sort: str = "oldest"
    cursor: str = ""

    @classmethod
    def from_query(cls, params) -> QueueFilters:
        values = {name: (params.get(name) or "").strip()[:200] for name in cls.__dataclass_fields__}
        filters = cls(**values)
        if filters.sort not in SORTS:
            filters.sort = "oldest"
        if filters.status and filters.status not in Task.Status.values:
            filters.status = ""
        if filters.origin and filters.origin not in Task.Origin.values:
            filters.origin = ""
        if filters.difficulty and filters.difficulty not in [*Task.Difficulty.values, "none"]:
            filters.difficulty = ""
        if filters.findings not in ("", "yes", "no"):
            filters.findings = ""
        return filters

    def query(self, **override) -> str:
        values = {k: getattr(self, k) for k in self.__dataclass_fields__}
        values.update(override)
        return urlencode(
            {k: v for k, v in values.items() if v and not (k == "sort" and v == "oldest")}
        )

    @property
    def active(self) -> bool:
        return any(
            getattr(self, k)
            for k in ("dataset", "status", "origin", "repository", "findings", "difficulty", "q")
        )


class BadCursor(ValueError):
    pass


def _encode_cursor(value: Any, pk: int) -> str:
    if isinstance(value, dt.datetime):
        value = value.isoformat()
    raw = json.dumps([value, pk], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, sort: str) -> tuple[Any, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, pk = json.loads(raw)
        pk = int(pk)
        if SORTS[sort][0] == "updated_at":
            value = dt.datetime.fromisoformat(value)
        elif SORTS[sort][0] == "id":
            value = int(value)
    except (ValueError, TypeError, json.JSONDecodeError) as exc:
        raise BadCursor("This page link is not valid any more; start from the first page.") from exc
    return value, pk


@dataclass
class QueuePage:
    rows: list[Task]
    next_cursor: str
    filters: QueueFilters
    # Tasks of the blind review sample on this page: not even how many findings they have.
    findings_hidden: set[int] = field(default_factory=set)


def _counted(model, **filters):
    return Coalesce(
        Subquery(
            model.objects.filter(**filters)
            .order_by()
            .values("task_id")
            .annotate(n=Count("id"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        Value(0),
    )


def queue_page(*, user, filters: QueueFilters, limit: int = PAGE_SIZE) -> QueuePage:
    """One page of tasks the user can see, filtered, sorted, and cut by a keyset cursor."""
    tasks = visible_tasks(user).select_related("repository", "dataset")
    if filters.dataset:
        tasks = tasks.filter(dataset__name=filters.dataset)
    if filters.status:
        tasks = tasks.filter(status=filters.status)
    if filters.origin:
        tasks = tasks.filter(origin=filters.origin)
    if filters.repository:
        tasks = tasks.filter(repository__name=filters.repository)
    if filters.difficulty:
        tasks = tasks.filter(difficulty="" if filters.difficulty == "none" else filters.difficulty)
    if filters.findings:
        has = Exists(Finding.objects.filter(task=OuterRef("pk"), dismissed=False, superseded=False))
        tasks = tasks.filter(has if filters.findings == "yes" else ~has)
        if not is_curator(user):
            # Nor may the filter tell a reviewer whether a blind task has findings.
            tasks = tasks.exclude(pk__in=blind_task_ids(user=user))
    if filters.q:
        term = filters.q
        if term.isascii() and term.isdigit():
            tasks = tasks.filter(Q(pk=int(term)) | Q(instance_id__icontains=term))
        else:
            tasks = tasks.filter(Q(title__icontains=term) | Q(instance_id__icontains=term))
    column, descending = SORTS[filters.sort]
    if filters.cursor:
        value, pk = _decode_cursor(filters.cursor, filters.sort)
        if column == "id":
            tasks = tasks.filter(pk__lt=pk) if descending else tasks.filter(pk__gt=pk)
        else:
            op = "lt" if descending else "gt"
            tasks = tasks.filter(
                Q(**{f"{column}__{op}": value}) | Q(**{column: value, f"pk__{op}": pk})
            )
    order = [f"-{column}", "-id"] if descending else [column, "id"]
    if column == "id":
        order = order[:1]
    tasks = tasks.order_by(*order).annotate(
        # Unverified specs (no FAIL_TO_PASS test verifies them) are never counted.
        spec_count=_counted(Specification, task=OuterRef("pk"), verified=True),
        test_count=_counted(TestCase, task=OuterRef("pk")),
        finding_count=_counted(Finding, task=OuterRef("pk"), dismissed=False, superseded=False),
        review_count=_counted(Review, task=OuterRef("pk"), task_revision=OuterRef("revision")),
    )
    rows = list(tasks[: limit + 1])
    next_cursor = ""
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        next_cursor = _encode_cursor(getattr(last, column), last.pk)
    hidden = set()
    if not is_curator(user):
        hidden = {row.pk for row in rows if row.dataset.blind_for(row.instance_id)}
    return QueuePage(rows=rows, next_cursor=next_cursor, filters=filters, findings_hidden=hidden)


def queue_choices(*, user) -> dict[str, Any]:
    return {
        "datasets": list(visible_datasets(user).values_list("name", flat=True)),
        "statuses": Task.Status.choices,
        "origins": Task.Origin.choices,
        "difficulties": Task.Difficulty.choices,
    }
