"""The environment report of a snapshot: what a whole-suite run with a recipe collected, passed,
failed and skipped, and every file that failed to collect with its first error line."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass, field

from workers.sandbox.types import Outcome, RunResult

_ERROR_LINE = re.compile(r"^E\s+(.+)$", re.MULTILINE)
_EXCEPTION = re.compile(r"\b([A-Z]\w*(?:Error|Exception)|fixture '[^']+' not found)\b")
_MISSING_MODULE = re.compile(r"No module named '([^']+)'")
_MISSING_FIXTURE = re.compile(r"fixture '([^']+)' not found")
PYTEST_NO_TESTS = 5
PYTEST_USAGE_ERROR = 4


@dataclass
class CollectionProblem:
    path: str
    first_line: str


@dataclass
class EnvironmentReport:
    collected: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    collection_errors: list[CollectionProblem] = field(default_factory=list)
    exit_code: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    seconds: float = 0.0
    output_tail: str = ""
    # The test errors' first lines too: an ImportError inside a test is as telling.
    error_lines: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        """Tests ran and some pass: synthesis can work from this environment."""
        return self.passed > 0 and not self.timed_out and not self.memory_exceeded

    def missing_modules(self) -> list[str]:
        found: list[str] = []
        for text in [p.first_line for p in self.collection_errors] + self.error_lines:
            for module in _MISSING_MODULE.findall(text):
                if module not in found:
                    found.append(module)
        return found

    def missing_fixtures(self) -> list[str]:
        found: list[str] = []
        for text in self.error_lines:
            for fixture in _MISSING_FIXTURE.findall(text):
                if fixture not in found:
                    found.append(fixture)
        return found

    def summary(self) -> str:
        """One sentence: what the suite did with this environment."""
        if self.timed_out:
            return "the test suite hit the wall-clock limit"
        if self.memory_exceeded:
            return "the test suite ran out of memory"
        parts = [
            f"{self.collected} tests collected: {self.passed} passed, {self.failed} failed, "
            f"{self.errors} errors, {self.skipped} skipped"
        ]
        if self.collection_errors:
            first = self.collection_errors[0]
            parts.append(
                f"{len(self.collection_errors)} file(s) failed to collect "
                f"(first: {first.path}: {first.first_line})"
            )
        if not self.collected and self.exit_code == PYTEST_USAGE_ERROR:
            parts.append(f"pytest refused its options: {self.output_tail.strip()[-300:]}")
        return "; ".join(parts)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["summary"] = self.summary()
        data["usable"] = self.usable
        return data


def first_error_line(message: str) -> str:
    """The line of a pytest error report that names the error (`E   ModuleNotFoundError: ...`)."""
    lines = _ERROR_LINE.findall(message)
    for line in lines:
        if _EXCEPTION.search(line):
            return line.strip()[:300]
    if lines:
        return lines[0].strip()[:300]
    stripped = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return (stripped[-1] if stripped else "")[:300]


def environment_report(result: RunResult) -> EnvironmentReport:
    outcomes = Counter(test.outcome for test in result.tests.values())
    error_lines = []
    for test in result.tests.values():
        if test.outcome in (Outcome.ERROR, Outcome.FAILED) and test.message:
            line = first_error_line(test.message)
            if line and line not in error_lines:
                error_lines.append(line)
    return EnvironmentReport(
        collected=len(result.tests),
        passed=outcomes[Outcome.PASSED],
        failed=outcomes[Outcome.FAILED],
        errors=outcomes[Outcome.ERROR],
        skipped=outcomes[Outcome.SKIPPED],
        collection_errors=[
            CollectionProblem(path=e.path, first_line=first_error_line(e.message))
            for e in result.collection_errors
        ],
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        memory_exceeded=result.memory_exceeded,
        seconds=round(result.wall_seconds, 2),
        output_tail=(result.stdout_tail or result.stderr_tail)[-2000:],
        error_lines=error_lines[:50],
    )


# Below this share of its test files collecting, or of its tests not erroring, a suite says
# little about the code: the environment (or the source) is the cause of what follows.
_BROKEN_SHARE = 0.5


def suite_shortfall(report: dict) -> str | None:
    """One sentence when most of the suite cannot run in this environment (most test files fail
    to collect, or most tests error), naming the first error; None when it mostly runs."""
    problems = report.get("collection_errors") or []
    files = report.get("test_files") or 0
    if files and len(problems) >= _BROKEN_SHARE * files:
        first = problems[0]
        return (
            f"{len(problems)} of {files} test files fail to collect "
            f"(first: {first.get('path')}: {first.get('first_line')})"
        )
    collected, errors = report.get("collected") or 0, report.get("errors") or 0
    if collected and errors >= _BROKEN_SHARE * collected:
        lines = report.get("error_lines") or []
        first_line = f" (first: {lines[0]})" if lines else ""
        return f"{errors} of {collected} tests error before they run{first_line}"
    return None
