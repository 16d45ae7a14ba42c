"""A cgroup per run: the process, memory and CPU limits of everything a run starts, the kernel's
count of OOM kills, and one place from which all of it is killed.

Both cgroup versions are supported: v1 (a hierarchy per controller, as on these machines) and
v2 (one unified hierarchy, as on production hosts). Run cgroups live under one parent per
hierarchy (`specloom` at the hierarchy's root unless configured) and are named
`<owner>-<run id>`, where the owner names the supervising process by pid and start time, so a
sweep can tell the cgroups of dead workers from those of live ones without any shared state.

Processes join a run's cgroup before they run anything untrusted: the launcher (jail_launch.c)
writes its own pid into every `cgroup.procs` file it is given, as root, before it drops its
privileges and starts bubblewrap.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import SandboxError
from .types import Limits

CGROUP_MOUNT = Path("/sys/fs/cgroup")
DEFAULT_PARENT = "specloom"
V1_CONTROLLERS = ("pids", "memory", "cpu")
# Joined too where mounted (v1 keeps CPU accounting apart from the cpu controller); v2's cpu.stat
# has the same figure.
V1_OPTIONAL = ("cpuacct",)
V2_CONTROLLERS = ("pids", "memory", "cpu")
CPU_PERIOD_US = 100_000
_KILL_ROUNDS = 200


@functools.cache
def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip().replace("-", "")[:12]
    except OSError:
        return "noboot"


def process_start_time(pid: int) -> int | None:
    """The start time of `pid` in clock ticks since boot, or None when it does not exist."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = stat_line.rsplit(")", 1)[1].split()
    return int(fields[19])  # field 22 of the whole line


def owner_tag(pid: int | None = None) -> str:
    """Names the supervising process: `<pid>.<start time>`, unique for the machine's uptime."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}.{process_start_time(pid)}"


def owner_is_alive(tag: str) -> bool:
    pid_text, _, started = tag.partition(".")
    if not pid_text.isdigit():
        return False
    return str(process_start_time(int(pid_text))) == started


def owner_of(name: str) -> str:
    """The owner tag in a run cgroup's or run folder's name (`<pid>.<start>-<run id>`)."""
    return name.split("-", 1)[0]


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _read_pids(path: Path) -> list[int]:
    try:
        return [int(line) for line in path.read_text().split()]
    except (OSError, ValueError):
        return []


@dataclass(frozen=True)
class CgroupHierarchy:
    """Where run cgroups go: one folder per controller (v1) or one folder (v2)."""

    version: int
    parents: tuple[Path, ...]  # v1: one per controller, in V1_CONTROLLERS order; v2: one
    limits_enforced: bool = True  # False only for v2 trees without controllers (tests)
    accounting: bool = True  # v1: the cpuacct hierarchy is mounted and joined

    def run_cgroup(self, name: str) -> RunCgroup:
        return RunCgroup(self, name)

    def names(self) -> list[str]:
        folder = self.parents[0]
        try:
            return sorted(entry.name for entry in folder.iterdir() if entry.is_dir())
        except OSError:
            return []

    def sweep(self) -> list[str]:
        """Kill and remove the run cgroups whose supervising process is gone."""
        removed = []
        for name in self.names():
            if not owner_is_alive(owner_of(name)):
                cgroup = self.run_cgroup(name)
                cgroup.kill()
                cgroup.remove()
                removed.append(name)
        return removed


def detect_hierarchy(parent: str = DEFAULT_PARENT, mount: Path = CGROUP_MOUNT) -> CgroupHierarchy:
    """Find a cgroup tree this process may create run cgroups in, creating the parent folders.

    Raises SandboxError with what is missing when neither version offers the controllers.
    """
    parent = parent.strip("/") or DEFAULT_PARENT
    if (mount / "cgroup.controllers").is_file():
        return _prepare_v2(mount, mount / parent, require_controllers=True)
    missing = [name for name in V1_CONTROLLERS if not (mount / name / "cgroup.procs").is_file()]
    if missing:
        raise SandboxError(
            "the process sandbox needs cgroups for its per-run limits: no cgroup v2 tree at "
            f"{mount} and the v1 controllers {', '.join(missing)} are not mounted"
        )
    parents = []
    controllers = list(V1_CONTROLLERS)
    controllers += [name for name in V1_OPTIONAL if (mount / name / "cgroup.procs").is_file()]
    for controller in controllers:
        folder = mount / controller / parent
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SandboxError(
                f"cannot create the sandbox's cgroup {folder}: {exc.strerror} (the process "
                "sandbox runs as root, or needs a delegated cgroup)"
            ) from exc
        parents.append(folder)
    return CgroupHierarchy(version=1, parents=tuple(parents), accounting=len(parents) > 3)


def _prepare_v2(mount: Path, folder: Path, *, require_controllers: bool) -> CgroupHierarchy:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SandboxError(
            f"cannot create the sandbox's cgroup {folder}: {exc.strerror} (the process sandbox "
            "runs as root, or set SPECLOOM_CGROUP_PARENT to a delegated cgroup)"
        ) from exc
    if not require_controllers:
        return CgroupHierarchy(version=2, parents=(folder,), limits_enforced=False)
    # Each level from the mount down to the parent must hand the controllers on to its children.
    ancestors = [level for level in reversed(folder.parents) if level.is_relative_to(mount)]
    for level in [*ancestors, folder]:
        _enable_v2_controllers(level)
    available = set((folder / "cgroup.controllers").read_text().split())
    missing = [name for name in V2_CONTROLLERS if name not in available]
    if missing:
        raise SandboxError(
            f"the sandbox's cgroup {folder} lacks the controllers {', '.join(missing)}; "
            "enable them in its parent's cgroup.subtree_control (or delegate them to the worker)"
        )
    return CgroupHierarchy(version=2, parents=(folder,))


def _enable_v2_controllers(folder: Path) -> None:
    control = folder / "cgroup.subtree_control"
    enabled = set(control.read_text().split())
    available = set((folder / "cgroup.controllers").read_text().split())
    wanted = [name for name in V2_CONTROLLERS if name in available and name not in enabled]
    if not wanted:
        return
    try:
        _write(control, " ".join(f"+{name}" for name in wanted))
    except OSError as exc:
        if exc.errno != errno.EBUSY:
            raise SandboxError(f"cannot enable {wanted} in {control}: {exc.strerror}") from exc
        # A cgroup holding processes cannot hand controllers to children (v2's "no internal
        # processes" rule); what is missing is reported by the caller.


def unified_test_hierarchy(folder: Path) -> CgroupHierarchy:
    """A v2 tree without controllers (hybrid hosts' /sys/fs/cgroup/unified): membership and
    killing work, limits do not. Only for testing the v2 code paths."""
    return _prepare_v2(folder.parent, folder, require_controllers=False)


@dataclass(frozen=True)
class RunCgroup:
    hierarchy: CgroupHierarchy
    name: str

    @property
    def folders(self) -> tuple[Path, ...]:
        return tuple(parent / self.name for parent in self.hierarchy.parents)

    def _folder(self, controller: str) -> Path:
        if self.hierarchy.version == 2:
            return self.folders[0]
        return self.folders[(*V1_CONTROLLERS, *V1_OPTIONAL).index(controller)]

    @property
    def procs_files(self) -> list[str]:
        """The files the launcher writes its pid into to join this cgroup."""
        return [str(folder / "cgroup.procs") for folder in self.folders]

    def create(self, limits: Limits) -> None:
        try:
            for folder in self.folders:
                folder.mkdir()
            if self.hierarchy.limits_enforced:
                self._set_limits(limits)
        except OSError as exc:
            self.remove()
            raise SandboxError(f"cannot set up the run's cgroup {self.name}: {exc}") from exc

    def _set_limits(self, limits: Limits) -> None:
        memory = str(int(limits.memory_bytes))
        quota = max(1000, int(limits.cpu_cores * CPU_PERIOD_US))
        if self.hierarchy.version == 1:
            _write(self._folder("pids") / "pids.max", str(int(limits.max_processes)))
            memory_folder = self._folder("memory")
            _write(memory_folder / "memory.limit_in_bytes", memory)
            swap_limit = memory_folder / "memory.memsw.limit_in_bytes"
            if swap_limit.exists():  # memory + swap: the limit cannot be dodged by swapping
                _write(swap_limit, memory)
            cpu_folder = self._folder("cpu")
            _write(cpu_folder / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(cpu_folder / "cpu.cfs_quota_us", str(quota))
            return
        folder = self.folders[0]
        _write(folder / "pids.max", str(int(limits.max_processes)))
        _write(folder / "memory.max", memory)
        if (folder / "memory.swap.max").exists():
            _write(folder / "memory.swap.max", "0")
        _write(folder / "cpu.max", f"{quota} {CPU_PERIOD_US}")

    def pids(self) -> list[int]:
        found: set[int] = set()
        for folder in self.folders:
            found.update(_read_pids(folder / "cgroup.procs"))
        return sorted(found)

    def kill(self) -> None:
        """SIGKILL everything in the cgroup and wait until it is empty."""
        if self.hierarchy.version == 2 and (self.folders[0] / "cgroup.kill").exists():
            with contextlib.suppress(OSError):
                _write(self.folders[0] / "cgroup.kill", "1")
        delay = 0.0002  # a run's last processes are usually gone within a fraction of a ms
        for _round in range(_KILL_ROUNDS):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(delay)
            delay = min(delay * 2, 0.005)
        raise SandboxError(f"the run's cgroup {self.name} could not be emptied: {self.pids()}")

    def oom_kills(self) -> int:
        """How many processes the kernel killed for exceeding the run's memory limit."""
        if not self.hierarchy.limits_enforced:
            return 0
        if self.hierarchy.version == 1:
            source = self._folder("memory") / "memory.oom_control"
        else:
            source = self.folders[0] / "memory.events"
        try:
            text = source.read_text()
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system) used by everything that ran in the cgroup, if accounted."""
        try:
            if self.hierarchy.version == 1:
                if not self.hierarchy.accounting:
                    return None
                return int((self._folder("cpuacct") / "cpuacct.usage").read_text()) / 1e9
            for line in (self.folders[0] / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            return None
        return None

    def remove(self) -> None:
        for folder in self.folders:
            # rmdir fails with EBUSY for a moment while the last processes are being reaped.
            for _attempt in range(100):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        raise SandboxError(f"cannot remove cgroup {folder}: {exc}") from exc
                    time.sleep(0.01)
