"""Warm jails: pytest interpreters started, in the jail of a run of their own, before the run.

Starting the environment's interpreter and importing pytest is most of a small run's time (and
of a grade's: a grade is one small run). After a run without coverage, the process backend
starts the next run's jail for the same environment at once (`warm_start.py`, waiting on its
standard input); the next such run prepares its working copy in that jail's run folder and
sends pytest's arguments. One warm jail serves one run, then it is gone like any other run's.

What the jail's code could do before the run is sent is what it could do in the run: it is the
same jail, user, binds and cgroup. What it must not do is race the worker preparing the working
copy, so the jail's user gets nothing of the run folder until the copy is ready: the checkout
is root's, patches are applied by another unprivileged user (`patch_user`), and the folders are
given to the jail's user last, children before parents (`chown_tree`). A run whose environment
or working folder differs from what its warm jail was started with, or whose working copy
shadows a module the warm interpreter imported, runs cold in the same folder.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .cgroups import owner_tag
from .errors import SandboxError
from .jail import Jail, JailRunner, StartedJail
from .pytest_invocation import sandbox_environment
from .run_folder import RunFolder
from .types import Limits
from .warm_start import SHADOWED_EXIT, SHADOWED_MARKER
from .workcopy import remove_tree

log = logging.getLogger(__name__)

STARTER_FILE = Path(__file__).with_name("warm_start.py")
# An unused warm jail holds an interpreter's memory; after this long it is ended.
IDLE_SECONDS = 600.0
# Without a total of its own, a pool keeps this many slots' worth of warm jails.
DEFAULT_SLOTS = 4


@dataclass(frozen=True)
class WarmSlot:
    """What a warm jail was started with, all of which a run must share to use it."""

    environment_key: str
    limits: Limits
    has_src_layout: bool
    extra_environment: tuple[tuple[str, str], ...]


@dataclass
class WarmJail:
    slot: WarmSlot
    run: RunFolder
    jail: Jail
    started: StartedJail
    work_inode: int
    ready_read: int  # the starter writes a line here once pytest is imported
    created: float = field(default_factory=time.monotonic)
    _ready: bool = False

    def ready(self) -> bool:
        """Whether the interpreter has finished starting (never blocks)."""
        if not self._ready:
            try:
                self._ready = bool(os.read(self.ready_read, 64))
            except (BlockingIOError, OSError):
                return False
        return self._ready

    def close_pipe(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.ready_read)

    def usable_for(self, env: dict[str, str], argv: list[str]) -> bool:
        """Whether the run (its environment and pytest command) is what this jail awaits."""
        return (
            self.started.running()
            and env == self.jail.env
            and argv[:3] == [self.jail.argv[0], "-m", "pytest"]
            and self.run.work.stat().st_ino == self.work_inode
        )

    def order(self, argv: list[str]) -> bytes:
        return (json.dumps({"cwd": str(self.run.work), "args": argv[3:]}) + "\n").encode()

    @staticmethod
    def shadowed(returncode: int | None, stderr: str) -> bool:
        return returncode == SHADOWED_EXIT and SHADOWED_MARKER in stderr


class WarmJails:
    """Up to `per_slot` warm jails for each recently used slot and `total` in all, started on
    one long-lived thread (bubblewrap dies with the thread that started it:
    `--die-with-parent`). Each holds an interpreter's memory: a worker going through many
    environments keeps the most recently used ones warm, not every one it met in the last
    IDLE_SECONDS."""

    def __init__(
        self,
        *,
        jails: JailRunner,
        runs: Path,
        environments,
        per_slot: int,
        total: int | None = None,
    ) -> None:
        self.jails = jails
        self.runs = runs
        self.environments = environments
        self.per_slot = per_slot
        self.total = DEFAULT_SLOTS * per_slot if total is None else total
        self._ready: dict[WarmSlot, list[WarmJail]] = {}
        # Slots by their last run, least recent first: who gives way when `total` is reached.
        self._recent: dict[WarmSlot, None] = {}
        self._lock = threading.Lock()
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-warm")
        self._closed = False

    @property
    def enabled(self) -> bool:
        # Without a jail user of its own (a worker that is not root), the jail's code would run
        # as the worker preparing the copy.
        return self.per_slot > 0 and self.total > 0 and self.jails.user is not None

    def take(self, slot: WarmSlot) -> WarmJail | None:
        """A warm jail for `slot` whose interpreter is ready, if there is one."""
        with self._lock:
            warms = self._ready.get(slot, [])
            for warm in list(warms):
                if not warm.started.running() or self._idle_too_long(warm):
                    warms.remove(warm)
                    self._end(warm)
                elif warm.ready():
                    warms.remove(warm)
                    warm.close_pipe()
                    return warm
        return None

    def refill(self, slot: WarmSlot) -> None:
        """Start warm jails for `slot` up to `per_slot`, in the background."""
        if self.enabled:
            with self._lock:
                self._recent.pop(slot, None)
                self._recent[slot] = None
            self._starter.submit(self._fill, slot)

    def close(self) -> None:
        with self._lock:
            self._closed = True  # a start still under way is ended when it is done
            ready, self._ready = self._ready, {}
        for warms in ready.values():
            for warm in warms:
                self._end(warm)

    def _fill(self, slot: WarmSlot) -> None:
        self._expire()
        while True:
            with self._lock:
                if self._closed or len(self._ready.get(slot, [])) >= self.per_slot:
                    return
                if not self._make_room(slot):
                    return
            try:
                warm = self._start(slot)
            except (OSError, SandboxError) as exc:
                log.warning("a warm jail could not start (runs start cold): %s", exc)
                return
            with self._lock:
                if not self._closed:
                    self._ready.setdefault(slot, []).append(warm)
                    self._recent.setdefault(slot, None)
                    continue
            self._end(warm)
            return

    def _start(self, slot: WarmSlot) -> WarmJail:
        run_id = uuid.uuid4().hex
        run = RunFolder(self.runs / f"{owner_tag()}-{run_id}")
        run.create()
        try:
            environment = self.environments.path(slot.environment_key)
            python = str(self.environments.python(slot.environment_key))
            paths = run.paths(python=python)
            starter = run.support / STARTER_FILE.name
            shutil.copyfile(STARTER_FILE, starter)
            starter.chmod(0o644)
            ready_read, ready_write = os.pipe()
            os.set_blocking(ready_read, False)
            jail = Jail(
                argv=[python, str(starter), str(ready_write)],
                env=sandbox_environment(
                    paths, has_src_layout=slot.has_src_layout, extra=slot.extra_environment
                ),
                # The working copy is not the jail user's yet: it moves there with the order.
                cwd=str(run.support),
                read_only=(str(environment), str(run.support)),
                writable=tuple(str(run.folder(name)) for name in ("work", "home", "tmp", "out")),
            )
            try:
                started = self.jails.start(
                    jail, slot.limits, run_id=run_id, stdin_pipe=True, pass_fds=(ready_write,)
                )
            except BaseException:
                os.close(ready_read)
                raise
            finally:
                os.close(ready_write)
        except BaseException:
            remove_tree(run.path)
            raise
        return WarmJail(
            slot=slot,
            run=run,
            jail=jail,
            started=started,
            work_inode=run.work.stat().st_ino,
            ready_read=ready_read,
        )

    def _make_room(self, slot: WarmSlot) -> bool:
        """Under the lock: whether one more jail for `slot` fits in `total`, ending the oldest
        jail of the least recently run other slot if that makes it fit."""
        if sum(len(warms) for warms in self._ready.values()) < self.total:
            return True
        # Every slot with warm jails is in `_recent` (added when its first one is ready).
        victim = next((s for s in self._recent if s != slot and self._ready.get(s)), None)
        if victim is None:
            return False
        warms = self._ready[victim]
        self._end(warms.pop(0))
        if not warms:
            del self._ready[victim]
        return True

    def _expire(self) -> None:
        with self._lock:
            for slot, warms in list(self._ready.items()):
                keep = [w for w in warms if w.started.running() and not self._idle_too_long(w)]
                for warm in warms:
                    if warm not in keep:
                        self._end(warm)
                if keep:
                    self._ready[slot] = keep
                else:
                    del self._ready[slot]
            # Slots without a warm jail are forgotten: one gets its place back, as the most
            # recent, when a jail of its is ready.
            for slot in [s for s in self._recent if s not in self._ready]:
                del self._recent[slot]

    @staticmethod
    def _idle_too_long(warm: WarmJail) -> bool:
        return time.monotonic() - warm.created > IDLE_SECONDS

    @staticmethod
    def _end(warm: WarmJail) -> None:
        try:
            warm.close_pipe()
            warm.started.kill()
        finally:
            remove_tree(warm.run.path)
