"""Human review: leases on tasks, decisions with the rubric, and anchored comments."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from curation.models import Specification, Task, TestCase
from curation.review_port import Decision


class ReviewAssignment(models.Model):
    """A reviewer's lease on one task. Granted by a conditional update, at most once per pair."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        COMPLETED = "completed"
        RELEASED = "released"
        EXPIRED = "expired"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="assignments")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_assignments"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    claimed_at = models.DateTimeField(auto_now_add=True)
    heartbeat_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-claimed_at"]
        constraints = [
            models.UniqueConstraint(fields=["task", "reviewer"], name="assignment_once_per_pair"),
            models.CheckConstraint(
                condition=Q(status__in=["active", "completed", "released", "expired"]),
                name="assignment_status_valid",
            ),
        ]
        indexes = [
            models.Index(fields=["reviewer", "status"], name="assignment_reviewer_status"),
            models.Index(fields=["task", "status"], name="assignment_task_status"),
            models.Index(fields=["status", "expires_at"], name="assignment_status_expiry"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} on {self.task_id} ({self.status})"


class Review(models.Model):
    # Defined once, in the port curation reads reviews through.
    Decision = Decision

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="reviews"
    )
    assignment = models.OneToOneField(
        ReviewAssignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="review"
    )
    task_revision = models.PositiveIntegerField()
    decision = models.CharField(max_length=16, choices=Decision.choices)
    # Rubric severities 0-3 (REVIEW.md): 2 or more means "do not approve as is".
    spec_clarity = models.PositiveSmallIntegerField()
    test_validity = models.PositiveSmallIntegerField()
    interdependency = models.PositiveSmallIntegerField()
    difficulty = models.CharField(max_length=8, choices=Task.Difficulty.choices)
    comment = models.TextField(blank=True, default="")
    is_adjudication = models.BooleanField(default=False)
    # Decided without seeing the review agent's findings (the dataset's blind review sample):
    # calibration reports these apart from decisions the findings may have anchored.
    blind = models.BooleanField(default=False)
    seconds_spent = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=Q(decision__in=Decision.values),
                name="review_decision_valid",
            ),
            models.CheckConstraint(
                condition=Q(spec_clarity__lte=3)
                & Q(test_validity__lte=3)
                & Q(interdependency__lte=3),
                name="review_rubric_range",
            ),
        ]
        indexes = [
            models.Index(fields=["task", "task_revision"], name="review_task_revision"),
            models.Index(fields=["reviewer", "created_at"], name="review_reviewer_created"),
            models.Index(fields=["created_at"], name="review_created"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer} {self.decision} {self.task_id} r{self.task_revision}"


class Comment(models.Model):
    class Anchor(models.TextChoices):
        TASK = "task"
        SPEC = "spec"
        TEST = "test"
        PATCH_LINE = "patch_line"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="task_comments"
    )
    body = models.TextField()
    anchor = models.CharField(max_length=16, choices=Anchor.choices, default=Anchor.TASK)
    spec = models.ForeignKey(
        Specification, null=True, blank=True, on_delete=models.SET_NULL, related_name="comments"
    )
    test = models.ForeignKey(
        TestCase, null=True, blank=True, on_delete=models.SET_NULL, related_name="comments"
    )
    patch = models.CharField(max_length=16, blank=True, default="")
    file_path = models.CharField(max_length=500, blank=True, default="")
    line = models.PositiveIntegerField(null=True, blank=True)
    task_revision = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["task", "created_at"], name="comment_task_created")]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(anchor="task")
                    | Q(anchor="spec", spec__isnull=False)
                    | Q(anchor="test", test__isnull=False)
                    | Q(anchor="patch_line", line__isnull=False)
                ),
                name="comment_anchor_complete",
            )
        ]

    def __str__(self) -> str:
        return f"comment by {self.author} on {self.task_id}"


class Adjudication(models.Model):
    """A task whose reviewers disagreed under the dataset's consensus rule; a curator decides."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="adjudications")
    task_revision = models.PositiveIntegerField()
    reason = models.CharField(max_length=300)
    decisions = models.JSONField(default=dict, help_text="reviewer -> decision, as they stood.")
    opened_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    resolved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    review = models.OneToOneField(
        Review, null=True, blank=True, on_delete=models.SET_NULL, related_name="adjudication"
    )

    class Meta:
        ordering = ["opened_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "task_revision"], name="adjudication_once_per_revision"
            )
        ]
        indexes = [models.Index(fields=["resolved_at", "opened_at"], name="adjudication_open")]

    def __str__(self) -> str:
        return f"adjudication of {self.task_id} r{self.task_revision}"
