"""How a run is isolated from the host, and the command line that sets that up.

Modes, strongest first (RunResult.isolation records which one ran):
- "netns+nobody" (root): new network, PID and mount namespaces; only loopback is up, so the
  host's services (PostgreSQL, Redis) and outside addresses are unreachable while a test can
  still serve on its own 127.0.0.1; host folders of sockets and shared temp files (/run,
  /dev/shm, /tmp, /var/tmp) are covered by empty tmpfs; the tests run as `nobody`.
- "nobody" (root, namespaces unavailable): only the unprivileged user and the limits.
- "userns" (not root): `unshare --user --map-root-user` plus the same namespaces.
- "none": limits only.
"""

from __future__ import annotations

import functools
import os
import pwd
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .types import Limits

SANDBOX_USER = "nobody"

_NAMESPACES = ("--net", "--pid", "--mount-proc", "--fork", "--kill-child")
_USER_NAMESPACE = ("--user", "--map-root-user")
# Host folders that hold sockets of local services (PostgreSQL's /run/postgresql, Docker's
# socket) or other programs' temporary files; each gets an empty tmpfs of its own inside.
_COVERED_FOLDERS = {
    "/run": "mode=755,size=16m",
    "/var/run": "mode=755,size=16m",
    "/dev/shm": "mode=1777,size=256m",  # noqa: S108 - hidden, not used
    "/tmp": "mode=1777,size=512m",  # noqa: S108 - hidden, not used
    "/var/tmp": "mode=1777,size=512m",  # noqa: S108 - hidden, not used
}


@dataclass(frozen=True)
class Isolation:
    name: str
    unshare_flags: tuple[str, ...]  # empty: no namespaces
    user: tuple[int, int] | None  # (uid, gid) the tests run as; None: the caller's own

    @property
    def namespaced(self) -> bool:
        return bool(self.unshare_flags)


@functools.cache
def detect_isolation() -> Isolation:
    sandbox_user = pwd.getpwnam(SANDBOX_USER)
    as_nobody = (sandbox_user.pw_uid, sandbox_user.pw_gid)
    if os.geteuid() == 0:
        if _unshare_works(_NAMESPACES):
            return Isolation("netns+nobody", _NAMESPACES, as_nobody)
        return Isolation("nobody", (), as_nobody)
    flags = _USER_NAMESPACE + _NAMESPACES
    if _unshare_works(flags):
        return Isolation("userns", flags, None)
    return Isolation("none", (), None)


def _unshare_works(flags: tuple[str, ...]) -> bool:
    try:
        probe = subprocess.run(
            ["unshare", *flags, "--", "true"],
            env={"PATH": "/usr/bin:/bin:/usr/sbin:/sbin"},
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


def covered_folders(keep_visible: list[Path]) -> list[tuple[str, str]]:
    """The folders to cover with tmpfs, except those holding something the run needs."""
    visible = [path.resolve() for path in keep_visible]
    covered = []
    for folder, options in _COVERED_FOLDERS.items():
        path = Path(folder)
        if path.is_symlink() or not path.is_dir():
            continue  # /var/run is usually a symlink to /run
        if any(needed.is_relative_to(path) for needed in visible):
            continue
        covered.append((folder, options))
    return covered


def rlimits(limits: Limits) -> dict[str, int]:
    return {
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_AS": limits.memory_bytes,
        "RLIMIT_NPROC": limits.max_processes,
        "RLIMIT_FSIZE": limits.max_file_bytes,
        "RLIMIT_NOFILE": limits.max_open_files,
        "RLIMIT_CORE": 0,
    }


def launch_argv(
    isolation: Isolation,
    *,
    init: Path,
    argv: list[str],
    env: dict[str, str],
    cwd: Path,
    limits: Limits,
    keep_visible: list[Path],
) -> list[str]:
    """The host command that runs `argv` isolated: [unshare ...] INIT OPTIONS -- argv.

    `init` is the compiled jail_init.c (init_binary.py), which documents the options.
    """
    command = [str(init)]
    if isolation.namespaced:
        command.append("--loopback")
        for folder, options in covered_folders(keep_visible):
            command += ["--tmpfs", folder, options]
    for name, limit in rlimits(limits).items():
        command += ["--rlimit", name, str(int(limit))]
    if isolation.user:
        uid, gid = isolation.user
        command += ["--user", str(uid), str(gid)]
    command += ["--cwd", str(cwd)]
    for name, value in env.items():
        command += ["--env", f"{name}={value}"]
    if isolation.namespaced:
        command.append("--as-init")
    command += ["--", *argv]
    if isolation.namespaced:
        return ["unshare", *isolation.unshare_flags, "--", *command]
    return command


def supervisor_environment() -> dict[str, str]:
    """What unshare and the init see: nothing of the worker's own environment."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
    }
