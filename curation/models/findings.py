"""What the review agent says: each audit of a task revision, and the findings it made."""

from __future__ import annotations

from django.db import models

from curation.models.tasks import Task
from curation.models.trajectories import Trajectory
from workers.audit.facts import FindingKind


class Audit(models.Model):
    """One run of the review agent over one revision of a task and the trajectories it had.

    Its findings are a set: a later audit adds a new set and marks the earlier one superseded,
    so what the agent said about each revision, and when, is kept for calibration.
    """

    class LLMStatus(models.TextChoices):
        NOT_RUN = ""
        OK = "ok"
        FAILED = "failed"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="audits")
    task_revision = models.PositiveIntegerField()
    trajectory_count = models.PositiveIntegerField(default=0)
    trajectory_digest = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="sha256 of the trajectories and their "
        "evaluations the audit saw; empty for audits recorded before digests existed.",
    )
    inputs_digest = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="sha256 of everything the audit read: "
        "an audit with the same digest as the last one has nothing new to say.",
    )
    llm_status = models.CharField(
        max_length=8, choices=LLMStatus.choices, blank=True, default=LLMStatus.NOT_RUN
    )
    llm_model = models.CharField(max_length=200, blank=True, default="")
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "created_at", "id"]
        indexes = [
            models.Index(fields=["task", "task_revision", "created_at"], name="audit_task_revision")
        ]

    def __str__(self) -> str:
        return f"audit {self.pk} of {self.task_id} r{self.task_revision}"


class Finding(models.Model):
    # The review agent's kinds, listed once in the engine; the labels Django makes from the
    # member names are the ones the migrations recorded.
    Kind = models.TextChoices("Kind", [(kind.name, kind.value) for kind in FindingKind])

    class Severity(models.TextChoices):
        INFO = "info"
        LOW = "low"
        MEDIUM = "medium"
        HIGH = "high"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="findings")
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.CASCADE, related_name="findings"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.MEDIUM)
    message = models.TextField()
    evidence = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=200, default="heuristic")
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    dismissed = models.BooleanField(default=False)
    # The revision the finding was made on, and the audit (set) it belongs to; validation
    # findings have a revision and no audit. A superseded finding is history: a later audit or
    # validation replaced it, and only calibration still reads it.
    task_revision = models.PositiveIntegerField(null=True, blank=True)
    audit = models.ForeignKey(
        Audit, null=True, blank=True, on_delete=models.CASCADE, related_name="findings"
    )
    superseded = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "-severity", "id"]
        indexes = [models.Index(fields=["task", "dismissed"], name="finding_task_open")]

    def __str__(self) -> str:
        return f"{self.kind} ({self.severity}) on {self.task_id}"
