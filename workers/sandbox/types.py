"""Values that go into and come out of a sandbox run.

Plain dataclasses, no Django: the job layer turns model rows into these and the results back.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path


class Outcome(enum.StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Snapshot:
    """A stored repository (a bare git repository on disk) at one commit."""

    git_dir: Path
    commit: str


@dataclass(frozen=True)
class EnvironmentSpec:
    """How to build the virtualenv that holds a repository's dependencies.

    `setup_command` runs in the jail, offline, in a scratch copy of the snapshot with the new
    environment's bin first on PATH and pip pointed at the wheelhouse; the project itself is
    not left installed: each run puts its own copy on sys.path.
    """

    setup_command: str = "pip install ."
    extra_requirements: tuple[str, ...] = ()
    python: str = "/usr/bin/python3"
    # Variables set for the build's steps and the test runs, e.g. SETUPTOOLS_SCM_PRETEND_VERSION
    # for a source tree without its version control history.
    environment: tuple[tuple[str, str], ...] = ()
    # How the tests run in it (not part of the environment's key): the repository's pytest
    # addopts replaced (None keeps them) and options added.
    pytest_addopts: str | None = None
    pytest_options: tuple[str, ...] = ()
    # The Python (major.minor) of the environment's Docker image (images.py); not part of the
    # process sandbox's key: "" means the version of `python`.
    image_python: str = ""


@dataclass(frozen=True)
class Limits:
    wall_seconds: float = 300.0
    cpu_seconds: int = 600
    memory_bytes: int = 2 * 1024**3  # the run's cgroup: everything it starts, together
    max_processes: int = 256  # the run's cgroup (pids.max), not a per-user rlimit
    cpu_cores: float = 2.0  # the run's cgroup's CPU quota
    max_file_bytes: int = 256 * 1024**2
    max_open_files: int = 1024
    max_output_bytes: int = 1024**2


@dataclass(frozen=True)
class RunRequest:
    snapshot: Snapshot
    environment: EnvironmentSpec = field(default_factory=EnvironmentSpec)
    # Unified diffs applied in order on top of the snapshot.
    patches: tuple[str, ...] = ()
    # Exact pytest node ids; None runs the whole suite.
    tests: tuple[str, ...] | None = None
    limits: Limits = field(default_factory=Limits)
    # Collect per-test coverage (coverage.py dynamic contexts) for the synthesis engine.
    coverage: bool = False
    # Paths (relative to the working copy) of files to delete before running, e.g. hidden tests.
    remove_paths: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestResult:
    nodeid: str
    outcome: Outcome
    duration: float = 0.0
    message: str = ""


@dataclass(frozen=True)
class CollectionError:
    path: str
    message: str


@dataclass(frozen=True)
class PatchFailure:
    patch_index: int
    file: str
    hunk: str
    message: str


@dataclass
class RunResult:
    tests: dict[str, TestResult] = field(default_factory=dict)
    collection_errors: list[CollectionError] = field(default_factory=list)
    exit_code: int | None = None
    wall_seconds: float = 0.0
    # CPU time (user + system) of everything the run started, where the backend accounts it.
    cpu_seconds: float | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    output_truncated: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""
    patch_failure: PatchFailure | None = None
    environment_key: str = ""
    environment_built: bool = False
    # Filled when RunRequest.coverage: {test nodeid: {relative file path: [line numbers]}}.
    coverage: dict[str, dict[str, list[int]]] | None = None
    # How the run was isolated, for the record ("netns+nobody", "nobody", "userns", "none").
    isolation: str = ""
    # Requested test ids (RunRequest.tests) that matched no collected test.
    missing_tests: list[str] = field(default_factory=list)
    # The test that was running when a limit cut the run short (timeout, memory).
    interrupted_test: str | None = None
    # The tests ran in an interpreter started before the run (a warm jail, sandbox/warm.py).
    warm_start: bool = False

    @property
    def ok(self) -> bool:
        return self.patch_failure is None and not self.timed_out and not self.memory_exceeded


# How many times a run that hit the wall clock is run again, each with twice the time.
TIMEOUT_RERUNS = 2


def run_despite_load(runner: Callable[[RunRequest], RunResult], request: RunRequest) -> RunResult:
    """`runner(request)`; a run that hit the wall clock is run again with twice the time,
    TIMEOUT_RERUNS times at most. The wall clock depends on the machine's load: what a run
    decides (a cluster kept, a task verified) must depend only on what the tests do."""
    result = runner(request)
    for _rerun in range(TIMEOUT_RERUNS):
        if not result.timed_out:
            break
        longer = replace(request.limits, wall_seconds=request.limits.wall_seconds * 2)
        request = replace(request, limits=longer)
        result = runner(request)
    return result
