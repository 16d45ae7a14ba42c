"""A rough time-to-solve estimate, for sorting and for the reviewer's difficulty rubric.

The weights are a first guess in minutes for an engineer new to the code: reading and writing
each removed line, understanding each function and how they connect, and satisfying each test.
Reviewers record the real bucket; those records are what should tune these numbers later.
"""

from __future__ import annotations

from workers.synthesis.proposals import Difficulty

_BASE_MINUTES = 4.0
_PER_LINE = 0.6
_PER_FUNCTION = 5.0
_PER_TEST = 0.25
_PER_DEPENDENCY = 2.0
_PER_ERROR_CONTRACT = 1.5


def bucket_for(minutes: float) -> str:
    if minutes < 15:
        return "<15m"
    if minutes < 60:
        return "15m-1h"
    if minutes < 240:
        return "1-4h"
    return ">4h"


def estimate_difficulty(
    *, lines_removed: int, functions: int, tests: int, dependencies: int, error_contracts: int = 0
) -> Difficulty:
    factors = {
        "lines_removed": float(lines_removed),
        "functions": float(functions),
        "fail_to_pass": float(tests),
        "dependencies": float(dependencies),
        "error_contracts": float(error_contracts),
    }
    minutes = (
        _BASE_MINUTES
        + _PER_LINE * lines_removed
        + _PER_FUNCTION * functions
        + _PER_TEST * min(tests, 40)  # past a few dozen, more tests add little work
        + _PER_DEPENDENCY * dependencies
        + _PER_ERROR_CONTRACT * error_contracts
    )
    return Difficulty(bucket=bucket_for(minutes), score=round(minutes, 1), factors=factors)
