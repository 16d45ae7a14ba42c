"""The one way curation reads human review: a port it owns and the review app implements.

Imports flow one way (DESIGN.md): `review` builds on curation, so curation may not import it,
nor reach its models by name through the app registry. What curation needs from reviews (the
datasheet's outcomes and agreement, calibration's pinned decisions, the blind sample) is
declared here as typed calls; `ReviewConfig.ready()` registers the implementation. The figures
of agreement are computed in one place, the review app, so the datasheet and the agreement page
cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from django.core.exceptions import ImproperlyConfigured
from django.db import models

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from curation.models import Dataset, Task


class Decision(models.TextChoices):
    """A reviewer's decision on one task revision: the only definition of these values."""

    APPROVE = "approve"
    REQUEST_CHANGES = "request_changes"
    REJECT = "reject"


# "Should not be approved as it is": the positive class of calibration, the datasheet's
# rejected-or-sent-back reviews.
TURNED_DOWN = (Decision.REJECT, Decision.REQUEST_CHANGES)


@dataclass(frozen=True)
class ReviewRecord:
    """One review as curation sees it: values, no model."""

    id: int
    task_id: int
    instance_id: str
    task_revision: int
    reviewer_id: int
    decision: str
    spec_clarity: int
    test_validity: int
    interdependency: int
    comment: str
    is_adjudication: bool
    blind: bool
    created_at: datetime


class ReviewPort(Protocol):
    def reviews(self, *, dataset: Dataset) -> list[ReviewRecord]:
        """Every review of the dataset's tasks, adjudications included, oldest first."""
        ...

    def has_decided(self, *, task: Task, user) -> bool:
        """Whether `user` gave a (non-adjudication) decision on the task, any revision."""
        ...

    def holds_lease(self, *, task: Task, user) -> bool:
        """Whether `user` holds an active review lease on the task."""
        ...

    def decided_task_ids(self, *, user) -> QuerySet:
        """Ids of the tasks `user` decided (not adjudicated): a subquery, not a list."""
        ...

    def decision_agreement(self, *, dataset: Dataset) -> dict[str, Any]:
        """Agreement on the decision between reviewers of the same task revision: `items`,
        `reviews`, `percent_agreement`, `krippendorff_alpha` (None when undefined)."""
        ...


_port: ReviewPort | None = None


def register(port: ReviewPort) -> None:
    global _port
    _port = port


def review_port() -> ReviewPort:
    if _port is None:
        raise ImproperlyConfigured(
            "No review port registered: the review app must be installed (ReviewConfig.ready)."
        )
    return _port
