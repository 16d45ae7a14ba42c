"""Per-repository virtualenvs: built once per key, cached under <root>/envs/<key>.

The key hashes what decides an environment's contents: the dependency files at the snapshot
(by git blob id), the setup command, the extra requirements, the interpreter and the pinned
test tools. An environment holds the dependencies, never the project itself (see
forget_project.py). Builds go to a staging folder that is renamed into place only when
complete, and builders of one key serialise on a file lock, so a cached folder is always whole.

Building runs the repository's code (its build backend, `pip install .`, a curator's setup
command), so everything that executes runs in the jail (jail.py), offline, as the jail's user:
the trusted side only fetches files into the wheelhouse (wheelhouse.py). When a jailed step says
it cannot find a distribution, the trusted side fetches it and the step runs again, a bounded
number of times; what cannot be had fails the build with its name and why.
"""

from __future__ import annotations

import configparser
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tomllib
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from .errors import EnvironmentBuildError, SandboxError
from .jail import Jail, JailRunner
from .keep_generated import LIMIT_FILES, NOT_GENERATED, kept_size_limit
from .types import EnvironmentSpec, Limits, Snapshot
from .wheelhouse import Wheelhouse, missing_requirements
from .workcopy import (
    chown_tree,
    git,
    git_environment,
    materialize_snapshot,
    remove_tree,
    resolve_commit,
)

# The same versions as the application's own (pyproject.toml): coverage data written inside
# the sandbox is read back by the application's coverage.
TOOL_REQUIREMENTS = ("pytest==9.2.0", "coverage==7.17.5")
KEY_FORMAT = 3  # 2: built in the jail from the wheelhouse; 3: keeps extension modules
BUILD_LIMITS = Limits(
    wall_seconds=1800.0,
    cpu_seconds=3600,
    memory_bytes=4 * 1024**3,
    max_processes=1024,
    max_file_bytes=1024**3,
    max_open_files=4096,
    max_output_bytes=256 * 1024,
)
# A step that keeps asking for distributions we fetch is retried at most this many times.
MAX_FETCH_ROUNDS = 12
# Files the build wrote into the source tree (a setuptools-scm version module, the compiled
# extension modules forget_project.py places where an in-place build puts them): kept in the
# environment and copied into every run's working copy, where the snapshot lacks them.
GENERATED_FOLDER = "specloom-generated"
# setuptools' own default when a project declares no build system (PEP 518).
DEFAULT_BUILD_REQUIRES = ("setuptools>=40.8.0", "wheel")
FORGET_PROJECT = Path(__file__).with_name("forget_project.py")

_DEPENDENCY_FILE_NAMES = {"pyproject.toml", "setup.cfg", "setup.py", "tox.ini"}
_PIP_SETTING = re.compile(r"^(PIP_[A-Z0-9_]+|HTTPS?_PROXY|NO_PROXY|https?_proxy|no_proxy)$")


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


def interpreter_identity(python: str) -> str:
    """ "cpython 3.11.2 (main, ...)": part of every environment's key. Asking the interpreter
    costs a process start (10-20 ms) on every run and grade, so the answer is kept, but only for
    as long as the interpreter's file is the same one: an upgraded interpreter (another inode,
    size or mtime) is asked again and gets environments of its own."""
    stamp = _interpreter_stamp(python)
    if stamp is not None and (known := _INTERPRETERS.get(stamp)) is not None:
        return known
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
    identity = " ".join(out.split())
    if stamp is not None:
        _INTERPRETERS[stamp] = identity
    return identity


_INTERPRETERS: dict[tuple, str] = {}


def _interpreter_stamp(python: str) -> tuple | None:
    found = python if os.sep in python else shutil.which(python)
    if found is None:
        return None
    try:
        real = os.path.realpath(found)
        info = os.stat(real)
    except OSError:
        return None
    return (python, real, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def environment_key(dependencies: dict[str, str], spec: EnvironmentSpec, interpreter: str) -> str:
    material = {
        "format": KEY_FORMAT,
        "dependencies": sorted(dependencies.items()),
        "setup_command": spec.setup_command,
        "extra_requirements": list(spec.extra_requirements),
        "environment": sorted(spec.environment),
        "interpreter": interpreter,
        "tools": list(TOOL_REQUIREMENTS),
    }
    digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
    return digest[:32]


def download_environment(environ: dict[str, str]) -> dict[str, str]:
    """The trusted downloader's environment: the operator's pip settings (index, certificates,
    proxies) and HOME (pip's user config and cache); nothing else of the worker's."""
    settings = {name: value for name, value in environ.items() if _PIP_SETTING.match(name)}
    return settings | {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": environ.get("HOME", "/nonexistent"),
        "LANG": "C.UTF-8",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PIP_NO_INPUT": "1",
        "PIP_ROOT_USER_ACTION": "ignore",
    }


def declared_build_requirements(source: Path) -> list[str]:
    """What the source tree statically declares it needs to build and install: a first guess
    that saves rounds of asking (read as data; the build itself may ask for more)."""
    requirements: list[str] = []
    pyproject = source / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8", errors="replace"))
        except tomllib.TOMLDecodeError:
            data = {}
        build = data.get("build-system", {})
        requires = build.get("requires") if isinstance(build, dict) else None
        requirements += _strings(requires) if requires is not None else DEFAULT_BUILD_REQUIRES
        project = data.get("project", {})
        if isinstance(project, dict):
            requirements += _strings(project.get("dependencies"))
    else:
        requirements += DEFAULT_BUILD_REQUIRES
    setup_cfg = source / "setup.cfg"
    if setup_cfg.is_file():
        parser = configparser.ConfigParser(interpolation=None)
        with contextlib.suppress(configparser.Error, UnicodeError):
            # An unreadable setup.cfg only means no seed.
            parser.read_string(setup_cfg.read_text(encoding="utf-8", errors="replace"))
            for option in ("install_requires", "setup_requires"):
                value = parser.get("options", option, fallback="")
                requirements += [line.strip() for line in value.splitlines() if line.strip()]
    return list(dict.fromkeys(requirements))


def _strings(value: object) -> list[str]:
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


class EnvironmentStore:
    def __init__(self, root: Path, *, jails: JailRunner | None = None) -> None:
        self.jails = jails
        self.envs = root / "envs"
        self.locks = root / "locks"
        self.builds = root / "builds"
        for folder in (self.envs, self.locks, self.builds):
            folder.mkdir(parents=True, exist_ok=True)
        # The jail's user reaches its own environment (bound read-only) but cannot list others.
        self.envs.chmod(0o711)
        for private in (self.locks, self.builds):
            private.chmod(0o711 if private is self.builds else 0o700)
        self.wheelhouse_folder = root / "wheelhouse"

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
                _seal(staging)
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
        if self.jails is None:
            raise SandboxError("this sandbox backend builds no process environments")
        build = _Build(self, key=key, spec=spec, staging=staging, scratch=scratch)
        build.prepare(snapshot)
        build.run_steps()


class _Build:
    """One environment build: trusted preparation, then jailed steps that may ask for files."""

    def __init__(
        self,
        store: EnvironmentStore,
        *,
        key: str,
        spec: EnvironmentSpec,
        staging: Path,
        scratch: Path,
    ) -> None:
        self.store = store
        self.key = key
        self.spec = spec
        self.staging = staging
        self.final = store.path(key)
        self.scratch = scratch
        self.source, self.home, self.tmp = scratch / "src", scratch / "home", scratch / "tmp"
        self.support = scratch / "support"
        self.wheelhouse = Wheelhouse(
            store.wheelhouse_folder, python_version=_python_version(spec.python)
        )
        self.download_env = download_environment(dict(os.environ))
        self.log: list[str] = []

    def prepare(self, snapshot: Snapshot) -> None:
        self.scratch.mkdir(mode=0o711)
        for folder in (self.source, self.home, self.tmp, self.staging):
            folder.mkdir(mode=0o700)
        self.support.mkdir(mode=0o755)
        materialize_snapshot(snapshot, self.source, scratch=self.scratch)
        self.tracked = _relative_files(self.source)
        shutil.copyfile(FORGET_PROJECT, self.support / FORGET_PROJECT.name)
        (self.support / FORGET_PROJECT.name).chmod(0o644)
        user = self.store.jails.user
        if user is not None:
            for folder in (self.source, self.home, self.tmp, self.staging):
                chown_tree(folder, *user)
        seed = [*TOOL_REQUIREMENTS, *self.spec.extra_requirements]
        seed += declared_build_requirements(self.source)
        self._fetch(seed, required=list(TOOL_REQUIREMENTS))

    def run_steps(self) -> None:
        python = str(self.final / "bin" / "python")
        steps = [
            (
                f"{self.spec.python} -m venv",
                [self.spec.python, "-m", "venv", str(self.final)],
                self.scratch,
            )
        ]
        if self.spec.setup_command.strip():
            steps.append(
                (self.spec.setup_command, ["sh", "-c", self.spec.setup_command], self.source)
            )
        tools = [*TOOL_REQUIREMENTS, *self.spec.extra_requirements]
        forget = str(self.support / FORGET_PROJECT.name)
        steps += [
            (
                f"pip install {' '.join(tools)}",
                [python, "-m", "pip", "install", *tools],
                self.source,
            ),
            ("forget the project", [python, "-I", forget, str(self.source)], self.scratch),
            ("check the test tools", [python, "-I", "-c", self._tools_check()], self.scratch),
        ]
        for command, argv, cwd in steps:
            self._run_step(command, argv, cwd)
        self._keep_generated_files()

    def _keep_generated_files(self) -> None:
        """Python files and extension modules the build wrote into the source tree (as
        keep_generated.py keeps them in images), read without following links (the build was
        untrusted) and kept for the runs' working copies."""
        kept = 0
        for relative in sorted(_relative_files(self.source) - self.tracked):
            limit_bytes = kept_size_limit(PurePosixPath(relative).name)
            if limit_bytes is None or kept >= LIMIT_FILES:
                continue
            data = read_untrusted_file(self.source / relative, limit_bytes)
            if data is None:
                continue
            target = self.staging / GENERATED_FOLDER / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            kept += 1

    def _tools_check(self) -> str:
        """Import the test tools as a run does: with the project's own copy on the path (a
        project the tools depend on, like iniconfig for pytest, is forgotten from the
        environment, and every run brings it back from its working copy)."""
        paths = [str(self.source / "src")] if (self.source / "src").is_dir() else []
        paths.append(str(self.source))
        return f"import sys; sys.path[:0] = {paths!r}; import pytest, coverage"

    def _run_step(self, command: str, argv: list[str], cwd: Path) -> None:
        asked: set[str] = set()
        for _round in range(MAX_FETCH_ROUNDS + 1):
            finished = self.store.jails.run(self._jail(argv, cwd), BUILD_LIMITS, merge_stderr=True)
            output = finished.stdout.text()
            if not finished.timed_out and finished.returncode == 0:
                return
            missing = [req for req in missing_requirements(output) if req not in asked]
            if finished.timed_out or finished.memory_exceeded or not missing:
                self._fail(command, finished.returncode, output, memory=finished.memory_exceeded)
            asked.update(missing)
            self._fetch(missing, required=missing, command=command, output=output)
        self._fail(command, 1, "the build kept asking for more distributions", memory=False)

    def _jail(self, argv: list[str], cwd: Path) -> Jail:
        env = {
            "PATH": f"{self.final / 'bin'}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "TMPDIR": str(self.tmp),
            "LANG": "C.UTF-8",
            "VIRTUAL_ENV": str(self.final),
            # Offline, from the wheelhouse only; no host pip configuration applies.
            "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(self.wheelhouse.folder),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_CACHE_DIR": "1",
            "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "PIP_NO_INPUT": "1",
            "PIP_PROGRESS_BAR": "off",
            **dict(self.spec.environment),
        }
        return Jail(
            argv=argv,
            env=env,
            cwd=str(cwd),
            read_only=(str(self.wheelhouse.folder), str(self.support)),
            writable=(str(self.source), str(self.home), str(self.tmp)),
            moved=((str(self.staging), str(self.final), True),),
        )

    def _fetch(
        self, requirements: list[str], *, required: list[str], command: str = "", output: str = ""
    ) -> None:
        report = self.wheelhouse.fetch(requirements, environ=self.download_env)
        self.log += report.log
        failed = {req: why for req, why in report.failed.items() if req in required}
        if failed:
            reasons = "; ".join(f"{req}: {why}" for req, why in failed.items())
            raise EnvironmentBuildError(
                environment_key=self.key,
                command=command or "fetch the build's distributions",
                returncode=None,
                output_tail=(output + "\n" if output else "") + f"cannot be had: {reasons}",
                reason=f"a dependency cannot be had: {reasons}",
            )

    def _fail(self, command: str, returncode: int | None, output: str, *, memory: bool) -> None:
        reason = "exceeded the build's memory limit" if memory else None
        raise EnvironmentBuildError(
            environment_key=self.key,
            command=command,
            returncode=returncode,
            output_tail=output,
            reason=reason,
        )


def _relative_files(root: Path) -> set[str]:
    found = set()
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = [
            name
            for name in dirnames
            if name not in NOT_GENERATED and not name.endswith(".egg-info")
        ]
        base = os.path.relpath(folder, root)
        for name in filenames:
            found.add(name if base == "." else f"{base}/{name}")
    return found


def read_untrusted_file(path: Path, limit: int) -> bytes | None:
    """A regular file's bytes, not following a symlink at the last step, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            return None
        return handle.read(limit + 1)[:limit]


def _python_version(python: str) -> str:
    """The interpreter's full version ("3.11.2"): packages check Requires-Python against the
    micro version too (">=3.11.5"), so the wheelhouse is resolved for exactly this one."""
    identity = interpreter_identity(python)  # "cpython 3.11.2 (main, ...)"
    match = re.search(r"\b(\d+\.\d+(?:\.\d+)?)", identity)
    return match.group(1) if match else "3.11"


def _seal(staging: Path) -> None:
    """The built environment becomes root's and read-only for everyone else: a later run (as the
    jail's user) can neither change it nor plant anything in it."""
    as_root = os.geteuid() == 0
    for folder, _dirnames, filenames in os.walk(staging):
        if as_root:
            os.lchown(folder, 0, 0)
        os.chmod(folder, 0o755)  # noqa: S103 - read by the jail's user, on purpose
        for name in filenames:
            path = os.path.join(folder, name)
            if as_root:
                os.lchown(path, 0, 0)
            if not os.path.islink(path):
                mode = os.lstat(path).st_mode
                os.chmod(path, 0o755 if mode & 0o100 else 0o644)
