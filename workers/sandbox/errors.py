"""Errors of the sandbox itself, as opposed to outcomes of the code it runs."""

from __future__ import annotations


class SandboxError(RuntimeError):
    """The sandbox could not do its job (bad snapshot, broken isolation, missing tool)."""


class EnvironmentBuildError(SandboxError):
    """Building a repository's environment failed; nothing was cached."""

    def __init__(
        self, *, environment_key: str, command: str, returncode: int | None, output_tail: str
    ) -> None:
        self.environment_key = environment_key
        self.command = command
        self.returncode = returncode
        self.output_tail = output_tail
        status = "timed out" if returncode is None else f"exited with {returncode}"
        super().__init__(
            f"building environment {environment_key}: `{command}` {status}\n"
            f"--- output (tail) ---\n{output_tail[-4000:]}"
        )
