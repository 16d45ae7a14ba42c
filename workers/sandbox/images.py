"""Environment images: one task environment's Dockerfile, its build context and its name.

An environment is a recipe (an EnvironmentSpec: setup command, packages, variables) and a
repository snapshot (the task's base commit). Its image is built the way the process sandbox
builds its virtualenv (environments.py): a venv at ENV_PREFIX, the setup command run in a
scratch copy of the source, the sandbox's pinned test tools and the recipe's packages installed,
the project itself forgotten (forget_project.py) and the files the build generated kept. On top
of that the image holds the repository at the commit in WORKDIR (/testbed, a git work tree whose
HEAD has exactly the commit's files), which is what the SWE-bench harness runs its
`eval_script` in.

The Dockerfile names the commit, so its text decides the image: the environment hash is the
SHA-256 of that text and the image name is `<prefix>:<hash>`. The build context is the
Dockerfile, forget_project.py, keep_generated.py and the commit's files as a deterministic
`source.tar.gz` (sorted, owned by root, mtime 0): the same snapshot always gives the same bytes.
Releases ship exactly these files under `environments/<hash>/`, and the `docker` backend builds
exactly them.

Plain Python (no Django).
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import io
import json
import os
import re
import shlex
import stat
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .environments import FORGET_PROJECT, TOOL_REQUIREMENTS, interpreter_identity
from .errors import SandboxError
from .types import EnvironmentSpec, Snapshot
from .workcopy import git_environment, materialize_snapshot, resolve_commit

IMAGE_FORMAT = 2  # 2: keeps the compiled extension modules (forget_project.py)
DEFAULT_PREFIX = "specloom-env"
DEFAULT_PYTHON = "3.11"
ENV_PREFIX = "/opt/specloom-env"
SUPPORT_DIR = "/opt/specloom"
WORKDIR = "/testbed"
BUILD_DIR = "/tmp/specloom-build"  # noqa: S108 - inside the image being built
SOURCE_ARCHIVE = "source.tar.gz"
KEEP_GENERATED = Path(__file__).with_name("keep_generated.py")
CONTEXT_FILES = ("Dockerfile", FORGET_PROJECT.name, KEEP_GENERATED.name, SOURCE_ARCHIVE)
# Set in the image and by the eval script: what the sandbox sets for every build and run.
BASE_ENVIRONMENT = (
    ("LANG", "C.UTF-8"),
    ("PIP_DISABLE_PIP_VERSION_CHECK", "1"),
    ("PIP_NO_INPUT", "1"),
    ("PIP_ROOT_USER_ACTION", "ignore"),
    ("PYTHONDONTWRITEBYTECODE", "1"),
)
_VERSION = re.compile(r"^\d+\.\d+$")
_PREFIX = re.compile(r"^[a-z0-9]+([._/:-][a-z0-9]+)*$")
_GIT_IDENTITY = (
    "GIT_AUTHOR_NAME=specloom GIT_AUTHOR_EMAIL=specloom@example.invalid "
    "GIT_COMMITTER_NAME=specloom GIT_COMMITTER_EMAIL=specloom@example.invalid "
    "GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z"
)


class ImageError(SandboxError):
    """An environment that no Dockerfile can express (the message says which value)."""


@functools.cache
def python_version_of(spec: EnvironmentSpec) -> str:
    """The Python of an environment's image, as `major.minor`: the recipe's (`image_python`),
    else the version of the interpreter the process sandbox builds it with."""
    if spec.image_python:
        return spec.image_python
    try:
        identity = interpreter_identity(spec.python)  # "cpython 3.11.2 (main, ...)"
    except SandboxError:
        return DEFAULT_PYTHON  # a host without that interpreter (a Docker-only worker)
    match = re.search(r"\b(\d+\.\d+)", identity)
    return match.group(1) if match else DEFAULT_PYTHON


@dataclass(frozen=True)
class ImageSpec:
    """Everything that decides an environment image: the recipe, its Python, the commit."""

    environment: EnvironmentSpec
    python_version: str
    commit: str

    def __post_init__(self) -> None:
        if not _VERSION.match(self.python_version):
            raise ImageError(f"the image's Python must read like 3.11, not {self.python_version!r}")
        if not re.fullmatch(r"[0-9a-f]{40}", self.commit):
            raise ImageError(f"an image is built from a full commit id, not {self.commit!r}")

    @property
    def base_image(self) -> str:
        return f"python:{self.python_version}-slim"

    @functools.cached_property
    def dockerfile(self) -> str:
        return render_dockerfile(self)

    @functools.cached_property
    def hash(self) -> str:
        return hashlib.sha256(self.dockerfile.encode("utf-8")).hexdigest()[:32]

    def image(self, prefix: str = DEFAULT_PREFIX) -> str:
        return image_name(prefix, self.hash)


def image_name(prefix: str, environment_hash: str) -> str:
    """`<prefix>:<hash>`, e.g. `ghcr.io/acme/specloom-env:3f2a...`: the hash is the tag."""
    prefix = (prefix or DEFAULT_PREFIX).strip().rstrip("/")
    if not _PREFIX.match(prefix):
        raise ImageError(
            f"image prefix {prefix!r} is not a Docker repository name "
            "(lower-case letters, digits and . _ - / :, e.g. registry.example.com/team/specloom)"
        )
    return f"{prefix}:{environment_hash}"


def docker_quote(value: str, *, what: str) -> str:
    """A double-quoted Dockerfile value: backslashes, quotes and `$` (variable expansion)
    escaped. A newline cannot be written in an ENV or LABEL value."""
    if "\n" in value or "\r" in value or "\0" in value:
        raise ImageError(f"{what} holds a line break or NUL, which a Dockerfile cannot carry")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'"{escaped}"'


def environment_variables(spec: EnvironmentSpec) -> list[tuple[str, str]]:
    """The variables of every build step and test run: the sandbox's own, then the recipe's
    (which never replace the sandbox's, as in pytest_invocation.sandbox_environment)."""
    own = dict(BASE_ENVIRONMENT)
    return [*own.items(), *((k, v) for k, v in spec.environment if k not in own)]


def render_dockerfile(image: ImageSpec) -> str:
    spec = image.environment
    for requirement in spec.extra_requirements:
        # A line break would end the RUN instruction and start another.
        if any(char in requirement for char in "\n\r\0"):
            raise ImageError(f"package {requirement!r} holds a line break or NUL")
    tools = " ".join(shlex.quote(r) for r in (*TOOL_REQUIREMENTS, *spec.extra_requirements))
    env = " ".join(
        f"{name}={docker_quote(value, what=f'variable {name}')}"
        for name, value in environment_variables(spec)
    )
    lines = [
        "# syntax=docker/dockerfile:1",
        "# One task environment of Specloom, built as its process sandbox builds it.",
        "# Build from this folder: docker build -t <image> .",
        f"FROM {image.base_image}",
        f'LABEL org.specloom.image-format="{IMAGE_FORMAT}" org.specloom.commit="{image.commit}"',
        f"ENV {env}",
        # git for the harness (it applies patches with git) and patch, its last fallback; a C
        # compiler, as the process sandbox's builds have one, for projects that compile
        # extension modules (the slim image has Python's headers but no compiler).
        "RUN apt-get update && apt-get install -y --no-install-recommends git patch gcc libc6-dev"
        " && rm -rf /var/lib/apt/lists/* && git config --system --add safe.directory '*'",
        f"RUN python -m venv {ENV_PREFIX}",
        f"ENV PATH={ENV_PREFIX}/bin:$PATH VIRTUAL_ENV={ENV_PREFIX}",
        f"COPY {FORGET_PROJECT.name} {KEEP_GENERATED.name} {SUPPORT_DIR}/",
        f"ADD {SOURCE_ARCHIVE} {WORKDIR}/",
        # A git work tree whose HEAD holds the commit's files: the harness resets to it.
        f"RUN cd {WORKDIR} && git init -q && git add -A && env {_GIT_IDENTITY} git commit -q"
        f' --no-verify --allow-empty -m "{image.commit}" && cp -a {WORKDIR} {BUILD_DIR}',
        f"WORKDIR {BUILD_DIR}",
    ]
    if spec.setup_command.strip():
        lines.append(f"RUN {json.dumps(['sh', '-c', spec.setup_command])}")
    lines += [
        f"RUN pip install {tools}",
        f"RUN python -I {SUPPORT_DIR}/{FORGET_PROJECT.name} {BUILD_DIR}"
        " && python -I -c 'import pytest, coverage'",
        f"RUN python -I {SUPPORT_DIR}/{KEEP_GENERATED.name} {BUILD_DIR} {WORKDIR}",
        f"WORKDIR {WORKDIR}",
        f"RUN rm -rf {BUILD_DIR}",
    ]
    return "\n".join(lines) + "\n"


def source_archive(snapshot: Snapshot, *, scratch: Path) -> bytes:
    """The snapshot's files as a gzipped tar that is the same bytes for the same commit:
    sorted names, owner root, mtime 0, modes 0644/0755, symlinks as symlinks."""
    folder = Path(tempfile.mkdtemp(prefix="image-src-", dir=scratch))
    try:
        source = folder / "src"
        source.mkdir()
        materialize_snapshot(snapshot, source, scratch=folder)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
            for path in _sorted_tree(source):
                archive.addfile(*_entry(path, path.relative_to(source).as_posix()))
        return gzip.compress(buffer.getvalue(), compresslevel=9, mtime=0)
    finally:
        _remove(folder)


def _sorted_tree(root: Path) -> list[Path]:
    found = []
    for folder, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            found.append(Path(folder) / name)
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def _entry(path: Path, name: str) -> tuple[tarfile.TarInfo, io.BytesIO | None]:
    info = tarfile.TarInfo(name)
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        info.type, info.linkname, info.mode = tarfile.SYMTYPE, os.readlink(path), 0o777
        return info, None
    if stat.S_ISDIR(mode):
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        return info, None
    data = path.read_bytes()
    info.size = len(data)
    info.mode = 0o755 if mode & stat.S_IXUSR else 0o644
    return info, io.BytesIO(data)


def _remove(folder: Path) -> None:
    from .workcopy import remove_tree

    remove_tree(folder)


def build_context(snapshot: Snapshot, image: ImageSpec, *, scratch: Path) -> dict[str, bytes]:
    """{file name: bytes} of the image's build context (CONTEXT_FILES)."""
    commit = resolve_commit(snapshot, git_environment(scratch))
    if commit != image.commit:
        raise ImageError(f"the image is of commit {image.commit}, the snapshot is at {commit}")
    return {
        "Dockerfile": image.dockerfile.encode("utf-8"),
        FORGET_PROJECT.name: FORGET_PROJECT.read_bytes(),
        KEEP_GENERATED.name: KEEP_GENERATED.read_bytes(),
        SOURCE_ARCHIVE: source_archive(snapshot, scratch=scratch),
    }


def context_tar(files: dict[str, bytes]) -> bytes:
    """The build context as the tar stream `docker build` (and docker-py) takes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name in sorted(files):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(files[name]), 0o644, 0
            archive.addfile(info, io.BytesIO(files[name]))
    return buffer.getvalue()
