"""Releases: frozen, checksummed versions of a dataset, refused any change once ready."""

from __future__ import annotations

from django.conf import settings
from django.db import IntegrityError, models
from django.db.models import Q

from curation.models.datasets import Dataset
from curation.models.tasks import Task


class ReleaseImmutable(IntegrityError):
    """Something tried to change or delete a ready release (or its entries).

    An IntegrityError with the database trigger's prefix: callers see the same error whether
    the application refused first or the trigger of migration 0003 did.
    """

    def __init__(self, message: str = "a ready release never changes; cut a new version instead"):
        super().__init__(f"release_immutable: {message}")


class ReleaseQuerySet(models.QuerySet):
    # Bulk writes skip save() and delete(); the database triggers of migration 0003 are the last
    # word, these checks give the same answer earlier, with a clear error, on every database.
    def update(self, **kwargs):
        if self.filter(status="ready").exists():
            raise ReleaseImmutable()
        return super().update(**kwargs)

    def delete(self):
        if self.filter(status="ready").exists():
            raise ReleaseImmutable()
        return super().delete()


class ReleaseTaskQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if self.filter(release__status="ready").exists():
            raise ReleaseImmutable()
        return super().update(**kwargs)

    def delete(self):
        if self.filter(release__status="ready").exists():
            raise ReleaseImmutable()
        return super().delete()


class Release(models.Model):
    """A frozen, checksummed version of a dataset. Never changes once cut."""

    class Status(models.TextChoices):
        BUILDING = "building"
        READY = "ready"
        FAILED = "failed"

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.BUILDING)
    manifest = models.JSONField(default=list, blank=True)
    datasheet = models.JSONField(default=dict, blank=True)
    files = models.JSONField(default=dict, blank=True, help_text="format -> {path, sha256, bytes}")
    manifest_sha256 = models.CharField(max_length=64, blank=True, default="")
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    cut_at = models.DateTimeField(null=True, blank=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["dataset", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "version"], name="release_dataset_version"),
            models.CheckConstraint(
                condition=Q(status__in=["building", "ready", "failed"]), name="release_status"
            ),
        ]
        # A database trigger (migration 0003) refuses any UPDATE or DELETE of a ready release.

    def __str__(self) -> str:
        return f"{self.dataset.name} {self.version}"

    def save(self, *args, **kwargs):
        if self._stored_status() == self.Status.READY:
            raise ReleaseImmutable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self._stored_status() == self.Status.READY:
            raise ReleaseImmutable()
        return super().delete(*args, **kwargs)

    def _stored_status(self) -> str | None:
        if self.pk is None:
            return None
        return Release.objects.filter(pk=self.pk).values_list("status", flat=True).first()


class ReleaseTask(models.Model):
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="entries")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="release_entries")
    instance_id = models.CharField(max_length=200)
    revision = models.PositiveIntegerField()
    content_sha256 = models.CharField(max_length=64)

    objects = ReleaseTaskQuerySet.as_manager()

    class Meta:
        ordering = ["release", "instance_id"]
        constraints = [
            models.UniqueConstraint(fields=["release", "task"], name="releasetask_unique")
        ]

    def __str__(self) -> str:
        return f"{self.instance_id} r{self.revision}"

    def save(self, *args, **kwargs):
        if self._release_is_ready():
            raise ReleaseImmutable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self._release_is_ready():
            raise ReleaseImmutable()
        return super().delete(*args, **kwargs)

    def _release_is_ready(self) -> bool:
        return Release.objects.filter(pk=self.release_id, status=Release.Status.READY).exists()
