"""Trajectories (a model's attempt at a task, step by step) and their evaluations: the final
patch run against the task's tests, with each spec's verdict."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from curation.models.tasks import Specification, Task


class Trajectory(models.Model):
    class Resolved(models.TextChoices):
        FULL = "full"
        PARTIAL = "partial"
        NONE = "none"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="trajectories")
    model_name = models.CharField(max_length=200, db_index=True)
    scaffold = models.CharField(max_length=100, blank=True, default="")
    source_format = models.CharField(max_length=32)
    content_sha256 = models.CharField(max_length=64)
    final_patch = models.TextField(blank=True, default="")
    exit_status = models.CharField(max_length=100, blank=True, default="")
    tokens_in = models.BigIntegerField(null=True, blank=True)
    tokens_out = models.BigIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    step_count = models.PositiveIntegerField(default=0)
    unsafe = models.BooleanField(default=False, help_text="Flagged by the review agent.")
    metadata = models.JSONField(default=dict, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "model_name", "id"]
        verbose_name_plural = "trajectories"
        constraints = [
            # A trajectory is its content and the model said to have run it: the same file
            # imported under another model's name is another trajectory.
            models.UniqueConstraint(
                fields=["task", "model_name", "content_sha256"],
                name="trajectory_task_model_content",
            )
        ]

    def __str__(self) -> str:
        return f"{self.model_name} on {self.task_id}"


class TrajectoryStep(models.Model):
    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    role = models.CharField(max_length=16, blank=True, default="")
    kind = models.CharField(max_length=16, blank=True, default="")
    content = models.TextField(blank=True, default="")
    action = models.TextField(blank=True, default="")
    observation = models.TextField(blank=True, default="")
    thought = models.TextField(blank=True, default="")
    tool = models.CharField(max_length=100, blank=True, default="")
    timestamp = models.CharField(max_length=64, blank=True, default="")
    extra = models.JSONField(default=dict, blank=True)

    # What a step says, in the order the importer, the API and the exports list it.
    CONTENT_FIELDS = (
        "index",
        "role",
        "kind",
        "content",
        "action",
        "observation",
        "thought",
        "tool",
        "timestamp",
    )

    class Meta:
        ordering = ["trajectory", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "index"], name="step_trajectory_index")
        ]

    def __str__(self) -> str:
        return f"step {self.index} of {self.trajectory_id}"


class Evaluation(models.Model):
    """A trajectory's final patch run against its task's tests (one per trajectory, replaced)."""

    trajectory = models.OneToOneField(
        Trajectory, on_delete=models.CASCADE, related_name="evaluation"
    )
    task_revision = models.PositiveIntegerField()
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    patch_applied = models.BooleanField(default=False)
    patch_error = models.TextField(blank=True, default="")
    resolved = models.CharField(max_length=8, choices=Trajectory.Resolved.choices)
    test_outcomes = models.JSONField(default=dict, blank=True)
    touched_test_files = models.JSONField(default=list, blank=True)
    flaky_tests = models.JSONField(default=list, blank=True)
    run_seconds = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(resolved__in=["full", "partial", "none"]), name="evaluation_resolved"
            )
        ]

    def __str__(self) -> str:
        return f"evaluation of {self.trajectory_id}: {self.resolved}"


class SpecResult(models.Model):
    """Whether one evaluation satisfied one spec (all of its tests passed)."""

    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="spec_results"
    )
    spec = models.ForeignKey(Specification, on_delete=models.CASCADE, related_name="results")
    satisfied = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "spec"], name="specresult_unique")
        ]

    def __str__(self) -> str:
        return f"{self.spec_id}: {'satisfied' if self.satisfied else 'not satisfied'}"
