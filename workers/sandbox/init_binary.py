"""The sandbox's init (jail_init.c), compiled once per sandbox root with the host's C compiler.

The binary's name carries a hash of its source, so a changed init is rebuilt and an old one is
never run. It is compiled to a temporary name and renamed into place, so concurrent workers
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

SOURCE = Path(__file__).with_name("jail_init.c")
# Printed (with the reason) and returned by the init when it cannot set the sandbox up.
INIT_ERROR_MARKER = "specloom-init-error:"
INIT_ERROR_EXIT = 125
_COMPILE_TIMEOUT_SECONDS = 120


def compiler() -> str | None:
    return os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")


def jail_init_binary(folder: Path) -> Path:
    """The compiled init in `folder` (root's, not writable by the tests), built if missing."""
    source = SOURCE.read_bytes()
    binary = folder / f"specloom-jail-init-{hashlib.sha256(source).hexdigest()[:16]}"
    if binary.is_file():
        return binary
    cc = compiler()
    if cc is None:
        raise SandboxError(
            "the process sandbox builds its init with a C compiler, and none was found "
            "(install gcc, or set CC)"
        )
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
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
                f"building the sandbox's init with `{cc}` failed: {proc.stderr.strip()[-2000:]}"
            )
        partial.chmod(0o755)
        os.replace(partial, binary)
    except OSError as exc:
        raise SandboxError(f"building the sandbox's init with `{cc}`: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise SandboxError(f"building the sandbox's init with `{cc}` timed out") from exc
    finally:
        partial.unlink(missing_ok=True)
    return binary
