"""Evaluation of an agent's final patch against a task's hidden tests.

Plain Python (no Django). Given a base snapshot, the trajectory's final patch, the task's test
patch, the FAIL_TO_PASS / PASS_TO_PASS lists and which tests verify which spec, it

1. checks that both patches apply on the base, in a scratch git index of the stored repository
   (no working copy, no environment, no tests run), so a patch written for another repository
   ends as "did not apply" in milliseconds;
2. runs FAIL_TO_PASS and PASS_TO_PASS in the sandbox with the patch and the tests applied;
3. runs the tests that did not pass once more (``rerun_failures``): a test whose outcome flips
   is reported as flaky and counts as passed, so a model is not blamed for a flaky test;
4. decides per spec whether it is satisfied (every one of its evaluated tests passed) and
   whether the task is resolved ``full`` (every test passed), ``partial`` (some FAIL_TO_PASS
   test passed) or ``none``;
5. names the files of the patch that are tests, conftest or test configuration.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath

from workers import gitstore
from workers.patchcore import PatchParseError, parse_patch
from workers.patchcore.lenient import lenient_files, lenient_lines, patch_paths, strip_prefix
from workers.sandbox.patches import describe_failure
from workers.sandbox.types import (
    EnvironmentSpec,
    Limits,
    Outcome,
    PatchFailure,
    RunRequest,
    RunResult,
    Snapshot,
)
from workers.validation import Progress, Runner

FULL = "full"
PARTIAL = "partial"
NONE = "none"
MISSING = "missing"

ReadBase = Callable[[str], str | None]

_TEST_FOLDERS = {"test", "tests", "testing"}
_TEST_CONFIG_FILES = {"pytest.ini", ".pytest.ini", "tox.ini", "noxfile.py"}
# Sections of shared configuration files that configure pytest.
_PYTEST_SECTION = {
    "setup.cfg": re.compile(r"^(tool:pytest|pytest)\b"),
    "pyproject.toml": re.compile(r"^tool\.pytest\b"),
}
_SECTION_HEADER = re.compile(r"^\s*\[+\s*([^\]]+?)\s*\]+\s*$")


@dataclass(frozen=True)
class EvaluationInput:
    snapshot: Snapshot
    environment: EnvironmentSpec
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...] = ()
    # (spec key, the ids of its tests), for every spec that has tests.
    spec_tests: tuple[tuple[str, tuple[str, ...]], ...] = ()
    limits: Limits = field(default_factory=Limits)
    rerun_failures: int = 1
    # Check in a scratch git index that the patches apply before the sandbox runs anything:
    # milliseconds instead of an environment build for a patch made for another tree. With the
    # environment known to be built (grading a task again and again) the sandbox's own
    # `git apply` finds the same failure as fast, and the check is only overhead.
    check_first: bool = True


@dataclass
class EvaluationOutcome:
    patch_applied: bool
    patch_error: str
    resolved: str
    # nodeid -> passed | failed | error | skipped | missing (not collected or not run)
    tests: dict[str, str]
    spec_satisfied: dict[str, bool]
    changed_files: list[str]
    touched_test_files: list[str]
    # nodeid -> its outcome in each run, for tests whose outcome flipped
    flaky: dict[str, list[str]]
    # Why the run itself fell short (time or memory limit, collection errors), if it did.
    problems: list[str]
    runs: int
    seconds: float
    environment_key: str = ""

    @property
    def passed(self) -> list[str]:
        return [nodeid for nodeid, outcome in self.tests.items() if outcome == Outcome.PASSED]


class PatchNotText(ValueError):
    pass


def is_test_path(path: str) -> bool:
    """A test module, a file inside a tests folder, a conftest.py or a pytest-only config."""
    pure = PurePosixPath(path)
    name = pure.name
    if name == "conftest.py" or name in _TEST_CONFIG_FILES:
        return True
    if name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py")):
        return True
    return any(part in _TEST_FOLDERS for part in pure.parts[:-1])


def _section_before(lines: list[str], line_number: int) -> str:
    """The [section] in force at 1-based `line_number` of an INI/TOML file."""
    section = ""
    for text in lines[: max(0, line_number - 1)]:
        if header := _SECTION_HEADER.match(text):
            section = header.group(1)
    return section


def _touches_pytest_section(patched, path: str, read_base: ReadBase | None) -> bool:
    pattern = _PYTEST_SECTION[PurePosixPath(path).name]
    base = (read_base(path) if read_base and not patched.is_added_file else None) or ""
    base_lines = base.splitlines()
    for hunk in patched:
        section = _section_before(base_lines, hunk.source_start) if base_lines else ""
        for line in hunk:
            if header := _SECTION_HEADER.match(line.value):
                section = header.group(1)
                if line.is_context:
                    continue
            if (line.is_added or line.is_removed) and pattern.match(section):
                return True
    return False


def touched_test_files(patch: str, read_base: ReadBase | None = None) -> list[str]:
    """The files of `patch` that are tests, conftest or test configuration.

    setup.cfg and pyproject.toml count only when a changed line lies in their pytest section,
    which needs the base file (`read_base(path)`) to know the section a hunk starts in.
    """
    if not patch.strip():
        return []
    try:
        patched_files = list(parse_patch(patch))
    except PatchParseError:
        return _lenient_touched(patch)
    touched: list[str] = []
    for patched in patched_files:
        names = [strip_prefix(patched.source_file or ""), strip_prefix(patched.target_file or "")]
        for path in dict.fromkeys(n for n in names if n and n != "/dev/null"):
            if path in touched:
                continue
            if is_test_path(path) or (
                PurePosixPath(path).name in _PYTEST_SECTION
                and _touches_pytest_section(patched, path, read_base)
            ):
                touched.append(path)
    return touched


def _lenient_touched(patch: str) -> list[str]:
    """touched_test_files for a diff unidiff cannot parse: shared config files count when a
    changed line mentions pytest (their sections cannot be placed without hunk lines)."""
    touched = [path for path in lenient_files(patch) if is_test_path(path)]
    for path, _sign, text in lenient_lines(patch):
        if PurePosixPath(path).name in _PYTEST_SECTION and "pytest" in text and path not in touched:
            touched.append(path)
    return touched


def check_patches(snapshot: Snapshot, patches: tuple[str, ...]) -> PatchFailure | None:
    """Apply `patches` in order to a scratch index of the snapshot; describe the first failure.

    Uses the same `git apply` options as the sandbox, against the stored (bare) repository, so
    a patch that cannot apply is found without building an environment or a working copy.
    """
    with gitstore.scratch_index(snapshot.git_dir, snapshot.commit) as env:
        for index, patch in enumerate(patches):
            if not patch.strip():
                continue
            try:
                data = patch.encode("utf-8", errors="surrogateescape")
            except UnicodeEncodeError as exc:
                return PatchFailure(index, "", "", f"the patch is not valid text: {exc}")
            try:
                gitstore.apply_to_index(snapshot.git_dir, env, data)
            except gitstore.GitError as exc:
                return describe_failure(index, patch, exc.stderr)
    return None


def _failure_text(failure: PatchFailure, *, names: tuple[str, ...]) -> str:
    which = names[failure.patch_index] if failure.patch_index < len(names) else "a patch"
    where = " ".join(part for part in (failure.file, failure.hunk) if part)
    head = f"{which} does not apply" + (f" ({where})" if where else "")
    return f"{head}: {failure.message}".strip()


def _outcomes(result: RunResult, nodeids: list[str]) -> dict[str, str]:
    return {
        nodeid: str(result.tests[nodeid].outcome) if nodeid in result.tests else MISSING
        for nodeid in nodeids
    }


def _problems(result: RunResult, label: str) -> list[str]:
    problems = []
    if result.timed_out:
        problems.append(f"{label}: the run hit the wall-clock limit")
    if result.memory_exceeded:
        problems.append(f"{label}: the run hit the memory limit")
    for error in result.collection_errors:
        problems.append(f"{label}: collection error in {error.path}: {error.message[:300]}")
    return problems


def resolution(outcomes: Mapping[str, str], fail_to_pass: tuple[str, ...]) -> str:
    if not outcomes:
        return NONE
    if all(outcome == Outcome.PASSED for outcome in outcomes.values()):
        return FULL
    if any(outcomes.get(nodeid) == Outcome.PASSED for nodeid in fail_to_pass):
        return PARTIAL
    return NONE


def spec_satisfaction(
    outcomes: Mapping[str, str], spec_tests: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict[str, bool]:
    """A spec is satisfied when every one of its evaluated tests passed; specs none of whose
    tests were evaluated are left out (unknown, not vacuously satisfied)."""
    satisfied = {}
    for key, nodeids in spec_tests:
        evaluated = [nodeid for nodeid in nodeids if nodeid in outcomes]
        if evaluated:
            satisfied[key] = all(outcomes[nodeid] == Outcome.PASSED for nodeid in evaluated)
    return satisfied


def evaluate_patch(
    inp: EvaluationInput, runner: Runner, progress: Progress | None = None
) -> EvaluationOutcome:
    started = time.monotonic()
    progress = progress or (lambda percent, message: None)
    nodeids = list(dict.fromkeys([*inp.fail_to_pass, *inp.pass_to_pass]))

    def outcome(**values) -> EvaluationOutcome:
        values.setdefault("seconds", round(time.monotonic() - started, 3))
        return EvaluationOutcome(**values)

    def read_base(path: str) -> str | None:
        return gitstore.read_file(inp.snapshot.git_dir, inp.snapshot.commit, path)

    if inp.patch.strip() and not inp.patch.endswith("\n"):
        # Model output (SWE-bench predictions among it) often drops the diff's last newline,
        # which git calls a corrupt patch; the diff means the same with it.
        inp = replace(inp, patch=inp.patch + "\n")

    not_applied = {
        "patch_applied": False,
        "resolved": NONE,
        "tests": {},
        # A patch that cannot be used satisfies nothing it was asked for.
        "spec_satisfied": {key: False for key, tests in inp.spec_tests if tests},
        "flaky": {},
        "problems": [],
        "runs": 0,
    }
    try:
        changed = patch_paths(inp.patch)
        touched = touched_test_files(inp.patch, read_base)
    except PatchParseError as exc:
        return outcome(
            patch_error=f"the final patch is not a unified diff: {exc}",
            changed_files=[],
            touched_test_files=[],
            **not_applied,
        )
    if inp.patch.strip() and not changed:
        return outcome(
            patch_error="the final patch changes no file (it is not a unified diff)",
            changed_files=[],
            touched_test_files=[],
            **not_applied,
        )

    progress(5, "checking that the patches apply")
    names = ("the final patch", "the task's test patch")
    failure = check_patches(inp.snapshot, (inp.patch, inp.test_patch)) if inp.check_first else None
    if failure is not None:
        error = _failure_text(failure, names=names)
        if failure.patch_index == 0 and not failure.file and changed:
            # git names no file for a corrupt patch; say which files it was meant for.
            error += f" (the patch changes {', '.join(changed[:5])})"
        return outcome(
            patch_error=error,
            changed_files=changed,
            touched_test_files=touched,
            **{**not_applied, "patch_applied": failure.patch_index != 0},
        )

    if not nodeids:
        return outcome(
            patch_error="",
            changed_files=changed,
            touched_test_files=touched,
            **{
                **not_applied,
                "patch_applied": True,
                "spec_satisfied": {},
                "problems": ["the task has no FAIL_TO_PASS or PASS_TO_PASS test to run"],
            },
        )
    patches = tuple(p for p in (inp.patch, inp.test_patch) if p.strip())

    def run_tests(tests: list[str]) -> RunResult:
        return runner(
            RunRequest(
                snapshot=inp.snapshot,
                environment=inp.environment,
                patches=patches,
                tests=tuple(tests),
                limits=inp.limits,
            )
        )

    problems: list[str] = []
    progress(15, f"running {len(nodeids)} tests")
    result = run_tests(nodeids)
    runs = 1
    if result.patch_failure is not None:
        return outcome(
            patch_error=_failure_text(result.patch_failure, names=names),
            changed_files=changed,
            touched_test_files=touched,
            environment_key=result.environment_key,
            **{**not_applied, "patch_applied": result.patch_failure.patch_index != 0, "runs": 1},
        )
    problems += _problems(result, "run 1")
    outcomes = _outcomes(result, nodeids)
    history = {nodeid: [value] for nodeid, value in outcomes.items()}

    for attempt in range(2, 2 + max(0, inp.rerun_failures)):
        failing = [n for n, value in outcomes.items() if value != Outcome.PASSED]
        if not failing:
            break
        progress(60, f"running {len(failing)} tests that did not pass again")
        again = run_tests(failing)
        runs += 1
        problems += _problems(again, f"run {attempt}")
        for nodeid, value in _outcomes(again, failing).items():
            history[nodeid].append(value)
            if value == Outcome.PASSED:
                outcomes[nodeid] = value

    flaky = {
        nodeid: values
        for nodeid, values in history.items()
        if len({value == Outcome.PASSED for value in values}) > 1
    }
    progress(100, "evaluated")
    return outcome(
        patch_applied=True,
        patch_error="",
        resolved=resolution(outcomes, inp.fail_to_pass),
        tests=outcomes,
        spec_satisfied=spec_satisfaction(outcomes, inp.spec_tests),
        changed_files=changed,
        touched_test_files=touched,
        flaky=flaky,
        problems=problems,
        runs=runs,
        environment_key=result.environment_key,
    )
