"""Sandbox: run a repository's tests, with patches applied, isolated from the host.

Plain Python (no Django): the job layer turns model rows into RunRequests and RunResults back.

    backend = get_backend("process", root=Path("/var/lib/specloom/sandbox"))
    result = backend.run(RunRequest(snapshot=Snapshot(git_dir, commit), tests=(...)))
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Protocol, runtime_checkable

from .errors import EnvironmentBuildError, SandboxError
from .types import (
    CollectionError,
    EnvironmentSpec,
    Limits,
    Outcome,
    PatchFailure,
    RunRequest,
    RunResult,
    Snapshot,
    TestResult,
)

__all__ = [
    "Backend",
    "CollectionError",
    "EnvironmentBuildError",
    "EnvironmentSpec",
    "Limits",
    "Outcome",
    "PatchFailure",
    "RunRequest",
    "RunResult",
    "SandboxError",
    "Snapshot",
    "TestResult",
    "get_backend",
    "prepare_root",
]

BACKENDS = ("process", "docker")


@runtime_checkable
class Backend(Protocol):
    name: str

    def run(self, request: RunRequest) -> RunResult:
        """Run the request's tests; limits hit and patches that fail are results, not errors.

        Raises EnvironmentBuildError when the environment cannot be built, SandboxError when
        the sandbox itself fails (unknown commit, isolation that cannot be set up).
        """
        ...

    def ensure_environment(self, snapshot: Snapshot, spec: EnvironmentSpec) -> tuple[str, bool]:
        """Build the snapshot's environment unless cached; return (key, built)."""
        ...

    def close(self) -> None:
        """Let go of what the backend keeps running between runs (warm jails)."""
        ...


def get_backend(name: str = "process", *, root: Path, **options) -> Backend:
    """A sandbox backend keeping its environments, caches and run folders under `root`.

    Options of the process backend: `cgroup_parent` (where run cgroups go, relative to each
    hierarchy's root), `jail_user` (the unprivileged user jailed code runs as), `warm_jails`
    (interpreters started ahead of each environment's next run, warm.py) and
    `warm_jails_total` (how many of those in all); of the docker
    backend: `image_prefix` (the repository its environment images are tagged in).
    """
    if name not in BACKENDS:
        raise ValueError(f"unknown sandbox backend {name!r}; choose one of {', '.join(BACKENDS)}")
    root = prepare_root(root)
    if name == "docker":
        from .docker_backend import DockerBackend

        return DockerBackend(root, **options)
    from .process import ProcessBackend

    return ProcessBackend(root, **options)


def prepare_root(root: Path) -> Path:
    """Create the sandbox folder and check that the unprivileged sandbox user can reach it."""
    root = Path(root).resolve()
    if root == Path("/root") or root.is_relative_to("/root"):
        raise SandboxError(
            f"sandbox root {root} is under /root, which the sandbox user cannot read"
        )
    root.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        # Traversable (the jail's binds start here) but not listable by the jail's user.
        root.chmod(0o711)
        for folder in [root, *root.parents]:
            if not folder.stat().st_mode & stat.S_IXOTH:
                raise SandboxError(
                    f"sandbox root {root}: {folder} is not searchable by other users (mode "
                    f"{stat.filemode(folder.stat().st_mode)}), so the sandbox user cannot reach it"
                )
    return root
