"""API tokens: what a training pipeline or script authenticates with, and what it may do."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    class Scope(models.TextChoices):
        READ = "read"
        WRITE = "write"
        RELEASE = "release"
        GRADE = "grade"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, unique=True)
    key_sha256 = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user", "name"]
        constraints = [models.UniqueConstraint(fields=["user", "name"], name="apitoken_user_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
