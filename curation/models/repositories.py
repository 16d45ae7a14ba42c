"""Repositories: where tasks come from, how far each import got, and where its files live."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class RepositoryStatus(models.TextChoices):
    """How far a repository got. The first two are its import job's; `failed` says why in
    `status_reason`, whichever stage failed; the later stages are set by whatever checks them
    (environment build and test collection, synthesis)."""

    QUEUED = "queued", "queued"
    IMPORTING = "importing", "importing"
    IMPORTED = "imported", "imported"
    ENVIRONMENT_OK = "environment_ok", "environment ok"
    TESTS_COLLECTED = "tests_collected", "tests collected"
    TASKS_VERIFIED = "tasks_verified", "tasks verified"
    FAILED = "failed", "failed"


class Repository(models.Model):
    Status = RepositoryStatus

    class SourceKind(models.TextChoices):
        GIT = "git"
        PATH = "path"
        ARCHIVE = "archive"

    name = models.SlugField(max_length=100, unique=True)
    source_kind = models.CharField(max_length=16, choices=SourceKind.choices)
    source = models.TextField(help_text="Where it came from: git URL, local path or archive name.")
    # What makes two imports the same: a normalised URL, a resolved path or an archive's
    # sha256, with the commit asked for (blank: the default branch). Blank for old rows.
    source_key = models.CharField(max_length=500, blank=True, default="")
    requested_commit = models.CharField(max_length=200, blank=True, default="")
    git_path = models.CharField(
        max_length=500, blank=True, help_text="Bare repository, relative to storage."
    )
    default_commit = models.CharField(max_length=40, blank=True)
    status = models.CharField(
        max_length=16, choices=RepositoryStatus.choices, default=RepositoryStatus.IMPORTED
    )
    status_reason = models.TextField(
        blank=True, default="", help_text="Why it failed, or a warning (e.g. no test files)."
    )
    status_updated_at = models.DateTimeField(null=True, blank=True)
    import_job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    test_files = models.PositiveIntegerField(null=True, blank=True)
    tests_collected = models.PositiveIntegerField(null=True, blank=True)
    tasks_verified = models.PositiveIntegerField(null=True, blank=True)
    language = models.CharField(max_length=32, default="python")
    setup_command = models.CharField(max_length=500, default="pip install .")
    test_command = models.CharField(max_length=500, default="pytest")
    environment = models.JSONField(default=dict, blank=True)
    upstream = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="owner/name of the upstream project, as SWE-bench's `repo` names it. Taken "
        "from a GitHub/GitLab-like import URL; blank means specloom/<name>.",
    )
    environment_version = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="The `version` its SWE-bench records carry. Blank: a digest of the "
        "environment spec (env-...).",
    )
    layout = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "repositories"
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RepositoryStatus.values), name="repository_status_valid"
            ),
            # One repository per source and commit asked for: importing it again finds it.
            models.UniqueConstraint(
                fields=["source_key", "requested_commit"],
                condition=~Q(source_key=""),
                name="repository_source_commit",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def git_dir(self):
        return settings.SPECLOOM_REPO_ROOT.parent / self.git_path

    @property
    def is_imported(self) -> bool:
        """Its files are stored: it has a bare repository and a commit to work from."""
        return bool(self.git_path and self.default_commit)
