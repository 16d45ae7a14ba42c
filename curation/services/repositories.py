"""Importing repositories: from a git URL, a local folder or git repository, or an archive.

The import is all or nothing: the bare copy is built in a scratch folder beside its final place,
checked, moved into place, and only then recorded; any failure removes what was built.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import uuid
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from curation.archives import UnsafeArchive, archive_stem, extract_archive, is_archive_name
from curation.exports.records import upstream_from_url
from curation.layout import default_setup_command, detect_layout
from curation.models import Repository
from workers import gitstore

_GIT_URL = re.compile(r"^(https?|git|ssh|file)://|^[\w.-]+@[\w.-]+:")


class RepositoryImportError(ValueError):
    """The input cannot become a repository; the message says why, for the person importing."""


def _name_from_source(source: str, kind: str) -> str:
    stripped = source.rstrip("/")
    if kind == Repository.SourceKind.ARCHIVE:
        base = archive_stem(stripped)
    else:
        base = re.split(r"[/:]", stripped)[-1]
        base = base[:-4] if base.endswith(".git") else base
    return slugify(base)[:100]


def _classify(source: str) -> str:
    path = Path(source).expanduser()
    if path.is_file() and is_archive_name(path.name):
        return Repository.SourceKind.ARCHIVE
    if path.is_file():
        raise RepositoryImportError(
            f"{source!r} is a file but not a supported archive (.tar.gz, .tgz, .tar, .zip)"
        )
    if path.is_dir():
        return Repository.SourceKind.PATH
    if _GIT_URL.match(source):
        return Repository.SourceKind.GIT
    raise RepositoryImportError(
        f"{source!r} is not a repository: it is neither an existing folder, an archive "
        "(.tar.gz, .tgz, .tar, .zip) nor a git URL"
    )


def _populate_from_folder(folder: Path, dest: Path, label: str) -> None:
    if gitstore.is_git_worktree_root(folder) or gitstore.is_bare_repository(folder):
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


def repository_import(
    *,
    source: str,
    name: str | None = None,
    commit: str | None = None,
    user=None,
    setup_command: str | None = None,
) -> Repository:
    """Import `source` as a new repository and return it. Raises RepositoryImportError."""
    kind = _classify(source)
    name = slugify(name)[:100] if name else _name_from_source(source, kind)
    if not name:
        raise RepositoryImportError(f"cannot derive a name from {source!r}; pass --name")
    if Repository.objects.filter(name=name).exists():
        raise RepositoryImportError(
            f"a repository named {name!r} already exists; choose another --name"
        )

    repo_root: Path = settings.SPECLOOM_REPO_ROOT
    repo_root.mkdir(parents=True, exist_ok=True)
    final_dir = repo_root / f"{name}.git"
    if final_dir.exists():
        raise RepositoryImportError(
            f"storage already holds {final_dir.name} without a database record; remove it first"
        )
    scratch_dir = repo_root / f".incoming-{uuid.uuid4().hex}.git"
    try:
        if kind == Repository.SourceKind.GIT:
            try:
                gitstore.clone_bare(source, scratch_dir)
            except gitstore.GitError as exc:
                raise RepositoryImportError(f"could not clone {source!r}: {exc.stderr}") from None
        elif kind == Repository.SourceKind.PATH:
            _populate_from_folder(Path(source).expanduser().resolve(), scratch_dir, source)
        else:
            with tempfile.TemporaryDirectory(dir=repo_root, prefix=".unpack-") as unpack:
                try:
                    top = extract_archive(
                        Path(source),
                        Path(unpack),
                        max_files=settings.SPECLOOM_ARCHIVE_MAX_FILES,
                        max_bytes=settings.SPECLOOM_ARCHIVE_MAX_BYTES,
                    )
                except UnsafeArchive as exc:
                    raise RepositoryImportError(f"archive rejected: {exc}") from None
                _populate_from_folder(top, scratch_dir, Path(source).name)

        try:
            resolved = gitstore.resolve_commit(scratch_dir, commit or "HEAD")
        except gitstore.UnknownCommit:
            if commit:
                raise RepositoryImportError(
                    f"commit {commit!r} does not exist in {source!r}"
                ) from None
            raise RepositoryImportError(f"{source!r} has no commits") from None

        files = gitstore.list_files(scratch_dir, resolved)
        layout = detect_layout(files, lambda path: gitstore.read_file(scratch_dir, resolved, path))
        scratch_dir.rename(final_dir)
        try:
            with transaction.atomic():
                return Repository.objects.create(
                    name=name,
                    source_kind=kind,
                    source=source,
                    git_path=str(final_dir.relative_to(repo_root.parent)),
                    default_commit=resolved,
                    upstream=(upstream_from_url(source) or "")
                    if kind == Repository.SourceKind.GIT
                    else "",
                    setup_command=setup_command
                    if setup_command is not None
                    else default_setup_command(layout),
                    test_command="pytest",
                    layout=layout,
                    created_by=user if getattr(user, "is_authenticated", False) else None,
                )
        except IntegrityError:
            shutil.rmtree(final_dir, ignore_errors=True)
            raise RepositoryImportError(
                f"a repository named {name!r} already exists; choose another --name"
            ) from None
        except BaseException:
            shutil.rmtree(final_dir, ignore_errors=True)
            raise
    finally:
        shutil.rmtree(scratch_dir, ignore_errors=True)
