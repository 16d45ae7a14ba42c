"""Apply unified diffs to a working copy with `git apply`, and explain the first one that fails."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from workers.patchcore.lenient import Hunk, lenient_hunks

from .types import PatchFailure
from .workcopy import git_environment

_APPLY_TIMEOUT_SECONDS = 120
_MESSAGE_LIMIT = 4000

_FAILED_AT = re.compile(r"^error: patch failed: (?P<file>.+):(?P<line>\d+)$", re.MULTILINE)
_FILE_ERROR = re.compile(
    r"^error: (?P<file>.+?): (?:patch does not apply|No such file or directory"
    r"|already exists in working directory|does not exist in index|does not match index"
    r"|is beyond a symbolic link|wrong type)$",
    re.MULTILINE,
)


def apply_patches(
    work: Path,
    patches: Sequence[str],
    *,
    scratch: Path,
    run_as: tuple[int, int] | None = None,
    restore: Callable[[], None],
) -> PatchFailure | None:
    """Apply `patches` in order; stop at the first that does not apply and describe it.

    One `git apply` takes them all (a process per patch would cost every run a few ms): it
    applies them in order, each atomically, and stops at the first that fails, keeping those
    before it. Its message names the file and line, not the patch, so when several patches were
    given `restore()` puts the unpatched files back and they are applied again one at a time to
    name the failing one (the slow path, taken only on failure). Running git as the sandbox user
    (`run_as`) means a patch that plants a symlink cannot make a later patch write outside the
    working copy with root's rights.
    """
    if not patches:
        return None
    files = []
    for index, patch in enumerate(patches):
        patch_file = scratch / f"patch-{index}.diff"
        patch_file.write_text(patch, encoding="utf-8", errors="surrogateescape")
        patch_file.chmod(0o644)
        files.append(patch_file)
    failed = _git_apply(work, files, scratch=scratch, run_as=run_as)
    if failed is None:
        return None
    if len(patches) == 1:
        return describe_failure(0, patches[0], failed)
    restore()
    for index, (patch, patch_file) in enumerate(zip(patches, files, strict=True)):
        failed = _git_apply(work, [patch_file], scratch=scratch, run_as=run_as)
        if failed is not None:
            return describe_failure(index, patch, failed)
    return None  # one at a time they all applied: the working copy is whole


def _git_apply(
    work: Path, patch_files: list[Path], *, scratch: Path, run_as: tuple[int, int] | None
) -> str | None:
    """Run one `git apply` over the files in order; None when it applied, else its message."""
    # --recount: hand-edited or model-written diffs often carry wrong hunk line counts.
    argv = ["git", "apply", "--recount", "--whitespace=nowarn", *map(str, patch_files)]
    if run_as is not None:
        uid, gid = run_as
        argv = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--", *argv]
    # GIT_CEILING_DIRECTORIES: never let git find an enclosing repository and apply the patch
    # relative to it instead of the working copy.
    env = git_environment(scratch) | {"GIT_CEILING_DIRECTORIES": str(work.parent)}
    proc = subprocess.run(
        argv,
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=_APPLY_TIMEOUT_SECONDS,
        check=False,
    )
    return None if proc.returncode == 0 else proc.stderr


def describe_failure(index: int, patch: str, message: str) -> PatchFailure:
    """Name the file and hunk that `git apply` rejected, as far as its message tells."""
    file, hunk = "", ""
    if failed := _FAILED_AT.search(message):
        file = failed["file"]
        hunk = _hunk_header_at(patch, file, int(failed["line"]))
    elif file_error := _FILE_ERROR.search(message):
        file = file_error["file"]
    return PatchFailure(
        patch_index=index, file=file, hunk=hunk, message=message.strip()[-_MESSAGE_LIMIT:]
    )


def parse_hunks(patch: str) -> list[Hunk]:
    return lenient_hunks(patch)


def _hunk_header_at(patch: str, file: str, line: int) -> str:
    candidates = [hunk for hunk in parse_hunks(patch) if hunk.file == file]
    for hunk in candidates:
        if hunk.old_start == line:
            return hunk.header
    return candidates[0].header if len(candidates) == 1 else ""
