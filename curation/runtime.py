"""From model rows and settings to the plain values the engines take (sandbox, git)."""

from __future__ import annotations

from django.conf import settings

from curation.models import EnvironmentRecipe, Repository
from workers.recipes.recipe import Recipe
from workers.sandbox.types import EnvironmentSpec, Limits, Snapshot
from workers.sandbox_runtime import sandbox_backend


def run_in_sandbox(request):
    return sandbox_backend().run(request)


def snapshot_for(repository: Repository, commit: str | None = None) -> Snapshot:
    return Snapshot(git_dir=repository.git_dir, commit=commit or repository.default_commit)


def environment_for(repository: Repository) -> EnvironmentSpec:
    """The environment every run on the repository uses: its recipe where one works (or a
    curator wrote it), else the repository's own setup fields."""
    row = (
        EnvironmentRecipe.objects.filter(repository=repository, commit=repository.default_commit)
        .exclude(recipe={})
        .first()
    )
    if row is not None and (
        row.status == EnvironmentRecipe.Status.OK or row.source == EnvironmentRecipe.Source.CURATOR
    ):
        return Recipe.from_dict(row.recipe).environment_spec(
            python=settings.SPECLOOM_SANDBOX_PYTHON
        )
    return EnvironmentSpec(
        setup_command=repository.setup_command,
        extra_requirements=tuple(repository.environment.get("requirements", [])),
        python=settings.SPECLOOM_SANDBOX_PYTHON,
    )


def sandbox_limits() -> Limits:
    return Limits(
        wall_seconds=float(settings.SPECLOOM_SANDBOX_WALL_SECONDS),
        memory_bytes=settings.SPECLOOM_SANDBOX_MEMORY_MB * 1024 * 1024,
    )
