"""Bare git repositories on disk: import, resolve, read, and commit patches without a work tree.

Plain Python (no Django): the repository service, the sandbox and the synthesis engine share it.
Commits made here use a fixed identity and date, so the same inputs give the same commit ids.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Specloom",
    "GIT_AUTHOR_EMAIL": "specloom@localhost",
    "GIT_COMMITTER_NAME": "Specloom",
    "GIT_COMMITTER_EMAIL": "specloom@localhost",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}

# Never imported into a stored repository from a plain folder or an archive.
JUNK_PATTERNS = (
    ".venv/",
    "venv/",
    "__pycache__/",
    "*.py[cod]",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".tox/",
    "*.egg-info/",
    "build/",
    "dist/",
    ".coverage",
    ".DS_Store",
)


class GitError(RuntimeError):
    def __init__(self, args: list[str], returncode: int, stderr: str):
        self.git_args = args
        self.returncode = returncode
        self.stderr = stderr.strip()
        super().__init__(f"git {' '.join(args[:3])} failed ({returncode}): {self.stderr[-2000:]}")


class UnknownCommit(ValueError):
    pass


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": tempfile.gettempdir(),
        "LANG": "C.UTF-8",
        # Ignore the user's and the system's git configuration: hooks, aliases, credentials.
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        **GIT_IDENTITY,
    }
    if extra:
        env.update(extra)
    return env


def git(
    *args: str,
    git_dir: Path | None = None,
    cwd: Path | None = None,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> str:
    command = ["git"]
    if git_dir is not None:
        command += ["--git-dir", str(git_dir)]
    command += list(args)
    completed = subprocess.run(
        command,
        cwd=cwd,
        input=input,
        capture_output=True,
        env=_env(env),
        timeout=timeout,
        check=False,
    )
    if completed.returncode != 0:
        raise GitError(list(args), completed.returncode, completed.stderr.decode(errors="replace"))
    return completed.stdout.decode(errors="replace")


def is_git_worktree_root(path: Path) -> bool:
    """True only for the top of a work tree, never for a folder inside someone else's."""
    return (path / ".git").exists()


def is_bare_repository(path: Path) -> bool:
    return (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir()


def clone_bare(source: str, dest: Path) -> None:
    git("clone", "--bare", "--quiet", "--no-hardlinks", "--", source, str(dest))


def clone_bare_limited(
    source: str,
    dest: Path,
    *,
    options: list[str],
    env: dict[str, str],
    max_bytes: int,
    timeout: float = 600,
) -> None:
    """`git clone --bare` that is stopped once `dest` grows past `max_bytes` or the timeout
    passes (a hostile or huge repository must not fill the disk)."""
    command = ["git", *options, "clone", "--bare", "--quiet", "--no-hardlinks", "--", source]
    process = subprocess.Popen(
        [*command, str(dest)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(env),
    )
    deadline = time.monotonic() + timeout
    why = ""
    while process.poll() is None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=0.5)
        if _tree_bytes(dest) > max_bytes:
            why = f"the repository is larger than {max_bytes} bytes"
        elif time.monotonic() > deadline:
            why = f"the clone took longer than {int(timeout)} s"
        if why:
            process.kill()
            process.wait()
            break
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if why or process.returncode != 0:
        raise GitError(["clone", source], process.returncode or -9, why or stderr)


def _tree_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def init_bare(dest: Path) -> None:
    git("init", "--bare", "--quiet", "--initial-branch=main", str(dest))


def commit_folder(source_dir: Path, dest: Path, message: str) -> str:
    """Make `dest` a new bare repository whose single commit holds the files of `source_dir`."""
    init_bare(dest)
    exclude = dest / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    exclude.write_text("\n".join(JUNK_PATTERNS) + "\n")
    with tempfile.TemporaryDirectory() as scratch:
        index_env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        git(
            "--work-tree",
            str(source_dir),
            "add",
            "--all",
            ".",
            git_dir=dest,
            cwd=source_dir,
            env=index_env,
        )
        tree = git("write-tree", git_dir=dest, env=index_env).strip()
    commit = git("commit-tree", tree, "-m", message, git_dir=dest).strip()
    git("update-ref", "refs/heads/main", commit, git_dir=dest)
    git("symbolic-ref", "HEAD", "refs/heads/main", git_dir=dest)
    return commit


def resolve_commit(git_dir: Path, rev: str = "HEAD") -> str:
    try:
        return git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", git_dir=git_dir).strip()
    except GitError:
        raise UnknownCommit(f"{rev!r} is not a commit of this repository") from None


def list_files(git_dir: Path, commit: str) -> list[str]:
    output = git("ls-tree", "-r", "-z", "--name-only", commit, git_dir=git_dir)
    return [name for name in output.split("\0") if name]


def read_file(git_dir: Path, commit: str, path: str) -> str | None:
    try:
        return git("show", f"{commit}:{path}", git_dir=git_dir)
    except GitError:
        return None


def archive_to(git_dir: Path, commit: str, dest: Path) -> None:
    """Write the tree of `commit` into the folder `dest` (created if missing)."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit],
        capture_output=True,
        env=_env(),
        check=False,
    )
    if archive.returncode != 0:
        raise GitError(["archive", commit], archive.returncode, archive.stderr.decode())
    extract = subprocess.run(
        ["tar", "-x", "-C", str(dest)], input=archive.stdout, capture_output=True, check=False
    )
    if extract.returncode != 0:
        raise RuntimeError(f"extracting {commit} failed: {extract.stderr.decode()[-2000:]}")


@contextlib.contextmanager
def scratch_index(git_dir: Path, commit: str) -> Iterator[dict[str, str]]:
    """The environment of a throw-away index holding `commit`, for `git(..., env=...)`.

    Objects written under it (the blobs `apply --cached` makes, the trees `write-tree` makes)
    go to a throw-away object directory; the stored repository is only read, through git's
    alternates. So whatever a patch brings (an agent's, a model's) never enters a stored
    repository; `commit_patch` alone keeps what it made, and only our own patches go there.
    Only git's plumbing runs here: no work tree, so no hooks, filters or checkout.
    """
    with tempfile.TemporaryDirectory(prefix="specloom-index-") as scratch:
        objects = Path(scratch) / "objects"
        objects.mkdir()
        env = {
            "GIT_INDEX_FILE": str(Path(scratch) / "index"),
            "GIT_OBJECT_DIRECTORY": str(objects),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(Path(git_dir).resolve() / "objects"),
        }
        git("read-tree", commit, git_dir=git_dir, env=env)
        yield env


def apply_to_index(
    git_dir: Path, env: dict[str, str], patch: bytes, *, recount: bool = True
) -> None:
    """`git apply --cached` into a `scratch_index`, with the sandbox's options; GitError if not.

    `--recount` forgives wrong hunk line counts, as the sandbox does when it applies patches.
    """
    options = ["--recount"] if recount else []
    git(
        "apply",
        "--cached",
        *options,
        "--whitespace=nowarn",
        "-",
        git_dir=git_dir,
        env=env,
        input=patch,
        timeout=120,
    )


def commit_patch(git_dir: Path, parent: str, patch: str, message: str) -> str:
    """Apply a unified diff on top of `parent` and commit it, without touching a work tree.

    The commit id depends only on the parent, the patch and the message. For our own patches
    only (the procedural engine's base states): the new commit and its objects are kept.
    """
    with scratch_index(git_dir, parent) as env:
        if patch.strip():
            apply_to_index(git_dir, env, patch.encode(), recount=False)
        tree = git("write-tree", git_dir=git_dir, env=env).strip()
        commit = git("commit-tree", tree, "-p", parent, "-m", message, git_dir=git_dir, env=env)
        _keep_objects(Path(env["GIT_OBJECT_DIRECTORY"]), Path(git_dir) / "objects")
    return commit.strip()


def _keep_objects(scratch: Path, objects: Path) -> None:
    # Loose objects are named by their content, so copying them is all "keeping" takes.
    for source in scratch.glob("??/*"):
        target = objects / source.parent.name / source.name
        if not target.exists():
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(source, target)


def diff_commits(git_dir: Path, old: str, new: str) -> str:
    return git("diff", "--no-color", "--no-ext-diff", old, new, git_dir=git_dir)


def remove_repository(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
