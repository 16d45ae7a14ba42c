"""Importing repositories: from a git URL, a server folder or git repository, or an archive.

Web requests never run repository code and a clone can take minutes, so the browser and the
API *enqueue* an import: a Repository row (status `queued`, no files yet) and a Job that
builds it. The command line may import at once (`repository_import`). Either way the build is
all or nothing: the bare copy is made in a scratch folder beside its final place, checked,
made private (0600 files, 0700 folders) and moved into place before the row records it.

One repository per source and commit: importing the same again returns the existing one, and
importing one whose import failed tries again.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from curation.archives import UnsafeArchive, archive_stem, extract_archive
from curation.exports.records import upstream_from_url
from curation.layout import default_setup_command, detect_layout
from curation.models import Repository
from curation.services.clone_guard import UnsafeCloneSource, clone_pins
from curation.services.repository_sources import (
    CLI_GIT_PROTOCOLS,
    WEB_GIT_PROTOCOLS,
    ImportRequest,
    RepositoryImportError,
    SetupOverrides,
    check_git_metadata,
    git_request,
    looks_like_git_url,
    path_request,
    private_folder,
    redact,
)
from workers import gitstore
from workers.models import Job
from workers.services import JobFailed, JobLeaseLost, job_enqueue

__all__ = [
    "ImportOutcome",
    "RepositoryImportError",
    "RepositoryNotReady",
    "repository_check_usable",
    "repository_import",
    "repository_import_enqueue",
    "repository_import_enqueue_batch",
    "repository_import_run",
    "repository_note_synthesis",
    "repository_set_status",
    "repository_update_setup",
]

NO_TESTS_WARNING = (
    "no test files found (test_*.py, *_test.py or a tests/ folder): synthesis needs a test "
    "suite to verify tasks"
)
STUCK = (Job.Status.FAILED, Job.Status.CANCELLED)


class RepositoryNotReady(ValueError):
    """The repository cannot be worked on (not imported yet, or its import failed)."""


# --- building the bare copy --------------------------------------------------------------------


@dataclass
class _Built:
    final_dir: Path
    commit: str
    layout: dict[str, Any]


def _make_private(folder: Path) -> None:
    """0700 folders, 0600 files, and git told to keep it so for everything it writes later."""
    gitstore.git("config", "core.sharedRepository", "0600", git_dir=folder)
    for root, dirs, files in os.walk(folder):
        os.chmod(root, 0o700)
        for name in files:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o600)
        for name in dirs:
            path = os.path.join(root, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)


def _populate_from_folder(folder: Path, dest: Path, label: str, *, allow_git: bool) -> None:
    if allow_git and (gitstore.is_git_worktree_root(folder) or gitstore.is_bare_repository(folder)):
        check_git_metadata(folder)
        try:
            gitstore.clone_bare(str(folder), dest)
        except gitstore.GitError as exc:
            raise RepositoryImportError(
                f"could not read the git repository at {label}: {exc.stderr}"
            ) from None
        return
    if not any(folder.iterdir()):
        raise RepositoryImportError(f"{label} is empty: there is nothing to import")
    try:
        gitstore.commit_folder(folder, dest, f"Import of {label}")
    except gitstore.GitError as exc:
        raise RepositoryImportError(
            f"could not record the files of {label}: {exc.stderr}"
        ) from None


def _clone(request: ImportRequest, dest: Path) -> None:
    env = {"GIT_ALLOW_PROTOCOL": ":".join(request.protocols)}
    options: list[str] = []
    if set(request.protocols) <= set(WEB_GIT_PROTOCOLS):
        # A curator's URL from the browser or the API: public hosts only, pinned.
        try:
            options = clone_pins(
                request.location, allowed_hosts=settings.SPECLOOM_IMPORT_ALLOW_HOSTS
            )
        except UnsafeCloneSource as exc:
            raise RepositoryImportError(f"not cloned: {exc}") from None
    try:
        gitstore.clone_bare_limited(
            request.location,
            dest,
            options=options,
            env=env,
            max_bytes=settings.SPECLOOM_CLONE_MAX_BYTES,
        )
    except gitstore.GitError as exc:
        raise RepositoryImportError(
            f"could not clone {request.label!r}: {redact(exc.stderr)[-1500:]}"
        ) from None
    except OSError as exc:  # a timeout, or git missing
        raise RepositoryImportError(f"could not clone {request.label!r}: {exc}") from None


def _archive_path(request: ImportRequest) -> Path:
    if request.kind == "upload":
        return Path(settings.STORAGE_ROOT) / request.location
    return Path(request.location)


def _build(request: ImportRequest, *, name: str, progress=None, replace_leftover=False) -> _Built:
    """Make `<name>.git` in storage from the request; raises RepositoryImportError."""
    say = progress or (lambda percent, message: None)
    repo_root = private_folder(Path(settings.SPECLOOM_REPO_ROOT))
    final_dir = repo_root / f"{name}.git"
    if final_dir.exists():
        if not replace_leftover:
            raise RepositoryImportError(
                f"storage already holds {final_dir.name} without a database record; remove it"
            )
        shutil.rmtree(final_dir)  # an earlier attempt of this same repository died mid-way
    scratch_dir = repo_root / f".incoming-{uuid.uuid4().hex}.git"
    try:
        if request.kind == "git":
            say(10, f"cloning {request.label}")
            _clone(request, scratch_dir)
        elif request.kind == "path":
            say(10, "copying the folder")
            _populate_from_folder(
                Path(request.location), scratch_dir, request.label, allow_git=True
            )
        else:
            say(10, "unpacking the archive")
            archive = _archive_path(request)
            if not archive.is_file():
                raise RepositoryImportError(
                    f"the archive {request.label!r} is no longer stored; upload it again"
                )
            with tempfile.TemporaryDirectory(dir=repo_root, prefix=".unpack-") as unpack:
                try:
                    top = extract_archive(
                        archive,
                        Path(unpack),
                        max_files=settings.SPECLOOM_ARCHIVE_MAX_FILES,
                        max_bytes=settings.SPECLOOM_ARCHIVE_MAX_BYTES,
                    )
                except UnsafeArchive as exc:
                    raise RepositoryImportError(f"archive rejected: {exc}") from None
                # Never a work tree to follow: the archive's files become one new commit.
                _populate_from_folder(top, scratch_dir, request.label, allow_git=False)

        say(60, "reading the commit")
        try:
            resolved = gitstore.resolve_commit(scratch_dir, request.commit or "HEAD")
        except gitstore.UnknownCommit:
            if request.commit:
                raise RepositoryImportError(
                    f"commit {request.commit!r} does not exist in {request.label!r}"
                ) from None
            raise RepositoryImportError(f"{request.label!r} has no commits") from None
        say(75, "detecting the layout")
        files = gitstore.list_files(scratch_dir, resolved)
        layout = detect_layout(files, lambda path: gitstore.read_file(scratch_dir, resolved, path))
        _make_private(scratch_dir)
        scratch_dir.rename(final_dir)
        return _Built(final_dir=final_dir, commit=resolved, layout=layout)
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)


def _apply_build(repository: Repository, built: _Built, setup: SetupOverrides) -> None:
    repo_root = Path(settings.SPECLOOM_REPO_ROOT)
    layout = built.layout
    repository.git_path = str(built.final_dir.relative_to(repo_root.parent))
    repository.default_commit = built.commit
    repository.layout = layout
    repository.setup_command = (
        setup.setup_command if setup.setup_command is not None else default_setup_command(layout)
    )
    if setup.test_command is not None:
        repository.test_command = setup.test_command or "pytest"
    if setup.requirements is not None:
        requirements = list(setup.requirements)
        repository.environment = {**repository.environment, "requirements": requirements}
    repository.test_files = layout.get("test_files", 0)
    repository.status = Repository.Status.IMPORTED
    repository.status_reason = "" if repository.test_files else NO_TESTS_WARNING
    repository.status_updated_at = timezone.now()


# --- importing at once (command line, demo) ----------------------------------------------------


def _request_for_source(
    source: str, *, commit: str | None, name: str | None, setup: SetupOverrides
) -> ImportRequest:
    """What the command line's one `source` argument means: an existing path, else a URL."""
    path = Path(source).expanduser()
    if path.exists():
        return path_request(source, roots=None, commit=commit, name=name, setup=setup)
    if looks_like_git_url(source):
        return git_request(
            source, commit=commit, name=name, setup=setup, protocols=CLI_GIT_PROTOCOLS
        )
    raise RepositoryImportError(
        f"{source!r} is not a repository: it is neither an existing folder, an archive "
        "(.tar.gz, .tgz, .tar, .zip) nor a git URL"
    )


def _name_from_request(request: ImportRequest) -> str:
    if request.name:
        return request.name
    stripped = request.label.rstrip("/")
    if request.source_kind == Repository.SourceKind.ARCHIVE:
        base = archive_stem(stripped)
    else:
        base = re.split(r"[/:]", stripped)[-1]
        base = base[:-4] if base.endswith(".git") else base
    return slugify(base)[:100]


def _existing(request: ImportRequest) -> Repository | None:
    return Repository.objects.filter(
        source_key=request.key, requested_commit=request.commit
    ).first()


def repository_import(
    *,
    source: str,
    name: str | None = None,
    commit: str | None = None,
    user=None,
    setup_command: str | None = None,
) -> Repository:
    """Import `source` now and return the new repository. Raises RepositoryImportError."""
    request = _request_for_source(
        source, commit=commit, name=name, setup=SetupOverrides(setup_command=setup_command)
    )
    name = _name_from_request(request)
    if not name:
        raise RepositoryImportError(f"cannot derive a name from {source!r}; pass --name")
    if Repository.objects.filter(name=name).exists():
        raise RepositoryImportError(
            f"a repository named {name!r} already exists; choose another --name"
        )
    if (existing := _existing(request)) is not None:
        raise RepositoryImportError(
            f"{request.label!r} is already imported as {existing.name!r}"
            + (f" at {request.commit!r}" if request.commit else "")
        )
    built = _build(request, name=name)
    repository = Repository(
        name=name,
        source_kind=request.source_kind,
        source=request.label,
        source_key=request.key,
        requested_commit=request.commit,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    _apply_build(repository, built, request.setup)
    try:
        with transaction.atomic():
            repository.save(force_insert=True)
    except IntegrityError:
        shutil.rmtree(built.final_dir, ignore_errors=True)
        raise RepositoryImportError(
            f"a repository named {name!r} (or from the same source) already exists"
        ) from None
    except BaseException:
        shutil.rmtree(built.final_dir, ignore_errors=True)
        raise
    return repository


# --- importing as a job (browser, API, corpora) ------------------------------------------------


@dataclass
class ImportOutcome:
    """What enqueueing one item did: a new import, a retry, or the repository already there."""

    repository: Repository
    job: Job | None
    action: str  # "queued" | "retried" | "exists" | "in_progress"

    def as_dict(self) -> dict[str, Any]:
        return {
            "repository": self.repository.pk,
            "name": self.repository.name,
            "job": self.job.pk if self.job else None,
            "action": self.action,
            "status": self.repository.status,
        }


def _free_name(base: str) -> str:
    """`base`, or `base-2`, `base-3`... for a name derived from the source."""
    taken = set(
        Repository.objects.filter(name__regex=rf"^{re.escape(base)}(-[0-9]+)?$").values_list(
            "name", flat=True
        )
    )
    if base not in taken:
        return base
    n = 2
    while f"{base[:95]}-{n}" in taken:
        n += 1
    return f"{base[:95]}-{n}"


def _import_stuck(repository: Repository) -> bool:
    """Queued or importing, but its job is over: the worker died or someone cancelled it."""
    job = repository.import_job
    return (
        repository.status in (Repository.Status.QUEUED, Repository.Status.IMPORTING)
        and job is not None
        and job.status in STUCK
    )


def _enqueue_job(repository: Repository, request: ImportRequest, user) -> Job:
    job = job_enqueue(
        kind="import_repository",
        target=repository,
        params={"repository_id": repository.pk, "source": request.to_params()},
        user=user,
        message=f"import {repository.name} from {request.label}",
    )
    Repository.objects.filter(pk=repository.pk).update(
        import_job=job,
        status=Repository.Status.QUEUED,
        status_reason="",
        status_updated_at=timezone.now(),
    )
    repository.import_job = job
    repository.status = Repository.Status.QUEUED
    repository.status_reason = ""
    return job


def repository_import_enqueue(*, request: ImportRequest, user=None) -> ImportOutcome:
    """Queue the import of one source, or return what an earlier import of it did."""
    with transaction.atomic():
        existing = (
            Repository.objects.select_for_update(of=("self",))
            .select_related("import_job")
            .filter(source_key=request.key, requested_commit=request.commit)
            .first()
        )
        if existing is not None:
            if existing.status == Repository.Status.FAILED and not existing.is_imported:
                return ImportOutcome(existing, _enqueue_job(existing, request, user), "retried")
            if _import_stuck(existing):
                return ImportOutcome(existing, _enqueue_job(existing, request, user), "retried")
            if existing.status in (Repository.Status.QUEUED, Repository.Status.IMPORTING):
                return ImportOutcome(existing, existing.import_job, "in_progress")
            return ImportOutcome(existing, existing.import_job, "exists")

        name = _name_from_request(request)
        if not name:
            raise RepositoryImportError(f"cannot derive a name from {request.label!r}; give a name")
        if request.name:
            if Repository.objects.filter(name=name).exists():
                raise RepositoryImportError(
                    f"a repository named {name!r} already exists; choose another name"
                )
        else:
            name = _free_name(name)
        try:
            with transaction.atomic():
                repository = Repository.objects.create(
                    name=name,
                    source_kind=request.source_kind,
                    source=request.label,
                    source_key=request.key,
                    requested_commit=request.commit,
                    status=Repository.Status.QUEUED,
                    status_updated_at=timezone.now(),
                    upstream=(upstream_from_url(request.label) or "")
                    if request.kind == "git"
                    else "",
                    created_by=user if getattr(user, "is_authenticated", False) else None,
                )
        except IntegrityError:
            raise RepositoryImportError(
                f"a repository named {name!r} was created a moment ago; try again"
            ) from None
        return ImportOutcome(repository, _enqueue_job(repository, request, user), "queued")


@dataclass
class BatchItemResult:
    index: int
    outcome: ImportOutcome | None = None
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        if self.outcome is None:
            return {"index": self.index, "error": self.error}
        return {"index": self.index, **self.outcome.as_dict()}


def repository_import_enqueue_batch(*, items: list[Any], parse, user=None) -> list[BatchItemResult]:
    """Queue one import job per item. `parse(item) -> ImportRequest` checks each; a bad item
    is reported with its index and the others go ahead."""
    results = []
    for index, item in enumerate(items):
        try:
            outcome = repository_import_enqueue(request=parse(item), user=user)
            results.append(BatchItemResult(index, outcome=outcome))
        except RepositoryImportError as exc:
            results.append(BatchItemResult(index, error=str(exc)))
    return results


def repository_set_status(
    *, repository: Repository, status: str, reason: str = "", **counts: int | None
) -> None:
    """Record how far a repository got (and why it stopped); counts: tests_collected, ..."""
    allowed = {"test_files", "tests_collected", "tasks_verified"}
    if set(counts) - allowed:
        raise ValueError(f"unknown counts {sorted(set(counts) - allowed)}")
    fields = {
        "status": status,
        "status_reason": redact(reason)[:4000],
        "status_updated_at": timezone.now(),
        **counts,
    }
    Repository.objects.filter(pk=repository.pk).update(**fields)
    for key, value in fields.items():
        setattr(repository, key, value)


def repository_import_run(*, job: Job, ctx) -> dict[str, Any]:
    """The import job: build the bare copy, then fill in the repository row."""
    repository = Repository.objects.get(pk=job.params["repository_id"])
    request = ImportRequest.from_params(job.params["source"])
    if repository.is_imported:
        return {
            "message": f"{repository.name} is already imported at {repository.default_commit[:12]}",
            "repository": repository.pk,
        }
    Repository.objects.filter(pk=repository.pk).update(
        status=Repository.Status.IMPORTING, import_job=job, status_updated_at=timezone.now()
    )
    try:
        built = _build(request, name=repository.name, progress=ctx.progress, replace_leftover=True)
    except RepositoryImportError as exc:
        repository_set_status(
            repository=repository, status=Repository.Status.FAILED, reason=str(exc)
        )
        raise JobFailed(redact(str(exc))) from None
    except JobLeaseLost:
        repository_set_status(
            repository=repository,
            status=Repository.Status.FAILED,
            reason="the import was cancelled or its worker lost it; retry it",
        )
        raise
    try:
        ctx.progress(90, "recording the repository")
        with transaction.atomic():
            repository = Repository.objects.select_for_update().get(pk=repository.pk)
            _apply_build(repository, built, request.setup)
            repository.import_job = job
            repository.save()
    except BaseException:
        shutil.rmtree(built.final_dir, ignore_errors=True)
        raise
    if request.kind == "upload":
        _archive_path(request).unlink(missing_ok=True)
    warning = repository.status_reason
    return {
        "message": f"imported {repository.name} at {repository.default_commit[:12]}"
        + (f"; warning: {warning}" if warning else ""),
        "repository": repository.pk,
        "commit": repository.default_commit,
        "test_files": repository.test_files,
        "warning": warning,
    }


# --- using a repository -----------------------------------------------------------------------


def repository_check_usable(repository: Repository) -> None:
    """Raise RepositoryNotReady unless the repository's files are stored and readable."""
    if repository.is_imported and repository.git_dir.is_dir():
        return
    if repository.status == Repository.Status.FAILED:
        why = f"its import failed: {repository.status_reason or 'no reason recorded'}"
    elif repository.status in (Repository.Status.QUEUED, Repository.Status.IMPORTING):
        why = "its import has not finished yet"
    else:
        why = "it has no stored git repository (import it from its source again)"
    raise RepositoryNotReady(f"repository {repository.name!r} is not imported: {why}")


def repository_update_setup(
    *,
    repository: Repository,
    setup_command: str,
    test_command: str,
    requirements: list[str] | tuple[str, ...],
) -> list[str]:
    """Change how the repository's environment is set up; returns the fields that changed."""
    overrides = SetupOverrides.parse(
        {
            "setup_command": setup_command,
            "test_command": test_command,
            "requirements": list(requirements),
        }
    )
    changed = []
    if overrides.setup_command != repository.setup_command:
        repository.setup_command = overrides.setup_command
        changed.append("setup_command")
    test_command = overrides.test_command or "pytest"
    if test_command != repository.test_command:
        repository.test_command = test_command
        changed.append("test_command")
    wanted = list(overrides.requirements or ())
    if wanted != list(repository.environment.get("requirements", [])):
        repository.environment = {**repository.environment, "requirements": wanted}
        changed.append("environment")
    if changed:
        repository.save(update_fields=changed)
        from curation.services.recipes import recipe_adopt_repository_fields

        recipe_adopt_repository_fields(repository=repository)
    return changed


def repository_note_synthesis(*, repository: Repository) -> None:
    """After a synthesis run: count the repository's verified tasks; the first one moves it to
    `tasks_verified` (a later stage is never undone by a run that verified nothing)."""
    verified = repository.tasks.filter(validation__verified=True).count()
    fields: dict[str, Any] = {"tasks_verified": verified}
    if verified and repository.status != Repository.Status.TASKS_VERIFIED:
        fields.update(
            status=Repository.Status.TASKS_VERIFIED,
            status_reason="",
            status_updated_at=timezone.now(),
        )
    Repository.objects.filter(pk=repository.pk).update(**fields)
