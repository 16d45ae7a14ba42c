"""Finding a recipe: what to try next after a try, when to stop, and the cause with a fix."""

from workers.recipes.recipe import Recipe
from workers.recipes.report import CollectionProblem, EnvironmentReport
from workers.recipes.trial import Attempt, diagnose, find_recipe


def report(**fields) -> EnvironmentReport:
    return EnvironmentReport(**fields)


def test_a_missing_module_is_added_and_a_good_try_ends_the_search():
    tries = []

    def try_recipe(recipe):
        tries.append(recipe)
        if "python-dateutil" in recipe.packages:
            return Attempt(recipe, report(collected=3, passed=3))
        problem = CollectionProblem(
            "tests/test_a.py", "ModuleNotFoundError: No module named 'dateutil'"
        )
        return Attempt(recipe, report(collection_errors=[problem]))

    outcome = find_recipe(start=Recipe(), try_recipe=try_recipe)
    assert outcome.usable and len(tries) == 2
    assert tries[1].packages == ("python-dateutil",)
    assert "the tests import dateutil" in tries[1].notes[-1]
    assert outcome.reason == ""


def test_a_missing_module_of_the_project_itself_is_not_installed_and_gets_a_hint():
    problem = CollectionProblem(
        "tests/test_a.py", "ModuleNotFoundError: No module named 'pkg._version'"
    )
    attempt_report = report(collection_errors=[problem])
    outcome = find_recipe(
        start=Recipe(),
        try_recipe=lambda recipe: Attempt(recipe, attempt_report),
        own_packages=frozenset({"pkg"}),
    )
    assert len(outcome.attempts) == 1
    assert "pkg._version" in outcome.hint and "SETUPTOOLS_SCM_PRETEND_VERSION" in outcome.hint


def test_a_package_that_cannot_be_had_is_dropped_and_the_best_attempt_kept():
    calls = []

    def try_recipe(recipe):
        calls.append(recipe)
        if "nope" in recipe.packages:
            return Attempt(recipe, error="cannot be had: nope: no wheel or sdist")
        return Attempt(recipe, report(collected=2, passed=1, failed=1))

    outcome = find_recipe(start=Recipe(packages=("nope", "six")), try_recipe=try_recipe)
    assert [c.packages for c in calls] == [("nope", "six"), ("six",)]
    assert outcome.usable and outcome.chosen.recipe.packages == ("six",)


def test_a_curators_recipe_is_tried_once_as_it_is():
    outcome = find_recipe(
        start=Recipe(packages=("x",)),
        try_recipe=lambda recipe: Attempt(recipe, report(collected=1, failed=1)),
        adjust=False,
    )
    assert len(outcome.attempts) == 1 and not outcome.usable


def test_the_search_stops_after_the_attempt_limit():
    counter = iter(range(100))

    def try_recipe(recipe):
        module = f"mod{next(counter)}"
        problem = CollectionProblem("t.py", f"ModuleNotFoundError: No module named '{module}'")
        return Attempt(recipe, report(collection_errors=[problem]))

    outcome = find_recipe(start=Recipe(), try_recipe=try_recipe, max_attempts=3)
    assert len(outcome.attempts) == 3


def test_every_cause_comes_with_a_fix():
    cases = [
        (Attempt(Recipe(), error="cannot be had: zzz: gone"), "zzz cannot be had", "remove it"),
        (Attempt(Recipe(), report(exit_code=5)), "pytest found no tests", "no tests pytest finds"),
        (
            Attempt(Recipe(), report(exit_code=4, output_tail="error: unrecognized arguments: -n")),
            "pytest refused its options",
            "pytest_addopts",
        ),
        (Attempt(Recipe(), report(timed_out=True)), "wall-clock limit", "SPECLOOM_SANDBOX_WALL"),
        (
            Attempt(
                Recipe(), report(collected=1, failed=1, error_lines=["fixture 'mocker' not found"])
            ),
            "none of the 1 collected tests passes",
            "fixture",
        ),
    ]
    for attempt, cause, fix in cases:
        reason, hint = diagnose(attempt, own_packages=frozenset())
        assert cause in reason, reason
        assert fix in hint, hint


def test_conflicting_pins_are_relaxed_and_the_sandbox_keeps_its_own_tools():
    start = Recipe().adding_packages(
        ["coverage==7.10.7", "pytest==8.0", "cffi==1.17.1", "rich>=13"], note="a lock file"
    )
    assert start.packages == ("cffi==1.17.1", "rich>=13")
    calls = []

    def try_recipe(recipe):
        calls.append(recipe.packages)
        if any("==" in p for p in recipe.packages):
            return Attempt(recipe, error="ERROR: ResolutionImpossible: for help visit ...")
        return Attempt(recipe, report(collected=1, passed=1))

    outcome = find_recipe(start=start, try_recipe=try_recipe)
    assert calls == [("cffi==1.17.1", "rich>=13"), ("cffi", "rich")]
    assert outcome.usable
