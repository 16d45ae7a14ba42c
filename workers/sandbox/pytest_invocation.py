"""The pytest command line, environment and support files of one run, shared by both backends.

Paths are as the test process sees them (host paths for `process`, container paths for
`docker`); the backends only decide where the folders live.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

PLUGIN_FILE = Path(__file__).with_name("specloom_sandbox_plugin.py")
PLUGIN_MODULE = PLUGIN_FILE.stem
SELECTION_FILE = "select.json"
COVERAGE_RC_FILE = "coveragerc"
EVENTS_FILE = "events.jsonl"
COVERAGE_DATA_FILE = "coverage.sqlite"


@dataclass(frozen=True)
class RunPaths:
    python: str  # the environment's interpreter
    work: str  # the working copy; also pytest's rootdir
    support: str  # read-only for the tests: plugin, selection, coverage config
    out: str  # written by the tests' process: events, coverage data
    home: str
    tmp: str

    @property
    def env_bin(self) -> str:
        return str(PurePosixPath(self.python).parent)


def selected_paths(tests: tuple[str, ...], work: Path) -> list[str]:
    """The files (or folders) that hold the requested ids and exist in the working copy.

    Collection is limited to them; the plugin then keeps the exact ids. An id whose file is
    missing simply matches nothing and is reported as missing.
    """
    paths = []
    for nodeid in tests:
        path = nodeid.split("::", 1)[0]
        relative = PurePosixPath(path)
        if relative.is_absolute() or ".." in relative.parts or not relative.parts:
            continue
        if (work / path).exists() and path not in paths:
            paths.append(path)
    return paths


def write_support_files(
    support: Path, paths: RunPaths, *, tests: tuple[str, ...] | None, coverage: bool
) -> None:
    shutil.copyfile(PLUGIN_FILE, support / PLUGIN_FILE.name)
    if tests is not None:
        (support / SELECTION_FILE).write_text(json.dumps(list(tests)), encoding="utf-8")
    if coverage:
        (support / COVERAGE_RC_FILE).write_text(coverage_rc(paths), encoding="utf-8")
    for written in support.iterdir():
        written.chmod(0o644)


def coverage_rc(paths: RunPaths) -> str:
    # Our own configuration replaces the repository's ([tool.coverage], .coveragerc): its
    # `source`, `omit` or `parallel` settings would change what is measured and where it goes.
    return (
        "[run]\n"
        f"data_file = {paths.out}/{COVERAGE_DATA_FILE}\n"
        f"include = {paths.work}/*\n"
        "branch = False\n"
        "parallel = False\n"
        "disable_warnings = no-data-collected\n"
    )


def pytest_argv(
    paths: RunPaths,
    *,
    tests: tuple[str, ...] | None,
    file_args: list[str],
    coverage: bool,
    addopts: str | None = None,
    options: tuple[str, ...] = (),
) -> list[str]:
    runner = [paths.python, "-m"]
    if coverage:
        rcfile = f"{paths.support}/{COVERAGE_RC_FILE}"
        runner += ["coverage", "run", f"--rcfile={rcfile}", "-m"]
    argv = [
        *runner,
        "pytest",
        "-p",
        PLUGIN_MODULE,
        # The repository's cache (last failed, step-wise) must not change what a run does.
        "-p",
        "no:cacheprovider",
        # Node ids are relative to the rootdir: pin it so they do not depend on the arguments.
        f"--rootdir={paths.work}",
        # A module that fails to import must not stop the other modules from running.
        "--continue-on-collection-errors",
        f"--specloom-events={paths.out}/{EVENTS_FILE}",
    ]
    if addopts is not None:
        # Replaces the repository's addopts (the recipe keeps what keeps results meaningful).
        argv += ["-o", f"addopts={addopts}"]
    argv += list(options)
    if tests is not None:
        argv.append(f"--specloom-select={paths.support}/{SELECTION_FILE}")
    # Absolute paths: a file whose name starts with "-" must not read as an option.
    argv += [f"{paths.work}/{path}" for path in file_args]
    return argv


def sandbox_environment(
    paths: RunPaths, *, has_src_layout: bool, extra: tuple[tuple[str, str], ...] = ()
) -> dict[str, str]:
    """The whole environment of the tests: built from scratch, nothing of the worker's; the
    recipe's variables (`extra`) never replace the sandbox's own."""
    pythonpath = [f"{paths.work}/src"] if has_src_layout else []
    pythonpath += [paths.work, paths.support]
    return dict(extra) | {
        "PATH": f"{paths.env_bin}:/usr/local/bin:/usr/bin:/bin",
        "HOME": paths.home,
        "TMPDIR": paths.tmp,
        "LANG": "C.UTF-8",
        "PYTHONPATH": ":".join(pythonpath),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
