"""Environment recipes: inferred from a repository's files, tried in the sandbox, stored with
their environment report, and editable by curators.

The recipe of a repository's default commit is the one every run on that repository uses
(tasks' base commits share its dependency files). Preparing it is a job of its own, and the
first step of a synthesis run when no working recipe exists yet.
"""

from __future__ import annotations

import shlex
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.db import transaction

from curation import runtime
from curation.layout import default_setup_command
from curation.models import EnvironmentRecipe, Repository
from workers import gitstore
from workers.models import Job
from workers.recipes.infer import initial_recipe
from workers.recipes.project_files import read_project, wanted_files
from workers.recipes.recipe import Recipe, RecipeError
from workers.recipes.report import environment_report
from workers.recipes.trial import Attempt, RecipeOutcome, find_recipe
from workers.sandbox import EnvironmentBuildError, RunRequest
from workers.services import JobFailed, job_enqueue

TEST_FILE_NAMES = ("test_*.py", "*_test.py", "tests.py")
TEST_FOLDERS = ("tests", "test", "testing")


class RecipeConflict(Exception):
    """The recipe changed since the revision the edit started from (HTTP 409)."""


def snapshot_layout(repository: Repository, commit: str) -> dict[str, Any]:
    """What the snapshot's file list says: its config files' texts, its own top-level modules
    (a missing one is generated at build time, not a package to install), and its test files."""
    paths = gitstore.list_files(repository.git_dir, commit)
    files = {}
    for path in wanted_files(paths):
        text = gitstore.read_file(repository.git_dir, commit, path)
        if text is not None:
            files[path] = text
    own = set()
    for path in paths:
        parts = PurePosixPath(path).parts
        if parts[0] == "src" and len(parts) > 2:
            parts = parts[1:]
        if len(parts) >= 2 and parts[-1] == "__init__.py":
            own.add(parts[0])
        elif len(parts) == 1 and path.endswith(".py") and path not in ("setup.py", "conftest.py"):
            own.add(PurePosixPath(path).stem)
    test_files = [p for p in paths if _is_test_file(PurePosixPath(p))]
    return {"files": files, "own_packages": frozenset(own), "test_files": test_files}


def _is_test_file(path: PurePosixPath) -> bool:
    """pytest's default test files, and unittest-style ones in a tests folder (tests/test.py,
    test/testcore.py) that a recipe then asks pytest to collect."""
    if path.suffix != ".py":
        return False
    if any(path.match(name) for name in TEST_FILE_NAMES):
        return True
    return path.name.startswith("test") and any(part in TEST_FOLDERS for part in path.parts[:-1])


def recipe_row(*, repository: Repository, commit: str | None = None) -> EnvironmentRecipe:
    """The recipe of the snapshot (made on first use). A repository still being imported has
    no snapshot yet: it gets an unsaved, empty recipe."""
    commit = commit or repository.default_commit
    if not commit:
        return EnvironmentRecipe(repository=repository, commit="")
    row, _created = EnvironmentRecipe.objects.get_or_create(repository=repository, commit=commit)
    return row


def _try(repository: Repository, commit: str, recipe: Recipe) -> Attempt:
    """Build the recipe's environment and run the whole suite once, with coverage (the run a
    synthesis starts from: it is cached and reused)."""
    request = RunRequest(
        snapshot=runtime.snapshot_for(repository, commit),
        environment=recipe.environment_spec(python=settings.SPECLOOM_SANDBOX_PYTHON),
        coverage=True,
        limits=runtime.sandbox_limits(),
    )
    cache = runtime.coverage_cached_runner()
    try:
        result = cache(request)
    except EnvironmentBuildError as exc:
        return Attempt(
            recipe=recipe,
            error=f"`{exc.command}` {exc.reason}\n{exc.output_tail[-3000:]}",
            environment_key=exc.environment_key,
        )
    return Attempt(
        recipe=recipe,
        report=environment_report(result),
        environment_key=result.environment_key,
        seconds=result.wall_seconds,
    )


def recipe_prepare(
    *,
    repository: Repository,
    commit: str | None = None,
    force: bool = False,
    log=lambda line: None,
) -> EnvironmentRecipe:
    """Find (or re-try) the recipe of the snapshot and store it with its report.

    A curator's recipe is tried as it is; an inferred one is adjusted after each try.
    """
    commit = commit or repository.default_commit
    row = recipe_row(repository=repository, commit=commit)
    if row.status == EnvironmentRecipe.Status.OK and not force:
        return row
    layout = snapshot_layout(repository, commit)
    curated = row.source == EnvironmentRecipe.Source.CURATOR and row.recipe
    legacy = None if curated else recipe_from_repository_fields(repository)
    if curated:
        start = Recipe.from_dict(row.recipe)
    elif legacy is not None:
        start, curated = legacy, True
    else:
        config = read_project(layout["files"])
        start = initial_recipe(config, python=_python_version(), test_files=layout["test_files"])
    EnvironmentRecipe.objects.filter(pk=row.pk).update(status=EnvironmentRecipe.Status.TRYING)
    if not layout["test_files"]:
        log("warning: the snapshot has no test files (test_*.py, *_test.py, tests.py)")
    outcome = find_recipe(
        start=start,
        try_recipe=lambda recipe: _try(repository, commit, recipe),
        own_packages=layout["own_packages"],
        adjust=not curated,
        log=log,
    )
    return _store(row, outcome, test_files=len(layout["test_files"]))


@transaction.atomic
def _store(row: EnvironmentRecipe, outcome: RecipeOutcome, *, test_files: int) -> EnvironmentRecipe:
    row = EnvironmentRecipe.objects.select_for_update().get(pk=row.pk)
    chosen = outcome.chosen
    row.recipe = chosen.recipe.to_dict()
    row.status = EnvironmentRecipe.Status.OK if outcome.usable else EnvironmentRecipe.Status.FAILED
    row.reason = outcome.reason
    row.hint = outcome.hint
    if not outcome.usable and not test_files:
        row.reason = "the snapshot has no test files (test_*.py, *_test.py, tests.py)"
        row.hint = "synthesis needs a test suite: pick a repository (or commit) that has tests"
    row.attempts = [attempt.to_dict() for attempt in outcome.attempts]
    report = chosen.report.to_dict() if chosen.report is not None else {}
    row.report = {**report, "test_files": test_files}
    row.environment_key = chosen.environment_key
    row.revision += 1
    row.save()
    _note_on_repository(row)
    return row


def _note_on_repository(row: EnvironmentRecipe) -> None:
    """The repository's status table shows how far its environment got."""
    from curation.services.repositories import repository_set_status

    repository = row.repository
    if row.commit != repository.default_commit:
        return
    report = row.report or {}
    counts = {"tests_collected": report.get("collected"), "test_files": report.get("test_files")}
    if row.status == EnvironmentRecipe.Status.OK:
        if repository.status != Repository.Status.TASKS_VERIFIED:
            repository_set_status(
                repository=repository,
                status=Repository.Status.TESTS_COLLECTED,
                reason=row.reason,
                **counts,
            )
        return
    repository_set_status(
        repository=repository,
        status=Repository.Status.FAILED,
        reason=f"environment: {row.reason}. Fix: {row.hint}",
        **counts,
    )


def recipe_adopt_repository_fields(*, repository: Repository, user=None) -> EnvironmentRecipe:
    """The repository's setup fields were edited (the API's PATCH): they become the curator's
    recipe, or, back at their defaults, the recipe is inferred again."""
    row = recipe_row(repository=repository)
    if row.pk is None:
        return row  # not imported yet: the first preparation reads the fields
    recipe = recipe_from_repository_fields(repository)
    with transaction.atomic():
        row = EnvironmentRecipe.objects.select_for_update().get(pk=row.pk)
        if recipe is None:
            row.recipe, row.source = {}, EnvironmentRecipe.Source.INFERRED
        else:
            row.recipe, row.source = recipe.to_dict(), EnvironmentRecipe.Source.CURATOR
        row.status = EnvironmentRecipe.Status.PENDING
        row.reason = row.hint = ""
        row.updated_by = user if getattr(user, "is_authenticated", False) else None
        row.revision += 1
        row.save()
    return row


def recipe_prepare_enqueue(*, repository: Repository, user=None, force: bool = True) -> Job:
    if not repository.default_commit:
        raise RecipeError("the repository is not imported yet: prepare its environment after")
    return job_enqueue(
        kind="prepare_environment",
        target=repository,
        params={"repository_id": repository.pk, "force": force},
        user=user,
        message=f"prepare the environment of {repository.name}",
    )


def recipe_prepare_run(*, job: Job, ctx) -> dict[str, Any]:
    repository = Repository.objects.get(pk=job.params["repository_id"])
    ctx.progress(5, f"trying recipes for {repository.name}")
    row = recipe_prepare(repository=repository, force=bool(job.params.get("force")), log=ctx.log)
    result = {"recipe_id": row.pk, "status": row.status, "report": row.report}
    if row.status != EnvironmentRecipe.Status.OK:
        raise JobFailed(f"{row.reason}. Fix: {row.hint}", result=result)
    note = f" ({row.reason})" if row.reason else ""
    return {**result, "message": f"environment ok: {row.report.get('summary', '')}{note}"}


@transaction.atomic
def recipe_update(
    *, row: EnvironmentRecipe, data: object, user, revision: int
) -> EnvironmentRecipe:
    """A curator's recipe replaces the inferred one; it is tried by the next preparation."""
    recipe = Recipe.from_dict(data)  # RecipeError with the field and why
    if row.pk is None:
        raise RecipeError("the repository is not imported yet: its recipe can be set after")
    current = EnvironmentRecipe.objects.select_for_update().get(pk=row.pk)
    if current.revision != revision:
        raise RecipeConflict(
            f"the recipe changed meanwhile (now revision {current.revision}, the edit started "
            f"from {revision}): reload it and edit again"
        )
    current.recipe = recipe.to_dict()
    current.source = EnvironmentRecipe.Source.CURATOR
    current.status = EnvironmentRecipe.Status.PENDING
    current.reason = current.hint = ""
    current.updated_by = user if getattr(user, "is_authenticated", False) else None
    current.revision += 1
    current.save()
    return current


def recipe_from_repository_fields(repository: Repository) -> Recipe | None:
    """A repository whose setup command, extra requirements or test command a curator changed
    from the import's defaults: those fields are the curator's recipe."""
    setup = repository.setup_command.strip()
    requirements = [str(r) for r in (repository.environment or {}).get("requirements", [])]
    test_command = shlex.split(repository.test_command or "pytest")
    options = test_command[1:] if test_command[:1] == ["pytest"] else []
    defaults = {"", "pip install .", default_setup_command(repository.layout or {})}
    if setup in defaults and not requirements and not options:
        return None
    install = "." if setup == "pip install ." else ""
    return Recipe(
        install=install,
        packages=tuple(requirements),
        setup_commands=() if install else ((setup,) if setup else ()),
        pytest_options=tuple(options),
        python=_python_version(),
        notes=("from the repository's setup command, extra requirements and test command",),
    )


def _python_version() -> str:
    from workers.sandbox.environments import interpreter_identity

    identity = interpreter_identity(settings.SPECLOOM_SANDBOX_PYTHON).split()
    version = identity[1] if len(identity) > 1 else "3.11"
    return ".".join(version.split(".")[:2])


__all__ = [
    "RecipeConflict",
    "RecipeError",
    "recipe_adopt_repository_fields",
    "recipe_prepare",
    "recipe_prepare_enqueue",
    "recipe_prepare_run",
    "recipe_row",
    "recipe_update",
    "snapshot_layout",
]
