"""The jail around everything untrusted: bubblewrap, started as an unprivileged user, in a cgroup
of its own.

What a jailed process sees: the host's /usr (and the /bin, /lib... links into it) read-only, a
short allowlist of /etc read-only plus our own passwd/group/hosts, fresh /proc and /dev, an
empty private tmpfs for every temporary folder (/tmp, /var/tmp, /run, /dev/shm), and exactly
the host paths the caller binds (the environment read-only, the working copy read-write), at
the same paths as on the host. Nothing else of the host exists in there: not storage, not other
repositories or runs, not the application's checkout, logs or database, not the host's sockets.
All namespaces are new (so no network but the jail's own loopback), there are no capabilities,
no new user namespaces can be made inside (`--disable-userns`), no setuid bit works
(no_new_privs, nosuid mounts), and the jail dies with its supervising worker
(`--die-with-parent`) — and, whatever happens, with its cgroup.

Two traps, both checked on these machines: bubblewrap started by root with `--unshare-user`
maps the jail's uid to root outside, so the launcher drops to the unprivileged uid first and
bubblewrap runs as that user; and RLIMIT_NPROC counts a uid host-wide, so process limits are
the cgroup's `pids.max`.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import grp
import json
import os
import pwd
import random
import shutil
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from .cgroups import DEFAULT_PARENT, CgroupHierarchy, detect_hierarchy, owner_tag
from .errors import SandboxError, SandboxStartError
from .launcher import INIT_ERROR_EXIT, INIT_ERROR_MARKER, jail_launcher_binary
from .supervise import Finished, Supervised, TailBuffer
from .types import Limits

JAIL_USER = "nobody"
TMPFS_BYTES = {"/tmp": 512 * 1024**2, "/var/tmp": 512 * 1024**2, "/run": 16 * 1024**2}  # noqa: S108
SHM_BYTES = 256 * 1024**2
# Host files of /etc that interpreters, resolvers and TLS need; nothing with secrets or with
# the host's own configuration of services.
ETC_ALLOWLIST = (
    "alternatives",
    "ca-certificates",
    "ca-certificates.conf",
    "debian_version",
    "fonts",
    "gai.conf",
    "host.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "locale.alias",
    "localtime",
    "mime.types",
    "os-release",
    "protocols",
    "services",
    "ssl",
    "timezone",
)
# Debian's interpreters read their sitecustomize from /etc/python3.X.
ETC_PREFIXES = ("python3",)
_SYSTEM_LINKS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
_START_ATTEMPTS = 4
_TRANSIENT_SIGNS = (
    "Resource temporarily unavailable",
    "Cannot allocate memory",
    "No space left on device",  # the per-user count of user namespaces
)


@dataclass(frozen=True)
class Jail:
    """What to run in the jail and which host paths it sees (at the same paths)."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    read_only: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    # (host path, path inside, writable) for binds at another path than the host's.
    moved: tuple[tuple[str, str, bool], ...] = ()


@dataclass
class JailFinished:
    returncode: int | None  # the jailed program's; 128 + N when signal N killed it
    timed_out: bool
    wall_seconds: float
    stdout: TailBuffer
    stderr: TailBuffer
    oom_kills: int = 0
    cpu_seconds: float | None = None  # of everything in the run's cgroup
    start_attempts: int = 1

    @property
    def memory_exceeded(self) -> bool:
        return self.oom_kills > 0


@functools.cache
def bubblewrap() -> str:
    found = shutil.which("bwrap", path="/usr/local/bin:/usr/bin:/bin")
    if found is None:
        raise SandboxError(
            "the process sandbox needs bubblewrap (`apt-get install bubblewrap`), and `bwrap` "
            "was not found"
        )
    return found


def jail_user(name: str = JAIL_USER) -> tuple[int, int] | None:
    """The uid and gid jailed processes run as; None when the worker is not root (bubblewrap
    then runs as the worker's own user, in a user namespace)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(name)
    except KeyError as exc:
        raise SandboxError(f"the jail's user {name!r} does not exist on this host") from exc
    if entry.pw_uid == 0:
        raise SandboxError("the jail's user must not be root")
    return entry.pw_uid, entry.pw_gid


def patch_user(user: tuple[int, int]) -> tuple[int, int]:
    """An unprivileged uid and gid that are not the jail's and belong to no account of this
    host: patches are applied as them while a warm jail (warm.py) runs as the jail's user."""
    uid = user[0]
    for candidate in range(uid - 1, max(uid - 1000, 1000), -1):
        try:
            pwd.getpwuid(candidate)
        except KeyError:
            try:
                grp.getgrgid(candidate)
            except KeyError:
                return candidate, candidate
    raise SandboxError(f"no free uid below the jail user's ({uid}) to apply patches as")


def write_jail_etc(folder: Path, user: tuple[int, int] | None) -> Path:
    """The jail's own passwd, group, hosts and nsswitch.conf: the host's name nobody."""
    uid, gid = user or (os.geteuid(), os.getegid())
    files = {
        "passwd": (
            "root:x:0:0:root:/root:/usr/sbin/nologin\n"
            f"sandbox:x:{uid}:{gid}:sandbox:/nonexistent:/usr/sbin/nologin\n"
        ),
        "group": f"root:x:0:\nsandbox:x:{gid}:\n",
        "hosts": "127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n",
        "nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
        "hostname": "sandbox\n",
    }
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    folder.chmod(0o755)
    for name, content in files.items():
        path = folder / name
        if not path.is_file() or path.read_text() != content:
            partial = folder / f".{name}.{uuid.uuid4().hex}"
            partial.write_text(content)
            partial.chmod(0o644)
            os.replace(partial, path)
    return folder


def system_mounts() -> list[str]:
    argv = ["--ro-bind", "/usr", "/usr"]
    for name in _SYSTEM_LINKS:
        path = Path("/") / name
        if path.is_symlink():
            argv += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            argv += ["--ro-bind", str(path), str(path)]
    names = list(ETC_ALLOWLIST)
    with contextlib.suppress(OSError):
        names += sorted(n for n in os.listdir("/etc") if n.startswith(ETC_PREFIXES))
    for name in names:
        argv += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return argv


def bwrap_argv(jail: Jail, *, etc: Path, status_fd: int) -> list[str]:
    argv = [
        bubblewrap(),
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        "--hostname",
        "sandbox",
        "--json-status-fd",
        str(status_fd),
        *system_mounts(),
    ]
    for name in ("passwd", "group", "hosts", "nsswitch.conf", "hostname"):
        argv += ["--ro-bind", str(etc / name), f"/etc/{name}"]
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]  # noqa: S108
    for folder, size in TMPFS_BYTES.items():
        argv += ["--perms", "1777", "--size", str(size), "--tmpfs", folder]
    binds = [(path, path, False) for path in jail.read_only]
    binds += [(path, path, True) for path in jail.writable]
    binds += list(jail.moved)
    # Parents before children: a bind under another bind's path must come after it.
    for source, dest, writable in sorted(binds, key=lambda bind: Path(bind[1]).parts):
        argv += ["--bind" if writable else "--ro-bind", source, dest]
    # Whatever is not a bind or a tmpfs (the new root, the folders bubblewrap made) is read-only.
    argv += ["--remount-ro", "/", "--chdir", jail.cwd, "--clearenv"]
    for name, value in jail.env.items():
        argv += ["--setenv", name, value]
    return [*argv, "--", *jail.argv]


def launcher_environment() -> dict[str, str]:
    """What the launcher and bubblewrap see: nothing of the worker's own environment."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "LANG": "C.UTF-8",
    }


def rlimits(limits: Limits) -> dict[str, int]:
    return {
        "RLIMIT_CPU": limits.cpu_seconds,
        "RLIMIT_FSIZE": limits.max_file_bytes,
        "RLIMIT_NOFILE": limits.max_open_files,
        "RLIMIT_CORE": 0,
    }


class JailRunner:
    """Starts jails: one cgroup, one launcher, one bubblewrap per run."""

    def __init__(
        self,
        root: Path,
        *,
        hierarchy: CgroupHierarchy | None = None,
        cgroup_parent: str = DEFAULT_PARENT,
        user_name: str = JAIL_USER,
    ) -> None:
        self.root = root
        self.user = jail_user(user_name)
        bubblewrap()
        self.launcher = jail_launcher_binary(root / "bin")
        self.etc = write_jail_etc(root / "jail-etc", self.user)
        self.hierarchy = hierarchy or detect_hierarchy(cgroup_parent)

    @property
    def isolation(self) -> str:
        return "bwrap+cgroup" if self.user is not None else "bwrap+cgroup (own user)"

    def run(
        self,
        jail: Jail,
        limits: Limits,
        *,
        run_id: str | None = None,
        merge_stderr: bool = False,
    ) -> JailFinished:
        """Run `jail` to its end, a timeout, or a start that keeps failing (SandboxStartError).

        A start that fails for want of a resource for a moment (EAGAIN, ENOMEM: many runs on
        one host) is retried with backoff; other start failures are raised at once.
        """
        delay = 0.1
        for attempt in range(1, _START_ATTEMPTS + 1):
            try:
                finished = self._run_once(jail, limits, run_id=run_id, merge_stderr=merge_stderr)
            except SandboxStartError as exc:
                if not exc.transient:
                    raise
                if attempt == _START_ATTEMPTS:
                    raise SandboxStartError(
                        f"{exc} (after {attempt} attempts)", transient=True
                    ) from exc
                time.sleep(delay * (1 + random.random()))  # noqa: S311 - jitter, not secrets
                delay *= 4
                continue
            finished.start_attempts = attempt
            return finished
        raise AssertionError("unreachable")

    def _run_once(
        self, jail: Jail, limits: Limits, *, run_id: str | None, merge_stderr: bool
    ) -> JailFinished:
        started = self.start(jail, limits, run_id=run_id, merge_stderr=merge_stderr)
        return started.finish(wall_seconds=limits.wall_seconds)

    def start(
        self,
        jail: Jail,
        limits: Limits,
        *,
        run_id: str | None = None,
        merge_stderr: bool = False,
        stdin_pipe: bool = False,
        pass_fds: tuple[int, ...] = (),
    ) -> StartedJail:
        """Start `jail` in a cgroup of its own; `StartedJail.finish` waits for it. With
        `stdin_pipe`, the jailed program reads its standard input from `finish(message=...)`;
        `pass_fds` are inherited by the jailed program."""
        cgroup = self.hierarchy.run_cgroup(f"{owner_tag()}-{run_id or uuid.uuid4().hex}")
        cgroup.create(limits)
        status_read, status_write = os.pipe()
        try:
            argv = [str(self.launcher)]
            for procs in cgroup.procs_files:
                argv += ["--cgroup", procs]
            for name, value in rlimits(limits).items():
                argv += ["--rlimit", name, str(int(value))]
            if self.user is not None:
                argv += ["--user", str(self.user[0]), str(self.user[1])]
            argv += ["--", *bwrap_argv(jail, etc=self.etc, status_fd=status_write)]
            child = Supervised.start(
                argv,
                env=launcher_environment(),
                cwd="/",
                max_output_bytes=limits.max_output_bytes,
                merge_stderr=merge_stderr,
                pass_fds=(status_write, *pass_fds),
                stdin_pipe=stdin_pipe,
            )
        except OSError as exc:
            os.close(status_read)
            cgroup.remove()
            raise SandboxStartError(
                f"the sandbox could not start: {exc}",
                transient=exc.errno in (errno.EAGAIN, errno.ENOMEM),
            ) from exc
        finally:
            # The launcher has its copy: once every jailed process is gone, the pipe reads to
            # its end.
            os.close(status_write)
        return StartedJail(child=child, cgroup=cgroup, status_read=status_read)


class StartedJail:
    """A jail that runs (or waits for its standard input): finish it once, or kill it."""

    def __init__(self, *, child: Supervised, cgroup, status_read: int) -> None:
        self.child = child
        self.cgroup = cgroup
        self._status_read = status_read
        self._done = False

    def running(self) -> bool:
        return not self._done and self.child.running()

    def finish(self, *, wall_seconds: float, message: bytes | None = None) -> JailFinished:
        """Wait for the jailed program's end (or the wall-clock limit, counted from now), kill
        whatever is left in its cgroup and remove it."""
        if self._done:
            raise SandboxError("this jail has finished already")
        self._done = True
        try:
            finished = self.child.wait(
                wall_seconds=wall_seconds, before_reap=self.cgroup.kill, message=message
            )
            self.cgroup.kill()
            oom_kills = self.cgroup.oom_kills()
            cpu_seconds = self.cgroup.cpu_seconds()
        finally:
            status = _read_status(self._status_read)
            self.cgroup.remove()
        jailed = _finished(finished, status, oom_kills)
        jailed.cpu_seconds = cpu_seconds
        return jailed

    def kill(self) -> None:
        """End it unused: everything in its cgroup is killed and the cgroup removed."""
        if self._done:
            return
        self._done = True
        try:
            self.child.kill(self.cgroup.kill)
        finally:
            with contextlib.suppress(OSError):
                os.close(self._status_read)
            self.cgroup.remove()


def _finished(finished: Finished, status: list[dict], oom_kills: int) -> JailFinished:
    # bubblewrap reports the program's exit on its status pipe, which the jailed program
    # never holds: without that report (and without a limit that killed the run), the
    # program never ran, whatever its output says.
    exit_codes = [item["exit-code"] for item in status if "exit-code" in item]
    if not exit_codes and not finished.timed_out and not oom_kills:
        message = (finished.stderr.text() or finished.stdout.text()).strip()[-2000:]
        launched = finished.returncode != INIT_ERROR_EXIT or INIT_ERROR_MARKER not in message
        transient = any(sign in message for sign in _TRANSIENT_SIGNS)
        where = "bubblewrap" if launched else "the launcher"
        raise SandboxStartError(
            f"the sandbox could not start ({where}): {message or 'no message'}",
            transient=transient,
        )
    returncode = int(exit_codes[-1]) if exit_codes else finished.returncode
    return JailFinished(
        returncode=None if finished.timed_out else returncode,
        timed_out=finished.timed_out,
        wall_seconds=finished.wall_seconds,
        stdout=finished.stdout,
        stderr=finished.stderr,
        oom_kills=oom_kills,
    )


def _read_status(fd: int) -> list[dict]:
    """bubblewrap's JSON status documents (child started, exit code), read after the run."""
    chunks = []
    try:
        os.set_blocking(fd, False)
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(fd)
    documents = []
    decoder = json.JSONDecoder()
    text = b"".join(chunks).decode("utf-8", errors="replace")
    index = 0
    while index < len(text):
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            break
        try:
            document, index = decoder.raw_decode(text, index)
        except ValueError:
            break
        if isinstance(document, dict):
            documents.append(document)
    return documents
