"""Example tests: for a function nothing else shows at work, one of its tests stays visible.

A statement a solver can work from shows every function to implement at work, from a source
other than the hidden tests. When no docstring, docs page or visible test does, one test that
calls the function directly is kept in the repository, visible, as its example: it is not one of
the hidden tests (neither FAIL_TO_PASS nor PASS_TO_PASS), and fails until the function works.
A test is kept visible only when the hidden tests left still meet the validator's gates and
still run every function of the task, and never when it is the evidence of an error spec.
"""

from __future__ import annotations

from workers.synthesis.briefs import build_briefs, called_names
from workers.synthesis.callgraph import CallGraph
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.examples import Example, TestSources
from workers.synthesis.functions import FunctionInfo, FunctionTable
from workers.synthesis.source import SourceTree

# Examples that show a function at work (a call site only shows how it is called).
BEHAVIOUR_SOURCES = ("doctest", "docs", "visible test")
_MAX_EXAMPLE_TEST_CHARS = 300


def enough_tests(fail_to_pass: list[str]) -> bool:
    """The validator's gate, checked early: 3 tests from 2 test functions at least."""
    return len(fail_to_pass) >= 3 and len({t.split("[", 1)[0] for t in fail_to_pass}) >= 2


def hold_out_example_tests(
    *,
    functions: list[FunctionInfo],
    fail_to_pass: list[str],
    tree: SourceTree,
    table: FunctionTable,
    graph: CallGraph,
    cmap: CoverageMap,
    tests: TestSources,
) -> dict[str, tuple[str, list[str], Example]]:
    """Function id -> (test function kept visible, its cases, the example it shows)."""
    briefs = build_briefs(
        functions=functions,
        texts={f.path: tree.files[f.path] for f in functions},
        tree=tree,
        table=table,
        graph=graph,
        hidden=set(fail_to_pass),
    )
    remaining = set(fail_to_pass)
    held: dict[str, tuple[str, list[str], Example]] = {}
    for info in functions:
        if any(e.kind in BEHAVIOUR_SOURCES for e in briefs[info.id].examples):
            continue
        groups: dict[str, list[str]] = {}
        for nodeid in sorted(cmap.tests_of.get(info.id, set()) & remaining):
            groups.setdefault(nodeid.split("[", 1)[0], []).append(nodeid)
        options = []
        for test_function, cases in groups.items():
            # An assert on the call's result (`x = f(...)` then `assert x.total == ...`) shows
            # the call in its setup line: as good an example as a call inside the assert.
            direct = [
                e
                for name in called_names(info, table)
                for e in tests.examples_for(cases[0], name)
                if len(e.code) <= _MAX_EXAMPLE_TEST_CHARS
            ]
            if not direct:
                continue
            best = min(direct, key=lambda e: len(e.code))
            # A test that runs a raise is the evidence of an error spec: keep it hidden.
            checks_error = best.kind == "raises" or any(
                cmap.covers_line(case, f.path, r.line)
                for case in cases
                for f in functions
                for r in f.raises
            )
            if not checks_error:
                options.append(((len(cases), len(best.code), test_function), cases, best))
        for rank, cases, example in sorted(options, key=lambda o: o[0]):
            left = remaining - set(cases)
            if enough_tests(sorted(left)) and all(
                cmap.tests_of.get(f.id, set()) & left for f in functions
            ):
                held[info.id] = (rank[-1], cases, example)
                remaining = left
                break
    return held
