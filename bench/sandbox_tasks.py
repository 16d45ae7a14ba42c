"""The sandbox benchmark's tasks: the hand-made fixture tasks on the sample repositories, a
second task on the same repository, and their solved files in a plain folder for bare pytest."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import uuid
from dataclasses import dataclass, replace
from pathlib import Path

from bench.common import ROOT, measured
from workers import gitstore
from workers.patchcore import PatchPart, split_by_function
from workers.sandbox import EnvironmentSpec, Limits, Snapshot
from workers.sandbox.pytest_invocation import (
    RunPaths,
    pytest_argv,
    sandbox_environment,
    selected_paths,
    write_support_files,
)
from workers.validation import ValidationInput

FIXTURES = ROOT / "tests" / "fixtures" / "tasks"
EXAMPLES = ROOT / "examples" / "repos"
# The second task on a repository: the first task with one reference function already restored
# in its base (a different base commit, the same dependency files).
SECOND_TASK_RESTORES = {
    "ledger_allocation": "ReservationBook._allocation_plan",
    "marktext_toc": "_nest",
}
FORK_BOMB_TEST = """\
import subprocess
import sys
import time

BOMB = (
    "import os\\nwhile True:\\n    try:\\n        os.fork()\\n"
    "    except OSError:\\n        pass\\n"
)


def test_fork_bomb():
    subprocess.Popen([sys.executable, "-c", BOMB], start_new_session=True)
    time.sleep(5)
"""


@dataclass(frozen=True)
class BenchTask:
    name: str
    repository: str
    snapshot: Snapshot
    reference_patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    parts: tuple[PatchPart, ...]
    # base + reference + tests, committed: the files the bare pytest baseline runs.
    solved_with_tests: str

    @property
    def nodeids(self) -> tuple[str, ...]:
        return (*self.fail_to_pass, *self.pass_to_pass)

    def validation_input(
        self, *, reruns: int, interaction: bool, environment: EnvironmentSpec | None = None
    ) -> ValidationInput:
        return ValidationInput(
            snapshot=self.snapshot,
            environment=environment or EnvironmentSpec(),
            reference_patch=self.reference_patch,
            test_patch=self.test_patch,
            fail_to_pass=self.fail_to_pass,
            pass_to_pass=self.pass_to_pass,
            reruns=reruns,
            limits=Limits(),
            reference_parts=self.parts if interaction else (),
        )


# ---------------------------------------------------------------------------------------------
# Tasks on the sample repositories


def import_samples(folder: Path) -> dict[str, Snapshot]:
    """Each sample repository as a one-commit bare repository under `folder`."""
    return {
        name: Snapshot(
            folder / f"{name}.git",
            gitstore.commit_folder(EXAMPLES / name, folder / f"{name}.git", f"Sample {name}"),
        )
        for name in ("ledger", "marktext")
    }


def _parts(git_dir: Path, base: str, reference: str) -> tuple[PatchPart, ...]:
    return tuple(split_by_function(reference, lambda path: gitstore.read_file(git_dir, base, path)))


def _solved_with_tests(git_dir: Path, base: str, reference: str, tests: str) -> str:
    solved = gitstore.commit_patch(git_dir, base, reference, "Reference")
    return gitstore.commit_patch(git_dir, solved, tests, "Reference + tests")


def fixture_task(name: str, samples: dict[str, Snapshot]) -> BenchTask:
    folder = FIXTURES / name
    spec = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    sample = samples[spec["repository"]]
    base = gitstore.commit_patch(
        sample.git_dir, sample.commit, (folder / "base.patch").read_text(), f"Task base: {name}"
    )
    reference = (folder / "reference.patch").read_text()
    tests = (folder / "tests.patch").read_text()
    roles = {role: [] for role in ("FAIL_TO_PASS", "PASS_TO_PASS")}
    for test in spec["tests"]:
        roles[test["intended_role"]].append(test["nodeid"])
    return BenchTask(
        name=name,
        repository=spec["repository"],
        snapshot=Snapshot(sample.git_dir, base),
        reference_patch=reference,
        test_patch=tests,
        fail_to_pass=tuple(roles["FAIL_TO_PASS"]),
        pass_to_pass=tuple(roles["PASS_TO_PASS"]),
        parts=_parts(sample.git_dir, base, reference),
        solved_with_tests=_solved_with_tests(sample.git_dir, base, reference, tests),
    )


def second_task(first: BenchTask) -> BenchTask:
    """Another task on the same repository: a new base commit, the same dependency files."""
    git_dir, base = first.snapshot.git_dir, first.snapshot.commit
    restored = SECOND_TASK_RESTORES[first.name]
    part = next(part for part in first.parts if part.name.endswith(f"::{restored}"))
    new_base = gitstore.commit_patch(git_dir, base, part.patch, f"Task base: {restored} kept")
    solved = gitstore.commit_patch(git_dir, base, first.reference_patch, "Reference")
    reference = gitstore.diff_commits(git_dir, new_base, solved)
    return replace(
        first,
        name=f"{first.name}_without_{restored.rsplit('.', 1)[-1].lstrip('_')}",
        snapshot=Snapshot(git_dir, new_base),
        reference_patch=reference,
        parts=_parts(git_dir, new_base, reference),
    )


# ---------------------------------------------------------------------------------------------
# (a) bare pytest and the sandbox's own pytest command, without isolation


@dataclass(frozen=True)
class PlainCopy:
    """The task's solved files in a plain folder, run with the environment's interpreter."""

    work: Path
    python: Path
    nodeids: tuple[str, ...]

    def environment(self) -> dict[str, str]:
        pythonpath = [str(self.work / "src")] if (self.work / "src").is_dir() else []
        pythonpath.append(str(self.work))
        return {
            "PATH": f"{self.python.parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.work.parent / "home"),
            "LANG": "C.UTF-8",
            "PYTHONPATH": ":".join(pythonpath),
            # As in the sandbox, whose fresh copies never have compiled files to reuse.
            "PYTHONDONTWRITEBYTECODE": "1",
        }

    def bare_pytest(self) -> subprocess.CompletedProcess[str]:
        argv = [str(self.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *self.nodeids]
        return subprocess.run(
            argv,
            cwd=self.work,
            env=self.environment(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    def sandbox_command_without_isolation(self) -> None:
        """The sandbox's pytest command line (plugin, selection, JUnit XML), run directly."""
        scratch = self.work.parent / f"cmd-{uuid.uuid4().hex}"
        folders = {name: scratch / name for name in ("support", "out")}
        for folder in folders.values():
            folder.mkdir(parents=True)
        paths = RunPaths(
            python=str(self.python),
            work=str(self.work),
            support=str(folders["support"]),
            out=str(folders["out"]),
            home=str(self.work.parent / "home"),
            tmp=str(scratch),
        )
        try:
            write_support_files(folders["support"], paths, tests=self.nodeids, coverage=False)
            argv = pytest_argv(
                paths,
                tests=self.nodeids,
                file_args=selected_paths(self.nodeids, self.work),
                coverage=False,
            )
            subprocess.run(
                argv,
                cwd=self.work,
                env=sandbox_environment(paths, has_src_layout=(self.work / "src").is_dir()),
                capture_output=True,
                timeout=300,
                check=False,
            )
        finally:
            shutil.rmtree(scratch)

    def importing(self, modules: str) -> dict[str, float]:
        """One start of the environment's interpreter importing `modules`: wall and CPU."""
        with measured() as spent:
            subprocess.run(
                [str(self.python), "-c", f"import {modules}"],
                env=self.environment(),
                capture_output=True,
                timeout=60,
                check=True,
            )
        return spent


def plain_copy(task: BenchTask, python: Path, folder: Path) -> PlainCopy:
    work = folder / "work"
    gitstore.archive_to(task.snapshot.git_dir, task.solved_with_tests, work)
    (folder / "home").mkdir(exist_ok=True)
    return PlainCopy(work=work, python=python, nodeids=task.nodeids)


def reported_count(output: str) -> int:
    """How many tests a `pytest -q` summary line reports (passed, failed, errors...)."""
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    return sum(int(n) for n in re.findall(r"(\d+) (?:passed|failed|error|errors|skipped)", summary))


def with_fork_bomb(task: BenchTask) -> Snapshot:
    """The task's base with a test that sets off a fork bomb (same dependency files)."""
    patch = "".join(
        [
            "diff --git a/tests/test_zz_bomb.py b/tests/test_zz_bomb.py\n",
            "new file mode 100644\n",
            "--- /dev/null\n",
            "+++ b/tests/test_zz_bomb.py\n",
            f"@@ -0,0 +1,{len(FORK_BOMB_TEST.splitlines())} @@\n",
            *(f"+{line}\n" for line in FORK_BOMB_TEST.splitlines()),
        ]
    )
    commit = gitstore.commit_patch(task.snapshot.git_dir, task.snapshot.commit, patch, "Bomb")
    return Snapshot(task.snapshot.git_dir, commit)
