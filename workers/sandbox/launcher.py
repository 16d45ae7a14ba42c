"""The sandbox's launcher (jail_launch.c), compiled once per sandbox root with the host's C
compiler.

The binary's name carries a hash of its source, so a changed launcher is rebuilt and an old one
is never run. It is compiled to a temporary name and renamed into place, so concurrent workers
never run a half-written file (two that build at once write the same bytes; the last rename
wins).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import uuid
from pathlib import Path

from .errors import SandboxError

SOURCE = Path(__file__).with_name("jail_launch.c")
# Printed (with the reason) and returned by the launcher when it cannot start the sandbox.
INIT_ERROR_MARKER = "specloom-init-error:"
INIT_ERROR_EXIT = 125
_COMPILE_TIMEOUT_SECONDS = 120


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def jail_launcher_binary(folder: Path) -> Path:
    """The compiled launcher in `folder` (root's, not writable by the jail), built if missing."""
    source = SOURCE.read_bytes()
    binary = folder / f"specloom-jail-launch-{hashlib.sha256(source).hexdigest()[:16]}"
    if binary.is_file():
        if folder.stat().st_mode & 0o077:
            folder.chmod(0o700)  # made by an older version, open to all
        return binary
    cc = compiler()
    if cc is None:
        raise SandboxError(
            "the process sandbox builds its launcher with a C compiler, and none was found "
            "(install gcc, or set CC)"
        )
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = folder / f".{binary.name}.{uuid.uuid4().hex}"
    try:
        proc = subprocess.run(
            [cc, "-O2", "-Wall", "-o", str(partial), str(SOURCE)],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=_COMPILE_TIMEOUT_SECONDS,
            check=False,
        )
        if proc.returncode != 0:
            raise SandboxError(
                f"building the sandbox's launcher with `{cc}` failed: {proc.stderr.strip()[-2000:]}"
            )
        partial.chmod(0o700)  # run by root only: the jail never sees it
        os.replace(partial, binary)
    except OSError as exc:
        raise SandboxError(f"building the sandbox's launcher with `{cc}`: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"building the sandbox's launcher with `{cc}` timed out") from exc
    finally:
        partial.unlink(missing_ok=True)
    return binary
