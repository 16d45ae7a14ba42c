"""The `process` backend: runs on this host, in the jail (bubblewrap + a cgroup per run, see
jail.py). No daemon needed."""

from __future__ import annotations

import atexit
import os
import threading
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from .cgroups import DEFAULT_PARENT, CgroupHierarchy, owner_is_alive, owner_of, owner_tag
from .environments import GENERATED_FOLDER, EnvironmentStore
from .errors import SandboxStartError
from .jail import JAIL_USER, Jail, JailRunner, patch_user
from .results import record_outcomes
from .run_folder import RunFolder, prepare_working_copy
from .types import EnvironmentSpec, RunRequest, RunResult, Snapshot
from .warm import WarmJail, WarmJails, WarmSlot
from .workcopy import remove_tree


class ProcessBackend:
    name = "process"

    def __init__(
        self,
        root: Path,
        *,
        hierarchy: CgroupHierarchy | None = None,
        cgroup_parent: str = DEFAULT_PARENT,
        jail_user: str = JAIL_USER,
        warm_jails: int = 0,
        warm_jails_total: int | None = None,
    ) -> None:
        self.root = root
        self.jails = JailRunner(
            root, hierarchy=hierarchy, cgroup_parent=cgroup_parent, user_name=jail_user
        )
        self.environments = EnvironmentStore(root, jails=self.jails)
        self.runs = root / "runs"
        self.runs.mkdir(exist_ok=True)
        # Traversable but not listable: a run folder's name is not guessable.
        self.runs.chmod(0o711)
        # Pre-started interpreters for the next run of an environment (warm.py).
        self.warm = WarmJails(
            jails=self.jails,
            runs=self.runs,
            environments=self.environments,
            per_slot=warm_jails,
            total=warm_jails_total,
        )
        # Per environment: whether its last run's working copy had a src/ folder (a warm jail's
        # PYTHONPATH is set when it starts, before its run's copy exists).
        self._src_layouts: dict[str, bool] = {}
        if self.warm.enabled:
            atexit.register(self.warm.close)
        # Finished runs' folders, moved out of the way, waiting to be removed.
        self.discarded = root / "discarded"
        self.discarded.mkdir(mode=0o700, exist_ok=True)
        self.discarded.chmod(0o700)
        self.sweep()

    @property
    def isolation(self) -> str:
        return self.jails.isolation

    def close(self) -> None:
        """End the warm jails (a worker shutting down; a test done with this backend)."""
        self.warm.close()

    def ensure_environment(self, snapshot: Snapshot, spec: EnvironmentSpec) -> tuple[str, bool]:
        return self.environments.ensure(snapshot, spec)

    def sweep(self) -> dict[str, list[str]]:
        """Remove what dead workers left: their runs' cgroups (killing what is inside) and
        folders. Called when a backend starts and periodically by beat."""
        cgroups = self.jails.hierarchy.sweep()
        folders = []
        for folder in sorted([*self.runs.iterdir(), *self.discarded.iterdir()]):
            if not owner_is_alive(owner_of(folder.name)):
                remove_tree(folder)
                folders.append(folder.name)
        return {"cgroups": cgroups, "run_folders": folders}

    def run(self, request: RunRequest) -> RunResult:
        key, built = self.environments.ensure(request.snapshot, request.environment)
        result = RunResult(environment_key=key, environment_built=built, isolation=self.isolation)
        slot = self._warm_slot(request, key)
        warm = self.warm.take(slot) if slot is not None else None
        run_id = uuid.uuid4().hex
        run = warm.run if warm is not None else RunFolder(self.runs / f"{owner_tag()}-{run_id}")
        try:
            if warm is None:
                run.create()
            self._run_in(run, request, result, run_id=run_id, warm=warm)
        finally:
            if warm is not None:
                warm.started.kill()  # unused (no tests to run, a patch that did not apply)
            self._discard(run.path)
        # The environment's layout is known now: the next run of it may find its jail started.
        if (slot := self._warm_slot(request, key)) is not None:
            self.warm.refill(slot)
        return result

    def _warm_slot(self, request: RunRequest, key: str) -> WarmSlot | None:
        """The warm jail this run could use: runs without coverage, once the environment's
        layout is known from an earlier run."""
        if request.coverage or not self.warm.enabled or key not in self._src_layouts:
            return None
        return WarmSlot(
            environment_key=key,
            limits=request.limits,
            has_src_layout=self._src_layouts[key],
            extra_environment=tuple(request.environment.environment),
        )

    def _discard(self, folder: Path) -> None:
        """Remove a finished run's folder after the result is returned: removing a working
        copy takes 5-30 ms, a tenth of a small grade. Everything in the run's cgroup is dead by
        now, so nothing writes there any more; the rename takes it out of `runs` at once, and a
        folder whose removal the worker did not live to finish goes with the next sweep."""
        target = self.discarded / folder.name
        try:
            os.rename(folder, target)
        except OSError:
            remove_tree(folder)  # never created, or not movable: remove it here
            return
        _removals.submit(target)

    @staticmethod
    def wait_for_removals() -> None:
        """Block until every discarded run folder is gone (tests, and a worker shutting down)."""
        _removals.wait()

    def _run_in(
        self,
        run: RunFolder,
        request: RunRequest,
        result: RunResult,
        *,
        run_id: str,
        warm: WarmJail | None = None,
    ) -> None:
        prepared = prepare_working_copy(
            run,
            request,
            sandbox_user=self.jails.user,
            generated=self.environments.path(result.environment_key) / GENERATED_FOLDER,
            patch_user=patch_user(self.jails.user) if warm is not None else None,
        )
        if not request.coverage:
            self._src_layouts[result.environment_key] = prepared.has_src_layout
        result.patch_failure = prepared.patch_failure
        if prepared.patch_failure is not None:
            return
        if prepared.nothing_to_run(request):
            # No requested id has a file; without paths pytest would run the whole suite.
            result.missing_tests = list(request.tests or ())
            return

        environment = self.environments.path(result.environment_key)
        paths = run.paths(python=str(self.environments.python(result.environment_key)))
        argv, env = prepared.pytest_command(run, paths, request)
        jail = Jail(
            argv=argv,
            env=env,
            cwd=str(run.work),
            read_only=(str(environment), str(run.support)),
            writable=tuple(str(run.folder(name)) for name in ("work", "home", "tmp", "out")),
        )
        finished = None
        if warm is not None and warm.usable_for(env, argv):
            try:
                finished = warm.started.finish(
                    wall_seconds=request.limits.wall_seconds, message=warm.order(argv)
                )
            except SandboxStartError:
                finished = None  # it died waiting: run cold
            if finished is not None and warm.shadowed(finished.returncode, finished.stderr.text()):
                finished = None
            result.warm_start = finished is not None
        if finished is None:
            if warm is not None:
                warm.started.kill()
            finished = self.jails.run(jail, request.limits, run_id=run_id)
        result.exit_code = _exit_code(finished.returncode)
        result.timed_out = finished.timed_out
        result.wall_seconds = finished.wall_seconds
        result.cpu_seconds = finished.cpu_seconds
        record_outcomes(
            result,
            run.out,
            stdout=finished.stdout,
            stderr=finished.stderr,
            work_prefix=os.path.realpath(run.work),
            coverage=request.coverage,
            oom_kills=finished.oom_kills,
        )


class _Removals:
    """One background thread that removes discarded run folders, in order."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-removals")
        self._last: Future | None = None
        self._lock = threading.Lock()

    def submit(self, folder: Path) -> None:
        with self._lock:
            self._last = self._pool.submit(remove_tree, folder)

    def wait(self) -> None:
        with self._lock:
            last = self._last
        if last is not None:
            # One thread, in order: once the last submitted is done, all earlier ones are. A
            # failed removal is left to the sweep rather than raised into an unrelated caller.
            last.exception()


_removals = _Removals()


def _exit_code(returncode: int | None) -> int | None:
    # The jail reports a program killed by signal N as 128 + N.
    if returncode is not None and 128 < returncode < 128 + 65:
        return -(returncode - 128)
    return returncode
