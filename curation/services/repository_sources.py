"""Where a repository comes from, checked before anything is queued.

An import names one source: a git URL, a path on the server (a folder, a git repository or an
archive file, only under the allowed roots), or an archive uploaded by a curator. This module
turns what a person typed or uploaded into an `ImportRequest` (plain values that fit in a job's
parameters) or says clearly why it cannot, and stores uploads where only the app can read them.
"""

from __future__ import annotations

import hashlib
import os
import re
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

from curation.archives import ARCHIVE_SUFFIXES, UnsafeArchive, inspect_archive, is_archive_name

# Clones started from the browser or the API speak these protocols only: no file:// (it would
# read any repository on the server), no ssh (it would use the server's own keys), no ext::.
# From the browser and the API: http(s) only, whose host can be checked and pinned (see
# clone_guard.py); the command line (an operator) may use any.
WEB_GIT_PROTOCOLS = ("https", "http")
CLI_GIT_PROTOCOLS = ("https", "http", "git", "ssh", "file")
_SCP_LIKE = re.compile(r"^[\w.-]+@[\w.-]+:(?!//)")
_CREDENTIALS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@", re.IGNORECASE)
_COMMIT = re.compile(r"^[\w./-]{1,200}$")
MAX_REQUIREMENTS = 100


class RepositoryImportError(ValueError):
    """The input cannot become a repository; the message says why, for the person importing."""


def redact(text: str) -> str:
    """Credentials in URLs (https://user:token@host/...) never reach a page, a log or a row."""
    return _CREDENTIALS.sub(lambda m: f"{m['scheme']}***@", text or "")


@dataclass(frozen=True)
class SetupOverrides:
    """What a curator says about a repository's set-up, ahead of what is inferred."""

    setup_command: str | None = None
    test_command: str | None = None
    requirements: tuple[str, ...] | None = None

    def as_dict(self) -> dict[str, Any]:
        data = {k: v for k, v in asdict(self).items() if v is not None}
        if "requirements" in data:
            data["requirements"] = list(data["requirements"])
        return data

    @classmethod
    def parse(cls, raw: Any) -> SetupOverrides:
        """From an import item's `setup`: a string (the setup command) or an object."""
        if raw in (None, "", {}):
            return cls()
        if isinstance(raw, str):
            return cls(setup_command=_command(raw, "setup"))
        if not isinstance(raw, dict):
            raise RepositoryImportError(
                "setup must be a string (the setup command) or an object with setup_command, "
                "test_command and requirements"
            )
        unknown = set(raw) - {"setup_command", "test_command", "requirements"}
        if unknown:
            raise RepositoryImportError(
                f"setup has unknown keys {sorted(unknown)}; "
                "expected setup_command, test_command, requirements"
            )
        requirements = raw.get("requirements")
        if requirements is not None:
            requirements = parse_requirements(requirements)
        return cls(
            setup_command=_command(raw["setup_command"], "setup_command")
            if raw.get("setup_command") is not None
            else None,
            test_command=_command(raw["test_command"], "test_command")
            if raw.get("test_command") is not None
            else None,
            requirements=requirements,
        )


def _command(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise RepositoryImportError(f"{name} must be a string")
    value = value.strip()
    if "\x00" in value or "\n" in value or "\r" in value:
        raise RepositoryImportError(f"{name} must be one line without NUL characters")
    if len(value) > 500:
        raise RepositoryImportError(f"{name} is longer than 500 characters")
    return value


def parse_requirements(value: Any) -> tuple[str, ...]:
    """Extra packages: a list of requirement strings, or text with one per line."""
    if isinstance(value, str):
        value = [line for line in value.splitlines()]
    if not isinstance(value, (list, tuple)):
        raise RepositoryImportError("requirements must be a list of package requirements")
    cleaned = []
    for item in value:
        if not isinstance(item, str):
            raise RepositoryImportError("every requirement must be a string, e.g. 'pytest-cov'")
        item = item.strip()
        if not item or item.startswith("#"):
            continue
        if "\x00" in item or len(item) > 200 or item.startswith("-"):
            raise RepositoryImportError(
                f"requirement {item[:60]!r} is not a package requirement (options like -e or "
                "--index-url are not accepted; at most 200 characters)"
            )
        cleaned.append(item)
    if len(cleaned) > MAX_REQUIREMENTS:
        raise RepositoryImportError(f"at most {MAX_REQUIREMENTS} extra requirements")
    return tuple(cleaned)


@dataclass(frozen=True)
class ImportRequest:
    """One repository to import, as plain values (they travel in the import job's params).

    `location` is what the importer reads: the URL (credentials included, kept only here),
    a resolved server path, or an uploaded archive's path relative to storage. `label` is
    what pages show. `key` identifies the source for idempotency.
    """

    kind: str  # git | path | archive | upload
    location: str
    label: str
    key: str
    commit: str = ""
    name: str = ""
    setup: SetupOverrides = field(default_factory=SetupOverrides)
    protocols: tuple[str, ...] = WEB_GIT_PROTOCOLS

    def to_params(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "location": self.location,
            "label": self.label,
            "key": self.key,
            "commit": self.commit,
            "name": self.name,
            "setup": self.setup.as_dict(),
            "protocols": list(self.protocols),
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> ImportRequest:
        return cls(
            kind=params["kind"],
            location=params["location"],
            label=params["label"],
            key=params["key"],
            commit=params.get("commit", ""),
            name=params.get("name", ""),
            setup=SetupOverrides.parse(params.get("setup")),
            protocols=tuple(params.get("protocols") or WEB_GIT_PROTOCOLS),
        )

    @property
    def source_kind(self) -> str:
        """The Repository.SourceKind it becomes."""
        return {"upload": "archive"}.get(self.kind, self.kind)


def _check_commit(commit: str | None) -> str:
    commit = (commit or "").strip()
    if commit and (not _COMMIT.match(commit) or commit.startswith("-") or ".." in commit):
        raise RepositoryImportError(
            f"{commit[:60]!r} is not a commit: give a commit id, a branch or a tag"
        )
    return commit


def _check_name(name: str | None) -> str:
    from django.utils.text import slugify

    if not name:
        return ""
    slug = slugify(name)[:100]
    if not slug:
        raise RepositoryImportError(f"{name[:60]!r} cannot be a repository name (letters, digits)")
    return slug


def _url_scheme(url: str) -> str:
    if _SCP_LIKE.match(url):
        return "ssh"
    return urlsplit(url).scheme.lower()


def looks_like_git_url(text: str) -> bool:
    return bool(_SCP_LIKE.match(text) or re.match(r"^[a-z][a-z0-9+.-]*://", text, re.I))


def git_request(
    url: str,
    *,
    commit: str | None = None,
    name: str | None = None,
    setup: SetupOverrides | None = None,
    protocols: tuple[str, ...] = WEB_GIT_PROTOCOLS,
) -> ImportRequest:
    url = (url or "").strip()
    if not url:
        raise RepositoryImportError("give a git URL, e.g. https://github.com/owner/project.git")
    if len(url) > 2000 or any(ch.isspace() or ch == "\x00" for ch in url):
        raise RepositoryImportError("the git URL must be one word without spaces")
    scheme = _url_scheme(url)
    if scheme not in protocols:
        allowed = ", ".join(f"{p}://" for p in protocols)
        raise RepositoryImportError(
            f"{redact(url)[:200]!r} is not a git URL this server clones; use {allowed}"
        )
    if scheme in ("https", "http", "git"):
        parts = urlsplit(url)
        if not parts.hostname:
            raise RepositoryImportError(f"{redact(url)[:200]!r} names no host")
        if parts.hostname.startswith("-"):
            raise RepositoryImportError(f"{redact(url)[:200]!r} is not a host name")
        # The key ignores credentials, a trailing slash and ".git": the same project.
        path = parts.path.rstrip("/").removesuffix(".git")
        host = parts.hostname.lower() + (f":{parts.port}" if parts.port else "")
        key = urlunsplit((scheme, host, path, "", ""))
    else:
        key = redact(url).rstrip("/").removesuffix(".git")
    return ImportRequest(
        kind="git",
        location=url,
        label=redact(url),
        key=f"git:{key}"[:500],
        commit=_check_commit(commit),
        name=_check_name(name),
        setup=setup or SetupOverrides(),
        protocols=tuple(protocols),
    )


def allowed_roots() -> list[Path] | None:
    """The folders server paths may come from; None: any (development's default)."""
    return settings.SPECLOOM_IMPORT_ROOTS


def check_server_path(raw: str, *, roots: list[Path] | None) -> Path:
    """The resolved path, if it exists and lies under an allowed root (symlinks followed
    first, so a link inside a root cannot lead outside it)."""
    raw = (raw or "").strip()
    if not raw:
        raise RepositoryImportError("give a path on the server")
    if "\x00" in raw or len(raw) > 4000:
        raise RepositoryImportError("the path is not valid")
    if roots is not None and not roots:
        raise RepositoryImportError(
            "imports from server paths are turned off here (SPECLOOM_IMPORT_ROOTS is empty); "
            "upload an archive or give a git URL"
        )
    candidate = Path(raw).expanduser()
    if roots is not None and not candidate.is_absolute():
        raise RepositoryImportError("give an absolute path, starting with /")
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        resolved = None
    if roots is not None:
        inside = resolved is not None and any(resolved.is_relative_to(root) for root in roots)
        if not inside:
            # The same answer whether or not the path exists: nothing is learnt about the server.
            shown = ", ".join(str(root) for root in roots)
            raise RepositoryImportError(
                f"{raw[:200]!r} is not inside the folders imports may come from ({shown})"
            )
    if resolved is None:
        raise RepositoryImportError(f"{raw[:200]!r} does not exist on the server")
    return resolved


def path_request(
    raw: str,
    *,
    roots: list[Path] | None,
    commit: str | None = None,
    name: str | None = None,
    setup: SetupOverrides | None = None,
) -> ImportRequest:
    """A folder, a git repository or an archive file on the server."""
    resolved = check_server_path(raw, roots=roots)
    if resolved.is_file():
        if not is_archive_name(resolved.name):
            suffixes = ", ".join(ARCHIVE_SUFFIXES)
            raise RepositoryImportError(
                f"{raw[:200]!r} is a file but not a supported archive ({suffixes})"
            )
        kind, key = "archive", f"sha256:{file_sha256(resolved)}"
    elif resolved.is_dir():
        check_git_metadata(resolved)
        kind, key = "path", f"path:{resolved}"
    else:
        raise RepositoryImportError(f"{raw[:200]!r} is neither a folder nor an archive file")
    return ImportRequest(
        kind=kind,
        location=str(resolved),
        label=str(resolved),
        key=key[:500],
        commit=_check_commit(commit),
        name=_check_name(name),
        setup=setup or SetupOverrides(),
    )


def check_git_metadata(folder: Path) -> None:
    """A work tree's .git must be a plain folder of its own: a .git *file* (a linked work tree
    or submodule: "gitdir: /elsewhere"), a symlink, alternates or a common dir would make git
    read a repository somewhere else on the server."""
    dot_git = folder / ".git"
    if dot_git.is_symlink() or dot_git.is_file():
        raise RepositoryImportError(
            "the folder's .git is a file or a link (a linked work tree or a submodule); "
            "import the main repository instead"
        )
    for git_dir in (dot_git, folder):
        for pointer in ("objects/info/alternates", "commondir", "objects/info/http-alternates"):
            if (git_dir / pointer).exists() and (git_dir / "HEAD").is_file():
                raise RepositoryImportError(
                    f"the git repository uses {pointer} (objects stored elsewhere); "
                    "import a standalone clone"
                )


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def uploads_root() -> Path:
    return Path(settings.STORAGE_ROOT) / "uploads"


def private_folder(path: Path) -> Path:
    """A folder only the app's user can enter."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path, 0o700)
    return path


def upload_request(
    uploaded,
    *,
    commit: str | None = None,
    name: str | None = None,
    setup: SetupOverrides | None = None,
) -> ImportRequest:
    """Store an uploaded archive (a Django UploadedFile) for the import job; 0600 on disk."""
    filename = Path(uploaded.name or "").name
    if not is_archive_name(filename):
        raise RepositoryImportError(
            f"{filename[:100]!r} is not a supported archive ({', '.join(ARCHIVE_SUFFIXES)})"
        )
    limit = settings.SPECLOOM_UPLOAD_MAX_BYTES
    if uploaded.size is not None and uploaded.size > limit:
        raise RepositoryImportError(
            f"the archive is {uploaded.size} bytes; the upload limit is {limit} bytes"
        )
    folder = private_folder(uploads_root())
    suffix = next(s for s in ARCHIVE_SUFFIXES if filename.lower().endswith(s))
    target = folder / f"{uuid.uuid4().hex}{suffix}"
    digest = hashlib.sha256()
    written = 0
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as out:
            for chunk in uploaded.chunks():
                written += len(chunk)
                if written > limit:
                    raise RepositoryImportError(
                        f"the archive is larger than the upload limit of {limit} bytes"
                    )
                digest.update(chunk)
                out.write(chunk)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    if not written:
        target.unlink(missing_ok=True)
        raise RepositoryImportError("the uploaded archive is empty")
    try:
        inspect_archive(
            target,
            max_files=settings.SPECLOOM_ARCHIVE_MAX_FILES,
            max_bytes=settings.SPECLOOM_ARCHIVE_MAX_BYTES,
        )
    except UnsafeArchive as exc:
        target.unlink(missing_ok=True)
        raise RepositoryImportError(f"archive rejected: {exc}") from None
    return ImportRequest(
        kind="upload",
        location=str(target.relative_to(settings.STORAGE_ROOT)),
        label=filename[:200],
        key=f"sha256:{digest.hexdigest()}",
        commit=_check_commit(commit),
        name=_check_name(name) or _check_name(_archive_base(filename)),
        setup=setup or SetupOverrides(),
    )


def _archive_base(filename: str) -> str:
    from curation.archives import archive_stem

    return archive_stem(filename)


def request_from_item(
    item: Any,
    *,
    roots: list[Path] | None,
    protocols: tuple[str, ...] = WEB_GIT_PROTOCOLS,
) -> ImportRequest:
    """One entry of a batch: {"source": URL or path, "commit"?, "name"?, "setup"?}; `url` or
    `path` may stand for `source` to say which it is."""
    if isinstance(item, str):
        item = {"source": item}
    if not isinstance(item, dict):
        raise RepositoryImportError("each item must be an object with a source (or a string)")
    unknown = set(item) - {"source", "url", "path", "commit", "name", "setup"}
    if unknown:
        raise RepositoryImportError(
            f"unknown keys {sorted(unknown)}; expected source (or url/path), commit, name, setup"
        )
    given = [key for key in ("source", "url", "path") if item.get(key)]
    if len(given) != 1:
        raise RepositoryImportError("give exactly one of source, url or path")
    value = item[given[0]]
    if not isinstance(value, str):
        raise RepositoryImportError(f"{given[0]} must be a string")
    for key in ("commit", "name"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise RepositoryImportError(f"{key} must be a string")
    options = {
        "commit": item.get("commit"),
        "name": item.get("name"),
        "setup": SetupOverrides.parse(item.get("setup")),
    }
    if given[0] == "url" or (given[0] == "source" and looks_like_git_url(value.strip())):
        return git_request(value, protocols=protocols, **options)
    return path_request(value, roots=roots, **options)
