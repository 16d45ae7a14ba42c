"""Per-repository virtualenvs: built once per key, cached under <root>/envs/<key>.

The key hashes what decides an environment's contents: the dependency files at the snapshot
(by git blob id), the setup command, the extra requirements, the interpreter and the pinned
test tools. An environment holds the dependencies, never the project itself (see
forget_project.py). Builds go to a staging folder that is renamed into place only when
complete, and builders of one key serialise on a file lock, so a cached folder is always whole.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from .errors import EnvironmentBuildError, SandboxError
from .supervise import supervise
from .types import EnvironmentSpec, Snapshot
from .workcopy import git, git_environment, materialize_snapshot, remove_tree, resolve_commit

# The same versions as the application's own (pyproject.toml): coverage data written inside
# the sandbox is read back by the application's coverage.
TOOL_REQUIREMENTS = ("pytest==9.2.0", "coverage==7.17.5")
KEY_FORMAT = 1
BUILD_TIMEOUT_SECONDS = 1800.0
BUILD_OUTPUT_LIMIT = 256 * 1024
FORGET_PROJECT = Path(__file__).with_name("forget_project.py")

_DEPENDENCY_FILE_NAMES = {"pyproject.toml", "setup.cfg", "setup.py", "tox.ini"}
_PIP_SETTING = re.compile(r"^PIP_[A-Z0-9_]+$")


def is_dependency_file(path: str) -> bool:
    """Files that can change what an install puts in the environment (over-inclusive on purpose:
    a needless rebuild is cheap, a stale environment is wrong)."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    if name in _DEPENDENCY_FILE_NAMES or fnmatch(name, "requirements*.txt"):
        return True
    return any(part.startswith("requirements") for part in parts[:-1]) and name.endswith(
        (".txt", ".in")
    )


# {(git dir, commit id): dependency files}: a commit's tree never changes, and every run needs
# its environment key; listing the tree costs a git process per run otherwise.
_DEPENDENCY_FILES: dict[tuple[str, str], dict[str, str]] = {}


def dependency_files(snapshot: Snapshot, env: dict[str, str]) -> dict[str, str]:
    """{path: git blob id} of the snapshot's dependency files."""
    commit = resolve_commit(snapshot, env)
    known = _DEPENDENCY_FILES.get((str(snapshot.git_dir), commit))
    if known is not None:
        return dict(known)
    files = _list_dependency_files(snapshot, commit, env)
    if len(_DEPENDENCY_FILES) > 10_000:
        _DEPENDENCY_FILES.clear()
    _DEPENDENCY_FILES[(str(snapshot.git_dir), commit)] = dict(files)
    return files


def _list_dependency_files(snapshot: Snapshot, commit: str, env: dict[str, str]) -> dict[str, str]:
    listing = git(snapshot, "ls-tree", "-r", "-z", "--full-tree", commit, env=env)
    files = {}
    for entry in listing.split("\0"):
        if not entry:
            continue
        meta, path = entry.split("\t", 1)
        _mode, kind, blob = meta.split()
        if kind == "blob" and is_dependency_file(path):
            files[path] = blob
    return files


@functools.cache
def interpreter_identity(python: str) -> str:
    try:
        out = subprocess.run(
            [python, "-I", "-c", "import sys; print(sys.implementation.name, sys.version)"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"cannot run the environment's interpreter {python!r}: {exc}") from exc
    return " ".join(out.split())


def environment_key(dependencies: dict[str, str], spec: EnvironmentSpec, interpreter: str) -> str:
    material = {
        "format": KEY_FORMAT,
        "dependencies": sorted(dependencies.items()),
        "setup_command": spec.setup_command,
        "extra_requirements": list(spec.extra_requirements),
        "interpreter": interpreter,
        "tools": list(TOOL_REQUIREMENTS),
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
    return digest[:32]


def pip_settings_of(environ: dict[str, str]) -> dict[str, str]:
    """The operator's pip settings (index, certificates) carry over to builds; nothing else does."""
    settings = {name: value for name, value in environ.items() if _PIP_SETTING.match(name)}
    user_config = Path(environ.get("HOME", "/nonexistent")) / ".config" / "pip" / "pip.conf"
    if "PIP_CONFIG_FILE" not in settings and user_config.is_file():
        # Builds get a HOME of their own, which would hide the operator's user config.
        settings["PIP_CONFIG_FILE"] = str(user_config)
    return settings


class EnvironmentStore:
    def __init__(self, root: Path) -> None:
        self.envs = root / "envs"
        self.locks = root / "locks"
        self.builds = root / "builds"
        self.pip_cache = root / "pip-cache"
        for folder in (self.envs, self.locks, self.builds, self.pip_cache):
            folder.mkdir(parents=True, exist_ok=True)
        self.envs.chmod(0o755)  # the sandbox user runs the interpreters inside
        for private in (self.locks, self.builds, self.pip_cache):
            private.chmod(0o700)

    def key(self, snapshot: Snapshot, spec: EnvironmentSpec) -> str:
        env = git_environment(self.builds)
        return environment_key(
            dependency_files(snapshot, env), spec, interpreter_identity(spec.python)
        )

    def path(self, key: str) -> Path:
        return self.envs / key

    def python(self, key: str) -> Path:
        return self.path(key) / "bin" / "python"

    def ensure(self, snapshot: Snapshot, spec: EnvironmentSpec) -> tuple[str, bool]:
        """Return (key, built): built is False when the environment was already cached."""
        key = self.key(snapshot, spec)
        if self.path(key).is_dir():
            return key, False
        with self.build_lock(key):
            if self.path(key).is_dir():  # another builder finished while we waited
                return key, False
            self._remove_abandoned_staging(key)
            staging = self.envs / f".staging-{key}-{uuid.uuid4().hex}"
            scratch = self.builds / uuid.uuid4().hex
            try:
                self._build(key, snapshot, spec, staging, scratch)
                self._relocate(staging, self.path(key))
                os.rename(staging, self.path(key))
            finally:
                remove_tree(staging)
                remove_tree(scratch)
        return key, True

    @contextmanager
    def build_lock(self, key: str) -> Iterator[None]:
        # flock locks belong to the open file description: threads and processes that open the
        # file each get their own, so they exclude one another.
        with open(self.locks / f"{key}.lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _remove_abandoned_staging(self, key: str) -> None:
        # Holding the lock, any staging folder of this key was left by a builder that died.
        for leftover in self.envs.glob(f".staging-{key}-*"):
            remove_tree(leftover)

    def _build(
        self, key: str, snapshot: Snapshot, spec: EnvironmentSpec, staging: Path, scratch: Path
    ) -> None:
        source, home, tmp = scratch / "src", scratch / "home", scratch / "tmp"
        for folder in (source, home, tmp):
            folder.mkdir(parents=True)
        materialize_snapshot(snapshot, source, scratch=scratch)
        python = str(staging / "bin" / "python")
        env = pip_settings_of(dict(os.environ)) | {
            "PATH": f"{staging / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "TMPDIR": str(tmp),
            "LANG": "C.UTF-8",
            "VIRTUAL_ENV": str(staging),
            "PIP_CACHE_DIR": str(self.pip_cache),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_INPUT": "1",
            "PIP_ROOT_USER_ACTION": "ignore",
        }
        steps = [(f"{spec.python} -m venv", [spec.python, "-m", "venv", str(staging)], scratch)]
        if spec.setup_command.strip():
            steps.append((spec.setup_command, ["sh", "-c", spec.setup_command], source))
        tools = [*TOOL_REQUIREMENTS, *spec.extra_requirements]
        steps += [
            (f"pip install {' '.join(tools)}", [python, "-m", "pip", "install", *tools], source),
            ("forget the project", [python, "-I", str(FORGET_PROJECT), str(source)], scratch),
            ("check the test tools", [python, "-I", "-c", "import pytest, coverage"], scratch),
        ]
        for command, argv, cwd in steps:
            finished = supervise(
                argv,
                env=env,
                cwd=cwd,
                wall_seconds=BUILD_TIMEOUT_SECONDS,
                max_output_bytes=BUILD_OUTPUT_LIMIT,
                merge_stderr=True,
            )
            if finished.timed_out or finished.returncode != 0:
                raise EnvironmentBuildError(
                    environment_key=key,
                    command=command,
                    returncode=finished.returncode,
                    output_tail=finished.stdout.text(),
                )

    @staticmethod
    def _relocate(staging: Path, final: Path) -> None:
        """Point the staging venv's scripts at its final folder and open it to the sandbox user.

        Interpreters find their venv from their own location, so only script shebangs (and
        pyvenv.cfg's informational `command`) name the staging folder.
        """
        old, new = str(staging).encode(), str(final).encode()
        for candidate in [*(staging / "bin").iterdir(), staging / "pyvenv.cfg"]:
            if candidate.is_symlink() or not candidate.is_file():
                continue
            if candidate.stat().st_size > 1024 * 1024:
                continue
            content = candidate.read_bytes()
            if b"\0" not in content and old in content:
                candidate.write_bytes(content.replace(old, new))
        for folder, _dirnames, filenames in os.walk(staging):
            os.chmod(folder, 0o755)  # noqa: S103 - read by the sandbox user, on purpose
            for name in filenames:
                path = os.path.join(folder, name)
                if not os.path.islink(path):
                    mode = os.stat(path).st_mode
                    os.chmod(path, 0o755 if mode & 0o100 else 0o644)
