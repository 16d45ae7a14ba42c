"""From model rows and settings to the plain values the engines take (sandbox, git)."""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

from django.conf import settings

from curation.models import EnvironmentRecipe, Repository
from workers import gitstore
from workers.recipes.recipe import Recipe
from workers.sandbox.types import EnvironmentSpec, Limits, Snapshot
from workers.sandbox_runtime import sandbox_backend
from workers.synthesis.coverage_cache import CoverageCache


def run_in_sandbox(request):
    return sandbox_backend().run(request)


@functools.lru_cache(maxsize=256)
def coverage_cached_runner() -> CoverageCache:
    """The sandbox runner whose whole-suite coverage runs are kept in storage (the engine's
    CoverageCache; here only where it keeps them)."""
    return CoverageCache(run_in_sandbox, settings.STORAGE_ROOT / "coverage")


def _file_at(git_dir: str, commit: str, path: str) -> str | None:
    # A file at a commit never changes: pages that show tests read each one once.
    try:
        return gitstore.read_file(Path(git_dir), commit, path)
    except (OSError, gitstore.GitError):
        return None


def base_reader(repository: Repository, commit: str):
    """`read(path)`: a file of the repository at `commit` (None when absent), for what a
    patch leaves behind (workers.testpatch)."""
    git_dir = str(repository.git_dir)

    def read(path: str) -> str | None:
        # No repository stored (yet): nothing to read, and nothing cached that could go stale.
        if not Path(git_dir).is_dir():
            return None
        return _file_at(git_dir, commit, path)

    return read


def snapshot_for(repository: Repository, commit: str | None = None) -> Snapshot:
    return Snapshot(git_dir=repository.git_dir, commit=commit or repository.default_commit)


_NOT_LOOKED_UP = object()


def current_recipes(repositories) -> dict[int, EnvironmentRecipe]:
    """{repository id: the recipe of its default commit}, in one query (exports, many
    repositories at once)."""
    found = {}
    by_id = {repository.pk: repository for repository in repositories}
    rows = EnvironmentRecipe.objects.filter(repository_id__in=by_id).exclude(recipe={})
    for row in rows:
        if row.commit == by_id[row.repository_id].default_commit:
            found[row.repository_id] = row
    return found


def environment_for(repository: Repository, *, recipe_row=_NOT_LOOKED_UP) -> EnvironmentSpec:
    """The environment every run on the repository uses: its recipe where one works (or a
    curator wrote it), else the repository's own setup fields. `recipe_row`: the recipe of
    its default commit when the caller looked it up already (None: it has none)."""
    row = recipe_row
    if row is _NOT_LOOKED_UP:
        row = (
            EnvironmentRecipe.objects.filter(
                repository=repository, commit=repository.default_commit
            )
            .exclude(recipe={})
            .first()
        )
    if row is not None and (
        row.status == EnvironmentRecipe.Status.OK or row.source == EnvironmentRecipe.Source.CURATOR
    ):
        recipe = Recipe.from_dict(row.recipe)
        spec = recipe.environment_spec(python=settings.SPECLOOM_SANDBOX_PYTHON)
        # The recipe's Python names the base image of the environment's Docker image.
        version = re.match(r"^\s*(\d+\.\d+)", recipe.python or "")
        return dataclasses.replace(spec, image_python=version.group(1) if version else "")
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
