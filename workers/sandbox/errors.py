"""Errors of the sandbox itself, as opposed to outcomes of the code it runs."""

from __future__ import annotations


class SandboxError(RuntimeError):
    """The sandbox could not do its job (bad snapshot, broken isolation, missing tool)."""


class EnvironmentBuildError(SandboxError):
    """Building a repository's environment failed; nothing was cached."""

    def __init__(
        self,
        *,
        environment_key: str,
        command: str,
        returncode: int | None,
        output_tail: str,
        reason: str | None = None,
    ) -> None:
        self.environment_key = environment_key
        self.command = command
        self.returncode = returncode
        self.output_tail = output_tail
        status = reason or ("timed out" if returncode is None else f"exited with {returncode}")
        self.reason = status
        super().__init__(
            f"building environment {environment_key}: `{command}` {status}\n"
            f"--- output (tail) ---\n{output_tail[-4000:]}"
        )


class SandboxStartError(SandboxError):
    """The jail could not be started; `transient` when for want of a resource for a moment
    (EAGAIN, ENOMEM), which a retry later may not meet."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient
