"""Run a child process with a wall-clock limit and capped, concurrently read output.

The child is started in a new session so that its whole process group can be SIGKILLed; when
the child is `unshare --pid --kill-child`, killing the group also tears down the PID namespace
and with it every descendant, including those that called setsid().
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

_READ_CHUNK = 64 * 1024
# Readers normally see EOF as soon as the child's process tree is gone; this only bounds the wait
# when a descendant escaped the kill (possible only without a PID namespace).
_READER_GRACE_SECONDS = 5.0


class TailBuffer:
    """Keeps the last `limit` bytes of a stream and counts everything that went through."""

    def __init__(self, limit: int) -> None:
        self.limit = max(0, limit)
        self.total_bytes = 0
        self._data = bytearray()

    def feed(self, chunk: bytes) -> None:
        self.total_bytes += len(chunk)
        self._data += chunk
        # Trim only once the buffer holds twice the limit, so trimming stays amortised O(1).
        if len(self._data) > 2 * self.limit:
            del self._data[: len(self._data) - self.limit]

    @property
    def truncated(self) -> bool:
        return self.total_bytes > self.limit

    def tail(self) -> bytes:
        return bytes(self._data[-self.limit :]) if self.limit else b""

    def text(self) -> str:
        return self.tail().decode("utf-8", errors="replace")


@dataclass
class Finished:
    returncode: int | None  # None when the wall-clock limit killed the child
    timed_out: bool
    wall_seconds: float
    stdout: TailBuffer
    stderr: TailBuffer


def supervise(
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: str | os.PathLike[str],
    wall_seconds: float,
    max_output_bytes: int,
    merge_stderr: bool = False,
    pass_fds: tuple[int, ...] = (),
    before_reap: Callable[[], None] | None = None,
) -> Finished:
    """Run `argv` to its end or the wall-clock limit, keeping the tail of its output.

    `pass_fds` are inherited by the child; `before_reap` runs after the child's process group
    was killed and before the child is reaped (e.g. to kill the rest of a cgroup).
    """
    child = Supervised.start(
        argv,
        env=env,
        cwd=cwd,
        max_output_bytes=max_output_bytes,
        merge_stderr=merge_stderr,
        pass_fds=pass_fds,
    )
    return child.wait(wall_seconds=wall_seconds, before_reap=before_reap)


class Supervised:
    """A started child whose output is being read: `wait` for its end (or limit) and reap it.

    Started with `stdin_pipe`, the child waits for what `wait(message=...)` writes to its
    standard input (a pre-started interpreter, see warm.py); the wall-clock limit then counts
    from that message, not from the start.
    """

    def __init__(
        self,
        proc: subprocess.Popen,
        stdout: TailBuffer,
        stderr: TailBuffer,
        readers: list[threading.Thread],
    ) -> None:
        self.proc = proc
        self.stdout, self.stderr = stdout, stderr
        self._readers = readers
        self._reaped = False

    @classmethod
    def start(
        cls,
        argv: list[str],
        *,
        env: dict[str, str],
        cwd: str | os.PathLike[str],
        max_output_bytes: int,
        merge_stderr: bool = False,
        pass_fds: tuple[int, ...] = (),
        stdin_pipe: bool = False,
    ) -> Supervised:
        stdout, stderr = TailBuffer(max_output_bytes), TailBuffer(max_output_bytes)
        proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin_pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
        )
        readers = [_start_reader(proc.stdout, stdout)]
        if not merge_stderr:
            readers.append(_start_reader(proc.stderr, stderr))
        return cls(proc, stdout, stderr, readers)

    def running(self) -> bool:
        return not self._reaped and _has_not_exited(self.proc.pid)

    def wait(
        self,
        *,
        wall_seconds: float,
        before_reap: Callable[[], None] | None = None,
        message: bytes | None = None,
    ) -> Finished:
        """Send `message` (if any) to the child's standard input, then wait for its end or the
        limit; kill its process group, run `before_reap`, reap it."""
        started = time.monotonic()
        timed_out = False
        try:
            if self.proc.stdin is not None:
                with contextlib.suppress(BrokenPipeError, OSError):
                    if message:
                        self.proc.stdin.write(message)
                    self.proc.stdin.close()
            exited = _wait_without_reaping(self.proc.pid, started + wall_seconds)
            timed_out = not exited
        finally:
            # The group leader is not reaped yet, so its pgid cannot have been reused: killing
            # the group is safe here, and it also removes leftovers of a child that exited.
            self.kill(before_reap)
        return Finished(
            returncode=None if timed_out else self.proc.returncode,
            timed_out=timed_out,
            wall_seconds=time.monotonic() - started,
            stdout=self.stdout,
            stderr=self.stderr,
        )

    def kill(self, before_reap: Callable[[], None] | None = None) -> None:
        """Kill the child's process group and reap it (once)."""
        if self._reaped:
            return
        self._reaped = True
        _kill_group(self.proc.pid)
        if before_reap is not None:
            before_reap()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        self.proc.wait()
        for reader in self._readers:
            reader.join(_READER_GRACE_SECONDS)


def _start_reader(pipe, buffer: TailBuffer) -> threading.Thread:
    def drain() -> None:
        with pipe:
            fd = pipe.fileno()
            while chunk := os.read(fd, _READ_CHUNK):
                buffer.feed(chunk)

    thread = threading.Thread(target=drain, daemon=True, name="sandbox-output-reader")
    thread.start()
    return thread


def _wait_without_reaping(pid: int, deadline: float) -> bool:
    """Wait until `pid` exits or the deadline passes; leave it a zombie so its pgid stays ours.

    A pidfd becomes readable the moment the process exits, so the exit is noticed at once;
    polling (kernels before 5.3) notices it up to one polling interval late.
    """
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return _poll_without_reaping(pid, deadline)
    try:
        watcher = select.poll()
        watcher.register(pidfd, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            # poll() takes milliseconds; round up so that a short remainder does not spin.
            if watcher.poll(math.ceil(remaining * 1000)):
                return True
    finally:
        os.close(pidfd)


def _has_not_exited(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def _poll_without_reaping(pid: int, deadline: float) -> bool:
    delay = 0.001
    while True:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, 0.005)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
