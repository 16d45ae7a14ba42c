"""Which tests exercise which functions, from one coverage run of the whole suite.

A test covers a function when it executed a line of the function's *body*: def and decorator
lines run when the module is imported, so they say nothing about the test. Lines are credited
to the outermost function that holds them (a method, or a module-level function), because that
is the unit that stubbing removes; a closure's lines belong to the function that defines it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from workers.sandbox.types import Outcome, TestResult
from workers.synthesis.functions import FunctionTable

# pytest-cov style contexts append the phase; the phases all belong to the one test.
_PHASE_SUFFIXES = ("|setup", "|run", "|call", "|teardown")


@dataclass
class CoverageMap:
    passing: set[str]  # tests that passed at the snapshot
    tests_of: dict[str, set[str]] = field(default_factory=dict)  # function id -> passing tests
    functions_of: dict[str, set[str]] = field(default_factory=dict)  # test -> function ids
    lines_of: dict[str, dict[str, set[int]]] = field(default_factory=dict)  # test -> path -> lines
    # Functions whose body ran outside any test (at import or collection): stubbing them breaks
    # collection, so they are never candidates.
    import_time: set[str] = field(default_factory=set)

    def covering(self, function_ids) -> set[str]:
        tests: set[str] = set()
        for fid in function_ids:
            tests |= self.tests_of.get(fid, set())
        return tests

    def covers_line(self, test: str, path: str, line: int) -> bool:
        return line in self.lines_of.get(test, {}).get(path, set())


def normalise_context(context: str) -> str:
    for suffix in _PHASE_SUFFIXES:
        if context.endswith(suffix):
            return context[: -len(suffix)]
    return context


def build_coverage_map(
    table: FunctionTable,
    coverage: dict[str, dict[str, list[int]]],
    results: dict[str, TestResult],
) -> CoverageMap:
    passing = {nodeid for nodeid, r in results.items() if r.outcome == Outcome.PASSED}
    owners = _line_owners(table)
    cmap = CoverageMap(passing=passing)
    tests_of: dict[str, set[str]] = defaultdict(set)
    functions_of: dict[str, set[str]] = defaultdict(set)
    lines_of: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
    for raw_context in sorted(coverage):
        context = normalise_context(raw_context)
        is_test = context in results
        for raw_path, lines in coverage[raw_context].items():
            path = raw_path.removeprefix("./")
            owner_of_line = owners.get(path)
            if owner_of_line is None:
                continue
            hit = {owner_of_line[line] for line in lines if line in owner_of_line}
            if not is_test:
                cmap.import_time |= hit
                continue
            lines_of[context][path].update(lines)
            if context in passing:
                for fid in hit:
                    tests_of[fid].add(context)
                    functions_of[context].add(fid)
    cmap.tests_of = dict(tests_of)
    cmap.functions_of = dict(functions_of)
    cmap.lines_of = {t: dict(paths) for t, paths in lines_of.items()}
    return cmap


def _line_owners(table: FunctionTable) -> dict[str, dict[int, str]]:
    owners: dict[str, dict[int, str]] = defaultdict(dict)
    for fid in sorted(table.functions):
        info = table.functions[fid]
        if info.nested:
            continue
        for line in info.body_lines:
            owners[info.path][line] = fid
    return owners
