"""The review app's side of `curation.review_port`: what curation may read of human review.

Registered by `ReviewConfig.ready()`; curation calls it through `review_port()` and never
imports this app.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django.db.models import QuerySet

from curation.models import Dataset, Task
from curation.review_port import ReviewRecord
from review import agreement
from review.models import Review, ReviewAssignment

# ReviewRecord's fields and where each comes from (same name on Review unless given).
_LOOKUPS = {field.name: field.name for field in fields(ReviewRecord)} | {
    "instance_id": "task__instance_id"
}


class ReviewAppPort:
    def reviews(self, *, dataset: Dataset) -> list[ReviewRecord]:
        names = list(_LOOKUPS)
        rows = (
            Review.objects.filter(task__dataset=dataset)
            .order_by("created_at", "id")
            .values_list(*_LOOKUPS.values())
        )
        return [ReviewRecord(**dict(zip(names, row, strict=True))) for row in rows.iterator(5000)]

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
