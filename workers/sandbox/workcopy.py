"""Working copies: the files of a snapshot, materialised in a folder of their own.

Files are checked out through a throw-away index (`read-tree -u`) rather than `git archive`,
because archive honours `export-ignore` attributes and would silently drop e.g. a repository's
tests/.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from .errors import SandboxError
from .types import Snapshot

_GIT_TIMEOUT_SECONDS = 300


def git_environment(home: Path) -> dict[str, str]:
    """A clean environment for git: no user or system config may change what a checkout holds."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }


def git(snapshot: Snapshot, *args: str, env: dict[str, str]) -> str:
    # safe.directory: stored repositories may belong to the application's user, not to us.
    argv = ["git", "-c", "safe.directory=*", f"--git-dir={snapshot.git_dir}", *args]
    proc = subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=_GIT_TIMEOUT_SECONDS, check=False
    )
    if proc.returncode != 0:
        raise SandboxError(f"`{' '.join(argv)}` failed: {proc.stderr.strip()}")
    return proc.stdout


# (git dir, full commit id) pairs already verified: an object id names the same commit for
# ever, so each run need not ask git again (a process each, on every run's critical path).
_VERIFIED_COMMITS: set[tuple[str, str]] = set()
_FULL_COMMIT_ID = re.compile(r"[0-9a-f]{40}")


def resolve_commit(snapshot: Snapshot, env: dict[str, str]) -> str:
    verified = (str(snapshot.git_dir), snapshot.commit)
    if verified in _VERIFIED_COMMITS:
        return snapshot.commit
    # --end-of-options: a "commit" starting with "-" must not be read as an option.
    out = git(
        snapshot,
        "rev-parse",
        "--verify",
        "--end-of-options",
        f"{snapshot.commit}^{{commit}}",
        env=env,
    ).strip()
    if out == snapshot.commit and _FULL_COMMIT_ID.fullmatch(out):
        if len(_VERIFIED_COMMITS) > 10_000:
            _VERIFIED_COMMITS.clear()
        _VERIFIED_COMMITS.add(verified)
    return out


def materialize_snapshot(snapshot: Snapshot, dest: Path, *, scratch: Path) -> None:
    """Write the files of `snapshot` into the empty folder `dest` (scratch holds the index)."""
    env = git_environment(scratch) | {"GIT_INDEX_FILE": str(scratch / "checkout-index")}
    commit = resolve_commit(snapshot, env)
    # One process reads the tree into the throw-away index and checks every file out (-u).
    git(snapshot, f"--work-tree={dest}", "read-tree", "--reset", "-u", commit, env=env)
    (scratch / "checkout-index").unlink(missing_ok=True)


def remove_paths(work: Path, paths: tuple[str, ...]) -> None:
    """Delete files or folders given relative to the working copy, never anything outside it."""
    root = work.resolve()
    for raw in paths:
        relative = PurePosixPath(raw)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            raise SandboxError(
                f"remove_paths entry must be a relative path inside the copy: {raw!r}"
            )
        target = root.joinpath(*relative.parts)
        # A symlinked parent folder could point anywhere on the host.
        if not target.parent.resolve().is_relative_to(root):
            raise SandboxError(f"remove_paths entry leads outside the working copy: {raw!r}")
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)


def chown_tree(path: Path, uid: int, gid: int) -> None:
    """Give a tree to the sandbox user; symlinks are changed themselves, never followed.

    Children before their folder and `path` last: until a folder is the new owner's, nothing
    that runs as that user (a warm jail waiting for its run, warm.py) can change what is in it,
    so no path this walks through can be swapped for a link under it.
    """
    for folder, dirnames, filenames in os.walk(path, topdown=False):
        for name in dirnames + filenames:
            os.lchown(os.path.join(folder, name), uid, gid)
    os.lchown(path, uid, gid)


def remove_tree(path: Path) -> None:
    """Remove a run folder whatever the sandboxed code did to its permissions."""
    if not (path.exists() or path.is_symlink()):
        return
    if os.geteuid() != 0 and not path.is_symlink():
        # Without root, a folder the sandboxed code made unreadable would stop rmtree: open
        # every folder up, top-down, before walking into it.
        os.chmod(path, 0o700)
        for folder, dirnames, _files in os.walk(path):
            for name in dirnames:
                child = os.path.join(folder, name)
                if not os.path.islink(child):
                    os.chmod(child, 0o700)
    if path.is_symlink():
        path.unlink()
    else:
        shutil.rmtree(path)
