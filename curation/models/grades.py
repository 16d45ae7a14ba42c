"""Grades: a patch run against one revision of a task's hidden tests, on request over the API.

Re-exported by curation.models (the app's model registry). A grade is the result, stored once per
(task, task revision, patch SHA-256): asking again returns it. Each model that asked for it is a
GradeSubmission (small rows, so pass rates per model and spec kind come from grades as they come
from trajectories); each spec's verdict is a GradeSpecResult.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class GradeStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


class Grade(models.Model):
    Status = GradeStatus
    PENDING = (GradeStatus.QUEUED, GradeStatus.RUNNING)

    task = models.ForeignKey("curation.Task", on_delete=models.CASCADE, related_name="grades")
    task_revision = models.PositiveIntegerField()
    patch_sha256 = models.CharField(max_length=64)
    patch = models.TextField(blank=True, default="")
    status = models.CharField(max_length=8, choices=GradeStatus.choices, default=GradeStatus.QUEUED)
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # full | partial | none once done (the evaluation engine's resolution); "" before.
    resolved = models.CharField(max_length=8, blank=True, default="")
    patch_applied = models.BooleanField(null=True, blank=True)
    patch_error = models.TextField(blank=True, default="")
    test_outcomes = models.JSONField(default=dict, blank=True)
    flaky_tests = models.JSONField(default=list, blank=True)
    problems = models.JSONField(default=list, blank=True)
    # Why the grading itself failed (the sandbox, an environment that cannot be built).
    error = models.TextField(blank=True, default="")
    run_seconds = models.FloatField(null=True, blank=True)
    environment_key = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["task", "task_revision", "patch_sha256"], name="grade_task_revision_patch"
            ),
            models.CheckConstraint(
                condition=Q(status__in=GradeStatus.values), name="grade_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(resolved__in=["", "full", "partial", "none"]), name="grade_resolved"
            ),
        ]
        indexes = [models.Index(fields=["status", "id"], name="grade_status_id")]

    def __str__(self) -> str:
        return f"grade {self.pk} of {self.task_id} r{self.task_revision} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (GradeStatus.DONE, GradeStatus.FAILED)


class GradeSubmission(models.Model):
    """Who asked for a grade, for which model: one row per (grade, model)."""

    grade = models.ForeignKey(Grade, on_delete=models.CASCADE, related_name="submissions")
    model_name = models.CharField(max_length=200, blank=True, default="")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    token = models.ForeignKey(
        "curation.ApiToken",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="grade_submissions",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["grade", "model_name"], name="gradesubmission_model")
        ]
        indexes = [
            models.Index(fields=["token", "created_at"], name="gradesubmission_token"),
            models.Index(fields=["model_name"], name="gradesubmission_model_name"),
        ]

    def __str__(self) -> str:
        return f"{self.model_name or '-'} asked for grade {self.grade_id}"


class GradeSpecResult(models.Model):
    """Whether a graded patch satisfied one spec (all of its tests passed)."""

    grade = models.ForeignKey(Grade, on_delete=models.CASCADE, related_name="spec_results")
    spec = models.ForeignKey(
        "curation.Specification", on_delete=models.CASCADE, related_name="grade_results"
    )
    satisfied = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["grade", "spec"], name="gradespecresult_unique")
        ]

    def __str__(self) -> str:
        return f"{self.spec_id}: {'satisfied' if self.satisfied else 'not satisfied'}"
