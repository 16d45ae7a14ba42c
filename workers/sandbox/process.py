"""The `process` backend: runs on this host, isolated by namespaces, an unprivileged user and
resource limits (see isolation.py). No daemon needed."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

from .environments import EnvironmentStore
from .errors import SandboxError
from .init_binary import INIT_ERROR_EXIT, INIT_ERROR_MARKER, jail_init_binary
from .isolation import Isolation, detect_isolation, launch_argv, supervisor_environment
from .pytest_invocation import pytest_argv, sandbox_environment, write_support_files
from .results import record_outcomes
from .run_folder import RunFolder, prepare_working_copy
from .supervise import supervise
from .types import EnvironmentSpec, RunRequest, RunResult, Snapshot
from .workcopy import remove_tree


class ProcessBackend:
    name = "process"

    def __init__(self, root: Path, isolation: Isolation | None = None) -> None:
        self.root = root
        self.environments = EnvironmentStore(root)
        self.runs = root / "runs"
        self.runs.mkdir(exist_ok=True)
        # Traversable but not listable: runs cannot find one another's folders.
        self.runs.chmod(0o711)
        self.isolation = isolation or detect_isolation()
        self.init = jail_init_binary(root / "bin")

    def ensure_environment(self, snapshot: Snapshot, spec: EnvironmentSpec) -> tuple[str, bool]:
        return self.environments.ensure(snapshot, spec)

    def run(self, request: RunRequest) -> RunResult:
        key, built = self.environments.ensure(request.snapshot, request.environment)
        result = RunResult(
            environment_key=key, environment_built=built, isolation=self.isolation.name
        )
        run = RunFolder(self.runs / uuid.uuid4().hex)
        try:
            run.create()
            self._run_in(run, request, result)
        finally:
            remove_tree(run.path)
        return result

    def _run_in(self, run: RunFolder, request: RunRequest, result: RunResult) -> None:
        prepared = prepare_working_copy(run, request, sandbox_user=self.isolation.user)
        result.patch_failure = prepared.patch_failure
        if prepared.patch_failure is not None:
            return
        if prepared.nothing_to_run(request):
            # No requested id has a file; without paths pytest would run the whole suite.
            result.missing_tests = list(request.tests or ())
            return

        paths = run.paths(python=str(self.environments.python(result.environment_key)))
        write_support_files(run.support, paths, tests=request.tests, coverage=request.coverage)
        launch = launch_argv(
            self.isolation,
            init=self.init,
            argv=pytest_argv(
                paths, tests=request.tests, file_args=prepared.file_args, coverage=request.coverage
            ),
            env=sandbox_environment(paths, has_src_layout=prepared.has_src_layout),
            cwd=run.work,
            limits=request.limits,
            keep_visible=[self.root, Path(request.environment.python).resolve()],
        )
        finished = supervise(
            launch,
            env=supervisor_environment(),
            cwd=run.path,
            wall_seconds=request.limits.wall_seconds,
            max_output_bytes=request.limits.max_output_bytes,
        )
        stderr = finished.stderr.text()
        if finished.returncode == INIT_ERROR_EXIT and INIT_ERROR_MARKER in stderr:
            raise SandboxError(f"the sandbox could not start the tests: {stderr.strip()[-2000:]}")

        result.exit_code = self._exit_code(finished.returncode)
        result.timed_out = finished.timed_out
        result.wall_seconds = finished.wall_seconds
        record_outcomes(
            result,
            run.out,
            stdout=finished.stdout,
            stderr=finished.stderr,
            work_prefix=os.path.realpath(run.work),
            coverage=request.coverage,
        )

    def _exit_code(self, returncode: int | None) -> int | None:
        # The namespace's init reports a test process killed by signal N as 128 + N.
        if returncode is not None and self.isolation.namespaced and 128 < returncode < 128 + 65:
            return -(returncode - 128)
        return returncode
