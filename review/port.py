"""The review app's side of `curation.review_port`: what curation may read of human review.

Registered by `ReviewConfig.ready()`; curation calls it through `review_port()` and never
imports this app.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet

from curation.models import Dataset, Task
from curation.review_port import ReviewRecord
from review import agreement
from review.models import Review, ReviewAssignment

_RECORD_FIELDS = (
    "id",
    "task_id",
    "task__instance_id",
    "task_revision",
    "reviewer_id",
    "decision",
    "spec_clarity",
    "test_validity",
    "interdependency",
    "comment",
    "is_adjudication",
    "blind",
    "created_at",
)


class ReviewAppPort:
    def reviews(self, *, dataset: Dataset) -> list[ReviewRecord]:
        rows = (
            Review.objects.filter(task__dataset=dataset)
            .order_by("created_at", "id")
            .values_list(*_RECORD_FIELDS)
        )
        return [
            ReviewRecord(*row)  # the fields in ReviewRecord's order
            for row in rows.iterator(chunk_size=5000)
        ]

    def has_decided(self, *, task: Task, user) -> bool:
        return Review.objects.filter(task=task, reviewer=user, is_adjudication=False).exists()

    def holds_lease(self, *, task: Task, user) -> bool:
        return ReviewAssignment.objects.filter(
            task=task, reviewer=user, status=ReviewAssignment.Status.ACTIVE
        ).exists()

    def decided_task_ids(self, *, user) -> QuerySet:
        return Review.objects.filter(reviewer=user, is_adjudication=False).values("task_id")

    def decision_agreement(self, *, dataset: Dataset) -> dict[str, Any]:
        return agreement.decision_agreement(dataset=dataset)
