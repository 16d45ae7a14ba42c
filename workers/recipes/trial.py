"""Finding a recipe that works: try the likely one, read what the try reports, try the next.

Plain Python: `try_recipe` (given by the caller) builds the environment in the sandbox and runs
the whole suite once; this module decides what to try next, when to stop, which attempt to keep
and how to say, in one sentence each, what is wrong and how to fix it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from workers.recipes.infer import distribution_of, next_recipe
from workers.recipes.recipe import Recipe
from workers.recipes.report import PYTEST_NO_TESTS, PYTEST_USAGE_ERROR, EnvironmentReport

MAX_ATTEMPTS = 4
_CANNOT_BE_HAD = re.compile(r"cannot be had: ([A-Za-z0-9][A-Za-z0-9._\-\[\]]*)")
_CONFLICT = re.compile(r"ResolutionImpossible|conflicting dependencies|versions have conflicting")
_SCM_VERSION = re.compile(r"setuptools.scm was unable to detect version|unable to detect version")


@dataclass
class Attempt:
    recipe: Recipe
    report: EnvironmentReport | None = None
    error: str = ""  # why the environment could not be built
    environment_key: str = ""
    seconds: float = 0.0

    @property
    def usable(self) -> bool:
        return self.report is not None and self.report.usable

    def score(self) -> tuple:
        """Which attempt is best: usable, most passing tests, fewest files failing to collect."""
        if self.report is None:
            return (0, 0, 0)
        return (int(self.usable), self.report.passed, -len(self.report.collection_errors))

    def summary(self) -> str:
        if self.report is None:
            return f"the environment could not be built: {self.error}"
        return self.report.summary()

    def to_dict(self) -> dict:
        return {
            "recipe": self.recipe.to_dict(),
            "usable": self.usable,
            "summary": self.summary(),
            "error": self.error[-4000:],
            "environment_key": self.environment_key,
            "seconds": round(self.seconds, 2),
        }


@dataclass
class RecipeOutcome:
    chosen: Attempt
    attempts: list[Attempt] = field(default_factory=list)
    reason: str = ""
    hint: str = ""

    @property
    def usable(self) -> bool:
        return self.chosen.usable


def find_recipe(
    *,
    start: Recipe,
    try_recipe: Callable[[Recipe], Attempt],
    own_packages: frozenset[str] = frozenset(),
    max_attempts: int = MAX_ATTEMPTS,
    adjust: bool = True,
    log: Callable[[str], None] = lambda line: None,
) -> RecipeOutcome:
    """Try `start`, then what each report suggests, up to `max_attempts` (a curator's own
    recipe: `adjust=False`, tried as it is)."""
    attempts: list[Attempt] = []
    recipe: Recipe | None = start
    while recipe is not None and len(attempts) < max_attempts:
        started = time.monotonic()
        attempt = try_recipe(recipe)
        attempt.seconds = attempt.seconds or time.monotonic() - started
        attempts.append(attempt)
        log(f"recipe attempt {len(attempts)}: {attempt.summary()} ({attempt.seconds:.1f}s)")
        if not adjust or _good_enough(attempt):
            break
        recipe = _next(attempt, tried=[a.recipe for a in attempts], own_packages=own_packages)
    chosen = max(attempts, key=lambda a: a.score())
    outcome = RecipeOutcome(chosen=chosen, attempts=attempts)
    if not chosen.usable or (chosen.report is not None and chosen.report.collection_errors):
        outcome.reason, outcome.hint = diagnose(chosen, own_packages=own_packages)
    return outcome


def _good_enough(attempt: Attempt) -> bool:
    report = attempt.report
    return report is not None and report.usable and not report.collection_errors


def _next(attempt: Attempt, *, tried: list[Recipe], own_packages: frozenset[str]) -> Recipe | None:
    recipe = attempt.recipe
    if attempt.report is not None:
        return next_recipe(recipe, attempt.report, tried=tried, own_packages=own_packages)
    candidate: Recipe | None = None
    missing = _CANNOT_BE_HAD.findall(attempt.error)
    droppable = [p for p in recipe.packages if any(_same(p, name) for name in missing)]
    if droppable:
        candidate = recipe.with_changes(
            packages=tuple(p for p in recipe.packages if p not in droppable),
            note=f"dropped {', '.join(droppable)}: not to be had as a wheel or sdist",
        )
    elif _SCM_VERSION.search(attempt.error) and not dict(recipe.environment).get(
        "SETUPTOOLS_SCM_PRETEND_VERSION"
    ):
        candidate = recipe.with_changes(
            environment=(*recipe.environment, ("SETUPTOOLS_SCM_PRETEND_VERSION", "0.0.0")),
            note="the build could not detect its version: SETUPTOOLS_SCM_PRETEND_VERSION=0.0.0",
        )
    elif _CONFLICT.search(attempt.error) and any(_pinned(p) for p in recipe.packages):
        candidate = recipe.unpinned(
            note="the packages' versions conflict (a lock file for another Python?): unpinned"
        )
    elif "[" in recipe.install:
        candidate = recipe.with_changes(
            install=".", note="the build failed with the extras: the project alone is installed"
        )
    if candidate is None or candidate in tried:
        return None
    return candidate


def _pinned(requirement: str) -> bool:
    return bool(re.search(r"[<>=!~]", requirement.split(";", 1)[0]))


def _same(requirement: str, name: str) -> bool:
    def norm(text: str) -> str:
        return re.sub(
            r"[-_.]+", "-", re.split(r"[\s\[<>=!~;]", text.strip(), maxsplit=1)[0]
        ).lower()

    return norm(requirement) == norm(name)


def diagnose(attempt: Attempt, *, own_packages: frozenset[str]) -> tuple[str, str]:
    """(one sentence of cause, one of how to fix it) for an attempt that is not fully right."""
    report = attempt.report
    if report is None:
        missing = _CANNOT_BE_HAD.findall(attempt.error)
        if missing:
            return (
                f"the environment could not be built: {', '.join(missing)} cannot be had",
                f"{', '.join(missing)} has no wheel or sdist for this Python on the configured "
                "indexes: remove it from the recipe's packages or pin a version that exists",
            )
        return (
            f"the environment could not be built: {_last_line(attempt.error)}",
            "read the build output in the recipe's attempts; fix the recipe's packages, "
            "environment variables or setup commands",
        )
    if report.timed_out:
        return (
            "the test suite hit the wall-clock limit at the snapshot",
            "raise SPECLOOM_SANDBOX_WALL_SECONDS, or narrow the suite with pytest options",
        )
    if report.memory_exceeded:
        return (
            "the test suite ran out of memory at the snapshot",
            "raise SPECLOOM_SANDBOX_MEMORY_MB, or narrow the suite with pytest options",
        )
    if not report.collected and report.exit_code == PYTEST_USAGE_ERROR:
        return (
            f"pytest refused its options: {_last_line(report.output_tail)}",
            "remove the option from the recipe's pytest_addopts or pytest_options",
        )
    if not report.collected and not report.collection_errors:
        why = "pytest found no tests" if report.exit_code == PYTEST_NO_TESTS else "no test ran"
        return (
            f"{why} at the snapshot",
            "the repository has no tests pytest finds: add pytest options to the recipe "
            "(e.g. `-o python_files=*.py`) or pick a repository with tests",
        )
    first = _first_problem(report)
    modules = report.missing_modules()
    own = [m for m in modules if m.split(".")[0] in own_packages]
    foreign = [m for m in modules if m.split(".")[0] not in own_packages]
    count = len(report.collection_errors)
    if not report.passed:
        cause = f"none of the {report.collected} collected tests passes at the snapshot"
        if count:
            cause = (
                f"{count} test file(s) fail to collect and none of the {report.collected} "
                f"collected tests passes"
            )
        cause += f" (first error: {first})"
    else:
        cause = f"{count} test file(s) fail to collect (first: {first}); they are left out"
    if own:
        hint = (
            f"the project's module {own[0]} is missing: it is generated at build time or left "
            "out of the archive; set its version variable (SETUPTOOLS_SCM_PRETEND_VERSION) or "
            "add a setup command that writes it"
        )
    elif foreign:
        hint = (
            f"the tests import {', '.join(foreign)}: add "
            f"{', '.join(sorted({distribution_of(m) for m in foreign}))} to the recipe's packages"
        )
    elif report.missing_fixtures():
        hint = f"the tests use the fixture {report.missing_fixtures()[0]!r}: add its plugin"
    else:
        hint = "read the first error; fix the recipe's packages, environment or setup commands"
    return cause, hint


def _first_problem(report: EnvironmentReport) -> str:
    if report.collection_errors:
        problem = report.collection_errors[0]
        return f"{problem.path}: {problem.first_line}"
    return report.error_lines[0] if report.error_lines else "no error text"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "no output")[:300]
