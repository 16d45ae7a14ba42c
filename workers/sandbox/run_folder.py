"""The folder of one run and the working copy inside it, prepared the same way for every backend.

<run>/work     the working copy (snapshot, minus removed paths, plus patches); owned by the
               sandbox user, pytest's rootdir
<run>/home     HOME and <run>/tmp TMPDIR of the tests; owned by the sandbox user
<run>/out      the events and coverage data written by the tests; owned by the sandbox user
<run>/support  the pytest plugin, the selected ids, the coverage config; read-only for the tests
<run>/scratch  the checkout's index and the patch files
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from .patches import apply_patches
from .pytest_invocation import (
    RunPaths,
    pytest_argv,
    sandbox_environment,
    selected_paths,
    write_support_files,
)
from .types import PatchFailure, RunRequest
from .workcopy import chown_tree, materialize_snapshot, remove_paths, remove_tree

SANDBOX_FOLDERS = ("work", "home", "tmp", "out", "support")
_WRITTEN_BY_TESTS = ("work", "home", "tmp", "out")


@dataclass(frozen=True)
class RunFolder:
    path: Path

    def folder(self, name: str) -> Path:
        return self.path / name

    @property
    def work(self) -> Path:
        return self.path / "work"

    @property
    def out(self) -> Path:
        return self.path / "out"

    @property
    def support(self) -> Path:
        return self.path / "support"

    @property
    def scratch(self) -> Path:
        return self.path / "scratch"

    def create(self) -> None:
        self.path.mkdir(mode=0o711)
        self.path.chmod(0o711)  # whatever the umask: the jail's user must traverse it
        for name in (*SANDBOX_FOLDERS, "scratch"):
            self.folder(name).mkdir(mode=0o700)
        # The sandbox user reads the plugin and, when patches are applied as that user, the
        # patch files.
        self.support.chmod(0o755)
        self.scratch.chmod(0o711)

    def paths(self, *, python: str, mount_point: str | None = None) -> RunPaths:
        """The run's paths as the tests see them: on the host, or under a container's mount."""
        base = mount_point or str(self.path)
        return RunPaths(python=python, **{name: f"{base}/{name}" for name in SANDBOX_FOLDERS})


def add_generated_files(work: Path, generated: Path) -> None:
    """Copy the build's generated files in, never over a file of the snapshot."""
    if not generated.is_dir():
        return
    for source in sorted(generated.rglob("*")):
        if not source.is_file() or source.is_symlink():
            continue
        relative = source.relative_to(generated)
        if not _plain_folders_to(work, relative.parent) or (work / relative).is_symlink():
            continue
        target = work / relative
        if not target.exists():
            shutil.copyfile(source, target)


def _plain_folders_to(work: Path, relative: Path) -> bool:
    """Make the folders down to `relative`; False if one is a symlink (the snapshot's files may
    hold links pointing anywhere) or not a folder."""
    folder = work
    for part in relative.parts:
        folder = folder / part
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            return False
        folder.mkdir(exist_ok=True)
    return True


@dataclass
class Prepared:
    patch_failure: PatchFailure | None = None
    # Files holding the requested ids (empty: the whole suite, or nothing when ids were given).
    file_args: list[str] = field(default_factory=list)
    has_src_layout: bool = False

    def nothing_to_run(self, request: RunRequest) -> bool:
        return request.tests is not None and not self.file_args

    def pytest_command(
        self, run: RunFolder, paths: RunPaths, request: RunRequest
    ) -> tuple[list[str], dict[str, str]]:
        """The tests' argv and whole environment (any backend), their support files written."""
        write_support_files(run.support, paths, tests=request.tests, coverage=request.coverage)
        argv = pytest_argv(
            paths,
            tests=request.tests,
            file_args=self.file_args,
            coverage=request.coverage,
            addopts=request.environment.pytest_addopts,
            options=request.environment.pytest_options,
        )
        env = sandbox_environment(
            paths, has_src_layout=self.has_src_layout, extra=request.environment.environment
        )
        return argv, env


def prepare_working_copy(
    run: RunFolder,
    request: RunRequest,
    *,
    sandbox_user: tuple[int, int] | None,
    generated: Path | None = None,
    patch_user: tuple[int, int] | None = None,
) -> Prepared:
    """The run's working copy: the snapshot, minus removed paths, plus the files the
    environment's build generated (`generated`, where the snapshot lacks them), plus patches.

    Patches are applied as `patch_user` (default: the sandbox user). A warm jail (warm.py) runs
    as the sandbox user while the copy is prepared: another user applies the patches then, and
    the folders become the sandbox user's only once the copy is whole.
    """
    patch_user = patch_user or sandbox_user

    def checkout() -> None:
        materialize_snapshot(request.snapshot, run.work, scratch=run.scratch)
        if generated is not None:
            add_generated_files(run.work, generated)
        remove_paths(run.work, request.remove_paths)
        if patch_user is not None:
            for name in _WRITTEN_BY_TESTS:
                chown_tree(run.folder(name), *patch_user)

    def restore() -> None:
        # Back to the unpatched files: a fresh, empty working copy checked out again.
        remove_tree(run.work)
        run.work.mkdir(mode=0o700)
        checkout()

    checkout()
    failure = apply_patches(
        run.work, request.patches, scratch=run.scratch, run_as=patch_user, restore=restore
    )
    if failure is not None:
        return Prepared(patch_failure=failure)
    if sandbox_user is not None and patch_user != sandbox_user:
        for name in _WRITTEN_BY_TESTS:
            chown_tree(run.folder(name), *sandbox_user)
    return Prepared(
        file_args=selected_paths(request.tests, run.work) if request.tests is not None else [],
        # Decided after the patches: a patch may create src/.
        has_src_layout=(run.work / "src").is_dir(),
    )
