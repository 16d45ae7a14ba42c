"""Example tests: for a function nothing else shows at work, one of its tests stays visible.

A statement a solver can work from shows every function to implement at work, from a source
other than the hidden tests. When no docstring, docs page or visible test does, one test that
calls the function directly is kept in the repository, visible, as its example: it is not one of
the hidden tests (neither FAIL_TO_PASS nor PASS_TO_PASS), and fails until the function works.
A test is kept visible only when the hidden tests left still meet the validator's gates and
still run every function of the task, and never when it is the evidence of an error spec.

A private helper that no test, docstring or docs page calls by name (dispatched through
`getattr`, or reached several calls down) is shown through the public call that reaches it: a
test that coverage saw run the helper, calling a public function of the project that the same
test ran. A test kept visible for another function serves first; only then is one more held out.
"""

from __future__ import annotations

from dataclasses import replace

from workers.synthesis.briefs import (
    BEHAVIOUR_KINDS,
    FunctionBrief,
    borrow_examples,
    build_briefs,
    called_names,
    display_name,
)
from workers.synthesis.callgraph import CallGraph
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.documents import DocExample
from workers.synthesis.examples import Example, TestSources
from workers.synthesis.functions import FunctionInfo, FunctionTable
from workers.synthesis.source import SourceTree

# Examples that show a function at work (a call site only shows how it is called).
BEHAVIOUR_SOURCES = BEHAVIOUR_KINDS
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
        groups = _test_functions(cmap.tests_of.get(info.id, set()), remaining)
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
            checks_error = best.kind == "raises" or _checks_error(cases, functions, cmap)
            if not checks_error:
                options.append(((len(cases), len(best.code), test_function), cases, best))
        for rank, cases, example in sorted(options, key=lambda o: o[0]):
            left = remaining - set(cases)
            if _gates_hold(left, functions, cmap):
                held[info.id] = (rank[-1], cases, example)
                remaining = left
                break
    # What the statement will borrow (a sibling's or a caller's example) needs no test.
    for fid, (test_function, _cases, example) in held.items():
        briefs[fid].examples.insert(0, DocExample(example.code, test_function, "visible test"))
    borrow_examples(briefs, table, graph, tree.docs)
    for info in functions:
        if info.id in held or any(e.kind in BEHAVIOUR_SOURCES for e in briefs[info.id].examples):
            continue
        reached = _reached_through_public_call(
            info, functions, held, remaining, table, graph, cmap, tests
        )
        if reached is not None:
            held[info.id] = reached
            remaining -= set(reached[1])
    return held


def show_held_examples(
    briefs: dict[str, FunctionBrief], held: dict[str, tuple[str, list[str], Example]]
) -> None:
    """Each held-out test's example first among its function's examples, marked as visible."""
    for fid, (test_function, _cases, example) in held.items():
        kept = DocExample(
            example.code,
            f"{test_function} (kept visible, not a hidden test)",
            "visible test",
            via=example.via,
            via_resolved=example.via_resolved,
        )
        others = [e for e in briefs[fid].examples if not e.source.startswith(test_function)]
        briefs[fid].examples = [kept, *others]


def _test_functions(covering: set[str], remaining: set[str]) -> dict[str, list[str]]:
    """Test function -> all its hidden cases, for the test functions with a case in `covering`.
    The hidden tests are removed from the repository a test function at a time, so a test is
    only visible when every one of its cases is held out."""
    wanted = {nodeid.split("[", 1)[0] for nodeid in covering & remaining}
    groups: dict[str, list[str]] = {}
    for nodeid in sorted(remaining):
        if nodeid.split("[", 1)[0] in wanted:
            groups.setdefault(nodeid.split("[", 1)[0], []).append(nodeid)
    return groups


def _gates_hold(left: set[str], functions: list[FunctionInfo], cmap: CoverageMap) -> bool:
    return enough_tests(sorted(left)) and all(
        cmap.tests_of.get(f.id, set()) & left for f in functions
    )


def _checks_error(cases: list[str], functions: list[FunctionInfo], cmap: CoverageMap) -> bool:
    return any(
        cmap.covers_line(case, f.path, r.line)
        for case in cases
        for f in functions
        for r in f.raises
    )


def _reached_through_public_call(
    info: FunctionInfo,
    functions: list[FunctionInfo],
    held: dict[str, tuple[str, list[str], Example]],
    remaining: set[str],
    table: FunctionTable,
    graph: CallGraph,
    cmap: CoverageMap,
    tests: TestSources,
) -> tuple[str, list[str], Example] | None:
    """A test that runs `info` (coverage says so) through a public call, and its example: one
    already kept visible for another function, else one more held out if the gates allow."""
    covering = cmap.tests_of.get(info.id, set())
    for test_function, cases, _example in sorted(held.values(), key=lambda h: h[0]):
        if not covering & set(cases):
            continue
        example = _public_call_example(info, cases, functions, table, graph, cmap, tests)
        if example is not None:
            return test_function, cases, example
    groups = _test_functions(covering, remaining)
    options = []
    for test_function, cases in groups.items():
        example = _public_call_example(info, cases, functions, table, graph, cmap, tests)
        if example is None or example.kind == "raises" or _checks_error(cases, functions, cmap):
            continue
        options.append(((len(cases), len(example.code), test_function), cases, example))
    for rank, cases, example in sorted(options, key=lambda o: o[0]):
        left = remaining - set(cases)
        if _gates_hold(left, functions, cmap) and _still_interacting(
            left, remaining, functions, cmap
        ):
            return rank[-1], cases, example
    return None


def _still_interacting(
    left: set[str], before: set[str], functions: list[FunctionInfo], cmap: CoverageMap
) -> bool:
    """Hidden tests that run two functions of the task or more (the likely interaction tests)
    are not all given away as an example: a test that reaches a helper through a public call
    often runs several."""

    def interacting(tests: set[str]) -> bool:
        return any(
            sum(1 for f in functions if t in cmap.tests_of.get(f.id, set())) >= 2 for t in tests
        )

    return interacting(left) or not interacting(before)


def _public_call_example(
    info: FunctionInfo,
    cases: list[str],
    functions: list[FunctionInfo],
    table: FunctionTable,
    graph: CallGraph,
    cmap: CoverageMap,
    tests: TestSources,
) -> Example | None:
    """An assert of the test that calls a public function the test ran (another function of
    the task, or one outside it), named as the way the test reaches `info`: one the call graph
    resolves to `info` first, then any the test ran."""
    if not cases:
        return None
    ran = set().union(*(cmap.functions_of.get(case, set()) for case in cases)) - {info.id}
    entries = sorted(
        (table.functions[fid] for fid in ran if fid in table.functions),
        key=lambda entry: (not _reaches(graph, entry.id, info.id), entry.id),
    )
    entries = [entry for entry in entries if _public(entry)]
    for entry in entries:
        for name in called_names(entry, table):
            direct = _short(tests.examples_for(cases[0], name))
            if direct:
                best = min(direct, key=lambda e: (not e.direct, len(e.code)))
                return _through(best, entry, info, table, graph)
    # The test calls the entry point through a helper of its own (`self.format(sql)` that
    # calls `mylib.format(sql, ...)`): its asserts still show that call at work.
    for entry in entries:
        if any(tests.file_calls(cases[0], name) for name in called_names(entry, table)):
            asserts = [e for e in _short(tests.examples_for(cases[0], None)) if "(" in e.code]
            if asserts:
                best = min(asserts, key=lambda e: len(e.code))
                return _through(best, entry, info, table, graph)
    return None


def _through(
    example: Example,
    entry: FunctionInfo,
    info: FunctionInfo,
    table: FunctionTable,
    graph: CallGraph,
) -> Example:
    return replace(
        example,
        via=display_name(table, entry.id),
        via_resolved=_reaches(graph, entry.id, info.id),
    )


def _short(examples: list[Example]) -> list[Example]:
    return [e for e in examples if len(e.code) <= _MAX_EXAMPLE_TEST_CHARS]


def _public(info: FunctionInfo) -> bool:
    """Part of the project's interface: no part of its qualified name is private."""
    return not info.nested and all(
        not part.startswith("_") or (part.startswith("__") and part.endswith("__"))
        for part in info.qualname.split(".")
    )


_REACH_DEPTH = 6


def _reaches(graph: CallGraph, caller: str, callee: str) -> bool:
    """Whether resolved calls lead from `caller` to `callee`."""
    frontier, seen = {caller}, {caller}
    for _depth in range(_REACH_DEPTH):
        frontier = {
            c for f in frontier for c in graph.callees.get(f, set()) if graph.is_exact(f, c)
        } - seen
        if callee in frontier:
            return True
        seen |= frontier
    return False
