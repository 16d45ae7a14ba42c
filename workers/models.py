"""The Job row is the truth about background work; a Celery message only carries its id."""

from __future__ import annotations

from django.conf import settings
from django.contrib.contenttypes.fields import GenericForeignKey
from django.contrib.contenttypes.models import ContentType
from django.db import models


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Job(models.Model):
    Status = JobStatus
    FINISHED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.CANCELLED)

    kind = models.CharField(max_length=64, db_index=True)
    queue = models.CharField(max_length=32, default="default")
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    params = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)

    target_type = models.ForeignKey(
        ContentType, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    target_id = models.CharField(max_length=64, blank=True, default="")
    target = GenericForeignKey("target_type", "target_id")

    progress = models.PositiveSmallIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True, default="")
    log_tail = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")

    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=3)
    worker = models.CharField(max_length=200, blank=True, default="")
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["status", "lease_expires_at"], name="job_status_lease"),
            models.Index(fields=["target_type", "target_id", "status"], name="job_target_status"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(status__in=JobStatus.values), name="job_status_valid"
            ),
            models.CheckConstraint(condition=models.Q(progress__lte=100), name="job_progress_max"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def duration_seconds(self) -> float | None:
        if not self.started_at:
            return None
        end = self.finished_at or self.updated_at
        return (end - self.started_at).total_seconds()

    @classmethod
    def target_filter(cls, obj) -> models.Q:
        return models.Q(target_type=ContentType.objects.get_for_model(obj), target_id=str(obj.pk))
