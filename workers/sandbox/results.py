"""Turn what a finished sandboxed run left behind into a RunResult's fields.

Everything in the output folder was written by untrusted code, after which that code was
killed: files are opened without following symlinks, must be regular and are size-capped.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .events import parse_events
from .pytest_invocation import COVERAGE_DATA_FILE, EVENTS_FILE
from .supervise import TailBuffer
from .types import CollectionError, RunResult, TestResult

EVENTS_LIMIT = 64 * 1024**2
COVERAGE_LIMIT = 1024**3


@dataclass
class Outcomes:
    tests: dict[str, TestResult] = field(default_factory=dict)
    collection_errors: list[CollectionError] = field(default_factory=list)
    missing_tests: list[str] = field(default_factory=list)
    unfinished: str | None = None


def open_sandbox_file(path: Path, limit: int):
    """A binary file object for a regular file the sandbox wrote, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


def read_sandbox_file(path: Path, limit: int) -> bytes | None:
    handle = open_sandbox_file(path, limit)
    if handle is None:
        return None
    with handle:
        data = handle.read(limit + 1)
    return data if len(data) <= limit else None


def read_outcomes(out: Path) -> Outcomes:
    events = parse_events(read_sandbox_file(out / EVENTS_FILE, EVENTS_LIMIT) or b"")
    outcomes = Outcomes(
        tests=events.tests,
        collection_errors=events.collection_errors,
        missing_tests=events.unmatched,
        unfinished=events.unfinished,
    )
    return outcomes


def read_coverage(out: Path, work_prefix: str) -> dict[str, dict[str, list[int]]] | None:
    handle = open_sandbox_file(out / COVERAGE_DATA_FILE, COVERAGE_LIMIT)
    if handle is None:
        return None
    # Work on a private copy: the host's SQLite must only ever open a file nobody else holds.
    with tempfile.TemporaryDirectory(prefix="specloom-coverage-") as private:
        copy = Path(private) / "coverage.sqlite"
        with handle, open(copy, "wb") as target:
            shutil.copyfileobj(handle, target)
        return coverage_by_test(copy, work_prefix)


def coverage_by_test(data_file: Path, work_prefix: str) -> dict[str, dict[str, list[int]]]:
    """{test node id: {path relative to the working copy: sorted line numbers}}."""
    from coverage import CoverageData  # only coverage runs need it

    data = CoverageData(basename=str(data_file))
    data.read()
    prefix = work_prefix.rstrip("/") + "/"
    by_test: dict[str, dict[str, set[int]]] = {}
    for filename in data.measured_files():
        if not filename.startswith(prefix):
            continue
        relative = filename[len(prefix) :]
        for line, contexts in (data.contexts_by_lineno(filename) or {}).items():
            for context in contexts:
                if context:  # the empty context: lines run outside any test
                    by_test.setdefault(context, {}).setdefault(relative, set()).add(line)
    return {
        nodeid: {path: sorted(lines) for path, lines in files.items()}
        for nodeid, files in by_test.items()
    }


def record_outcomes(
    result: RunResult,
    out: Path,
    *,
    stdout: TailBuffer,
    stderr: TailBuffer,
    work_prefix: str,
    coverage: bool,
    oom_kills: int = 0,
) -> None:
    """Fill `result` from the run's output folder and captured output (any backend).

    Memory is "exceeded" when the kernel killed a process of the run for it (the cgroup's, or
    the container's, OOM count), never because of what the tests printed: a test may print
    "MemoryError" on purpose, and an allocation refused under the limit is the test's failure.
    """
    outcomes = read_outcomes(out)
    result.tests = outcomes.tests
    result.collection_errors = outcomes.collection_errors
    result.missing_tests = outcomes.missing_tests
    result.stdout_tail, result.stderr_tail = stdout.text(), stderr.text()
    result.output_truncated = stdout.truncated or stderr.truncated
    result.memory_exceeded = oom_kills > 0
    if outcomes.unfinished not in outcomes.tests:
        result.interrupted_test = outcomes.unfinished
    if coverage and not result.timed_out:
        result.coverage = read_coverage(out, work_prefix)
