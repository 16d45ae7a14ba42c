"""The environment recipe of a repository snapshot, with what trying it reported.

Re-exported by curation.models (the app's model registry); kept apart because the recipe is its
own concern: inferred, tried, shown and edited, and what the environment's cache key is made of.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class EnvironmentRecipe(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "not tried yet"
        TRYING = "trying", "being tried"
        OK = "ok", "works"
        FAILED = "failed", "does not work"

    class Source(models.TextChoices):
        INFERRED = "inferred"
        CURATOR = "curator"

    repository = models.ForeignKey(
        "curation.Repository", on_delete=models.CASCADE, related_name="recipes"
    )
    commit = models.CharField(max_length=40)
    # workers.recipes.Recipe.to_dict(): install, packages, environment, setup_commands,
    # pytest_addopts, pytest_options, python, notes.
    recipe = models.JSONField(default=dict)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.INFERRED)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # One sentence of cause, and how to fix it, when the recipe does not work.
    reason = models.TextField(blank=True, default="")
    hint = models.TextField(blank=True, default="")
    # Every recipe tried, in order: {recipe, usable, summary, seconds, environment_key, error}.
    attempts = models.JSONField(default=list, blank=True)
    # The environment report of the recipe in use (workers.recipes.report).
    report = models.JSONField(default=dict, blank=True)
    environment_key = models.CharField(max_length=64, blank=True, default="")
    # Bumped on every change: a curator's edit names the revision it started from (409 if stale).
    revision = models.PositiveIntegerField(default=1)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["repository", "commit"], name="recipe_per_snapshot")
        ]
        ordering = ["repository", "-updated_at"]

    def __str__(self) -> str:
        return f"{self.repository} @ {self.commit[:10]} ({self.status})"
