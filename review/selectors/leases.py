"""Review leases as the task page sees them: who holds a slot, and whether the user does."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from curation.models import Task
from review.models import ReviewAssignment


def active_assignment(*, task: Task, user) -> ReviewAssignment | None:
    """The user's active lease on `task`, if they hold one (expired or not yet swept).

    The one query behind "do I hold this task": the page, editing, heartbeats, giving a task
    back and deciding all ask it, so they all agree on the answer.
    """
    return ReviewAssignment.objects.filter(
        task=task, reviewer=user, status=ReviewAssignment.Status.ACTIVE
    ).first()


def lease_completed(*, task: Task, user) -> bool:
    """Whether the user's lease on `task` ended with their decision."""
    return ReviewAssignment.objects.filter(
        task=task, reviewer=user, status=ReviewAssignment.Status.COMPLETED
    ).exists()


@dataclass
class Lease:
    assignment: ReviewAssignment | None
    active_count: int
    required: int
    slots_taken: int = 0

    @property
    def slots_left(self) -> int:
        return max(0, self.required - self.slots_taken)

    @property
    def heartbeat_seconds(self) -> int:
        return settings.REVIEW_HEARTBEAT_SECONDS


def lease_for(task: Task, user) -> Lease:
    active_count = ReviewAssignment.objects.filter(
        task=task, status=ReviewAssignment.Status.ACTIVE
    ).count()
    return Lease(
        assignment=active_assignment(task=task, user=user),
        active_count=active_count,
        required=task.dataset.reviews_required,
        slots_taken=task.review_slots_taken,
    )
