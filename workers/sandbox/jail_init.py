"""First process inside a sandboxed run's namespaces: `python -I -S jail_init.py CONFIG_HEX`.

Standalone on purpose (run by path, with -S, before any project code is importable). As PID 1
of the new PID namespace it stays root and keeps the parent-death signal that
`unshare --kill-child` set: a process that drops its user id loses that signal, so the
unprivileged test process is a child of this one rather than this one itself. When PID 1
exits, the kernel kills every process left in the namespace, setsid() or not.

Config keys: argv, env, cwd, rlimits {name: limit}, user [uid, gid] or null, loopback (bool),
tmpfs [[path, options]], as_init (bool: fork and reap, else exec directly).
"""

from __future__ import annotations

# Every run waits for this script before pytest starts, so it imports only what is cheap:
# marshal (built in) rather than json (which pulls in re), _socket rather than socket (enum).
import _socket
import ctypes
import fcntl
import marshal
import os
import resource
import struct
import sys

INIT_ERROR_MARKER = "specloom-init-error:"
INIT_ERROR_EXIT = 125

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_MS_NOSUID, _MS_NODEV = 0x2, 0x4
_PR_SET_NO_NEW_PRIVS = 38
_libc = ctypes.CDLL(None, use_errno=True)


def main() -> None:
    # Written by launch_argv in the worker, never by the run: trusted input.
    config = marshal.loads(bytes.fromhex(sys.argv[1]))  # noqa: S302
    try:
        if config.get("loopback"):
            bring_loopback_up()
        for path, options in config.get("tmpfs", []):
            mount_tmpfs(path, options)
    except OSError as exc:
        fail(f"preparing the sandbox: {exc}")
    if not config.get("as_init"):
        become_test_process(config)
    child = os.fork()
    if child == 0:
        become_test_process(config)
    sys.exit(reap_until(child))


def bring_loopback_up() -> None:
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, _SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | _IFF_UP))
    finally:
        sock.close()


def mount_tmpfs(path: str, options: str) -> None:
    if _libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options.encode()):
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount tmpfs on {path}: {os.strerror(errno)}")


def become_test_process(config: dict) -> None:
    try:
        # Without namespaces the supervisor already made us a session leader.
        try:  # noqa: SIM105 - contextlib would cost this script's start-up an import
            os.setsid()
        except PermissionError:
            pass
        for name, limit in config.get("rlimits", {}).items():
            set_limit(getattr(resource, name), int(limit))
        # No setuid binary (su, ping, ...) can give back the privileges dropped below.
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if config.get("user"):
            uid, gid = config["user"]
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        os.chdir(config["cwd"])
        argv = config["argv"]
        os.execve(argv[0], argv, config["env"])  # noqa: S606 - an argument list, no shell
    except (OSError, ValueError) as exc:
        fail(f"starting the test process: {exc}")


def set_limit(which: int, limit: int) -> None:
    _soft, hard = resource.getrlimit(which)
    # Without CAP_SYS_RESOURCE a hard limit can only go down.
    ceiling = hard if hard != resource.RLIM_INFINITY else limit + 5
    soft = min(limit, ceiling)
    # CPU: SIGXCPU at the soft limit, SIGKILL a few seconds later at the hard one.
    resource.setrlimit(
        which, (soft, min(soft + 5, ceiling) if which == resource.RLIMIT_CPU else soft)
    )


def reap_until(child: int) -> int:
    """Reap every process that ends up ours until the test process exits; return its status."""
    while True:
        pid, status = os.wait()
        if pid == child:
            if os.WIFSIGNALED(status):
                return 128 + os.WTERMSIG(status)
            return os.WEXITSTATUS(status)


def fail(message: str) -> None:
    os.write(2, f"{INIT_ERROR_MARKER} {message}\n".encode())
    os._exit(INIT_ERROR_EXIT)


if __name__ == "__main__":
    main()
