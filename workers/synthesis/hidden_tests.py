"""Take FAIL_TO_PASS tests out of the base state; they come back as the hidden test patch.

A test goes as a whole: the function with its decorators (and the comment block right above
it). A class left with nothing but removed tests goes too, and a file all of whose tests go is
deleted. Tests that cannot be found in the source (generated, inherited from another file) stay
where they are and are reported.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass, field

from workers import pysource
from workers.synthesis.edits import LineEdit, merge_touching, split_lines


@dataclass
class RemovalPlan:
    edits: dict[str, list[LineEdit]] = field(default_factory=dict)  # path -> edits
    deleted: list[str] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)  # node ids that are gone from the base
    not_found: set[str] = field(default_factory=set)


def split_nodeid(nodeid: str) -> tuple[str, list[str]]:
    """("tests/test_x.py", ["TestA", "test_b"]) for "tests/test_x.py::TestA::test_b[1-2]"."""
    head = nodeid.split("[", 1)[0]
    parts = head.split("::")
    return parts[0], [p for p in parts[1:] if p]


def plan_test_removal(
    files: dict[str, str], fail_to_pass: list[str], all_tests: set[str]
) -> RemovalPlan:
    plan = RemovalPlan()
    by_file: dict[str, list[str]] = defaultdict(list)
    for nodeid in sorted(set(fail_to_pass)):
        by_file[split_nodeid(nodeid)[0]].append(nodeid)
    everything_by_file: dict[str, set[str]] = defaultdict(set)
    for nodeid in all_tests:
        everything_by_file[split_nodeid(nodeid)[0]].add(nodeid)
    for path in sorted(by_file):
        wanted = by_file[path]
        if path not in files:
            plan.not_found.update(wanted)
            continue
        if everything_by_file[path] <= set(wanted):
            plan.deleted.append(path)
            plan.removed.update(everything_by_file[path] | set(wanted))
            continue
        edits, removed, missing = _remove_in_file(files[path], wanted, everything_by_file[path])
        if edits:
            plan.edits[path] = edits
        plan.removed |= removed
        plan.not_found |= missing
    return plan


def _remove_in_file(
    text: str, wanted: list[str], file_tests: set[str]
) -> tuple[list[LineEdit], set[str], set[str]]:
    try:
        tree = pysource.parse(text)
    except SyntaxError:
        return [], set(), set(wanted)
    lines = split_lines(text)
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    doomed: set[ast.AST] = set()
    missing: set[str] = set()
    for nodeid in wanted:
        node = _locate(tree, split_nodeid(nodeid)[1])
        if node is None:
            missing.add(nodeid)
        else:
            doomed.add(node)
    doomed = _promote_emptied_classes(doomed, parents)
    # A removed function takes every parametrised id and every sibling id under it with it.
    removed = {
        nodeid
        for nodeid in file_tests | set(wanted)
        if nodeid not in missing and _is_under(tree, split_nodeid(nodeid)[1], doomed)
    }
    edits = [LineEdit(*_removal_range(lines, node), ()) for node in doomed]
    return merge_touching(edits), removed, missing


def _locate(tree: ast.Module, names: list[str]) -> ast.AST | None:
    scope: ast.AST = tree
    found: ast.AST | None = None
    for name in names:
        found = None
        for stmt in getattr(scope, "body", []):
            kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
            if isinstance(stmt, kinds) and stmt.name == name:
                found = stmt  # the last definition wins, as in Python
        if found is None:
            return None
        scope = found
    return found


def _is_under(tree: ast.Module, names: list[str], doomed: set[ast.AST]) -> bool:
    scope: ast.AST = tree
    for name in names:
        node = _locate(scope, [name]) if hasattr(scope, "body") else None
        if node is None:
            return False
        if node in doomed:
            return True
        scope = node
    return False


def _promote_emptied_classes(doomed: set[ast.AST], parents: dict) -> set[ast.AST]:
    changed = True
    while changed:
        changed = False
        for parent in {parents.get(node) for node in doomed}:
            if not isinstance(parent, ast.ClassDef) or parent in doomed:
                continue
            remaining = [s for s in parent.body if s not in doomed and not _is_docstring(s)]
            if not remaining:
                doomed = {n for n in doomed if parents.get(n) is not parent} | {parent}
                changed = True
                break
    return doomed


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _removal_range(lines: list[str], node: ast.AST) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([d.lineno for d in decorators] + [node.lineno])
    end = node.end_lineno or node.lineno
    def_line = lines[node.lineno - 1]
    indent = def_line[: len(def_line) - len(def_line.lstrip())]
    # The comment block right above a test describes it; it goes with it.
    while start > 1 and lines[start - 2].strip().startswith("#"):
        if not lines[start - 2].startswith(indent):
            break
        start -= 1
    # Take the blank lines after it, so the neighbours keep their usual spacing; at the end of
    # the file take the blank lines before it instead.
    probe = end
    while probe < len(lines) and not lines[probe].strip():
        probe += 1
    if probe == len(lines):
        while start > 1 and not lines[start - 2].strip():
            start -= 1
        return start, len(lines)
    return start, probe
