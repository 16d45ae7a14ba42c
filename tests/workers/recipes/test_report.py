"""The environment report's judgement of a suite that mostly cannot run."""

from __future__ import annotations

from workers.recipes.report import suite_shortfall


def _problem(path: str) -> dict:
    return {"path": path, "first_line": "ImportError: cannot import name 'unittest' from 'tests'"}


def test_most_test_files_failing_to_collect_is_named_with_the_first_error():
    # An sdist that leaves out tests/__init__.py, which every test module imports helpers from.
    report = {
        "collected": 1,
        "errors": 0,
        "test_files": 6,
        "collection_errors": [_problem(f"tests/test_{n}.py") for n in range(5)],
    }
    assert suite_shortfall(report) == (
        "5 of 6 test files fail to collect (first: tests/test_0.py: ImportError: cannot import "
        "name 'unittest' from 'tests')"
    )


def test_most_tests_erroring_is_named_with_the_first_error_line():
    # A suite whose fixtures need a compiled extension the environment does not have.
    report = {
        "collected": 1784,
        "errors": 1719,
        "test_files": 19,
        "collection_errors": [],
        "error_lines": ["AssertionError: C extension not loaded in extension mode"],
    }
    assert suite_shortfall(report) == (
        "1719 of 1784 tests error before they run "
        "(first: AssertionError: C extension not loaded in extension mode)"
    )


def test_a_suite_that_mostly_runs_has_no_shortfall():
    report = {
        "collected": 100,
        "errors": 3,
        "test_files": 10,
        "collection_errors": [_problem("tests/test_slow.py")],
    }
    assert suite_shortfall(report) is None
    assert suite_shortfall({}) is None
