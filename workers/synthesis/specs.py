"""Specifications for one cluster, and the dependencies between them.

Per function: a functional spec (what it does, quoted from its docstring and from the asserts of
the tests that cover it), an interface spec when other project code calls it, and an
error-handling spec per distinct exception its body raises. Per task: a compatibility spec for
the callers outside the cluster whose tests must keep passing. Dependencies come from the call
graph and are marked "declared"; the validator's leave-one-out runs add "observed" ones.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from workers.synthesis.callgraph import CallGraph
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.examples import Example, TestSources
from workers.synthesis.functions import FunctionInfo, FunctionTable, RaiseInfo
from workers.synthesis.proposals import DependencyProposal, SpecProposal

_EXAMPLES_PER_FUNCTION = 3
_MAX_VERIFIERS = 25


@dataclass
class FunctionFacts:
    """What the removed body did, told without its code."""

    returns_value: bool = False
    is_generator: bool = False
    self_attributes: list[str] = field(default_factory=list)  # attributes the body assigns


@dataclass
class ClusterSpecs:
    specs: list[SpecProposal]
    dependencies: list[DependencyProposal]
    keys_by_function: dict[str, list[str]]  # function id -> its spec keys
    examples: dict[str, list[Example]]  # function id -> examples quoted in the statement
    facts: dict[str, FunctionFacts]
    outside_callers: list[str]  # function ids, for the compatibility spec


def body_facts(text: str, info: FunctionInfo) -> FunctionFacts:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return FunctionFacts()
    node = _find_def(tree, info.def_line)
    if node is None:
        return FunctionFacts()
    facts = FunctionFacts()
    attributes: set[str] = set()
    for child in _walk_own(node):
        if isinstance(child, ast.Return) and child.value is not None:
            facts.returns_value = True
        elif isinstance(child, ast.Yield | ast.YieldFrom):
            facts.is_generator = True
        elif (
            isinstance(child, ast.Attribute)
            and isinstance(child.ctx, ast.Store)
            and isinstance(child.value, ast.Name)
            and child.value.id == "self"
        ):
            attributes.add(child.attr)
    facts.self_attributes = sorted(attributes)
    return facts


def build_specs(
    *,
    functions: list[FunctionInfo],
    texts: dict[str, str],
    table: FunctionTable,
    graph: CallGraph,
    cmap: CoverageMap,
    tests: TestSources,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
) -> ClusterSpecs:
    f2p = set(fail_to_pass)
    ids = [f.id for f in functions]
    in_cluster = set(ids)
    specs: list[SpecProposal] = []
    deps: list[DependencyProposal] = []
    keys: dict[str, list[str]] = {fid: [] for fid in ids}
    functional_key: dict[str, str] = {}
    interface_key: dict[str, str] = {}
    examples: dict[str, list[Example]] = {}
    facts: dict[str, FunctionFacts] = {}

    def new_spec(kind: str, statement: str, rationale: str, verified_by, owner: str = "") -> str:
        key = f"S{len(specs) + 1}"
        chosen = sorted(set(verified_by))[:_MAX_VERIFIERS]
        specs.append(SpecProposal(key, kind, statement, rationale, chosen))
        if owner:
            keys[owner].append(key)
        return key

    for info in functions:
        verifiers = sorted(cmap.tests_of.get(info.id, set()) & f2p)
        facts[info.id] = body_facts(texts[info.path], info)
        examples[info.id] = _pick_examples(tests, verifiers, info.name) or _examples_via_callers(
            info, tests, verifiers, table, graph, in_cluster
        )
        functional_key[info.id] = new_spec(
            "functional",
            _functional_statement(info, facts[info.id], examples[info.id], table, graph),
            _functional_rationale(info, examples[info.id], verifiers),
            verifiers,
            info.id,
        )

    for info in functions:
        callers = sorted(c for c in graph.callers.get(info.id, set()) if c in table.functions)
        callers = [c for c in callers if not table.functions[c].nested]
        if not callers:
            continue
        caller_tests = cmap.covering(callers) & cmap.tests_of.get(info.id, set())
        verifiers = sorted(caller_tests & (f2p | set(pass_to_pass)))
        names = ", ".join(f"`{display_name(table, c)}`" for c in callers[:5])
        more = f" and {len(callers) - 5} more" if len(callers) > 5 else ""
        rely = "relies" if len(callers) == 1 else "rely"
        statement = (
            f"`{info.qualname}` keeps the interface `{info.signature}`: it is called this way "
            f"by {names}{more}, which {rely} on what it returns or does."
        )
        interface_key[info.id] = new_spec(
            "interface",
            statement,
            "Call sites found in the project's source; changing the parameters or the kind of "
            "result would break them.",
            verifiers,
            info.id,
        )

    for info in functions:
        for raised in info.raises:
            verifiers = _error_verifiers(info, raised, cmap, tests, f2p)
            key = new_spec(
                "error-handling",
                _error_statement(info, raised),
                (
                    f"The original body raises `{raised.exception}` here; "
                    + (
                        f"{len(verifiers)} hidden test(s) exercise this path."
                        if verifiers
                        else "no hidden test exercises this path, so it is stated, not checked."
                    )
                ),
                verifiers,
                info.id,
            )
            deps.append(DependencyProposal(key, functional_key[info.id], "constrains"))

    for info in functions:
        for callee in sorted(graph.callees.get(info.id, set()) & in_cluster):
            deps.append(
                DependencyProposal(functional_key[info.id], functional_key[callee], "calls")
            )
        for caller in sorted(graph.callers.get(info.id, set()) & in_cluster):
            if info.id in interface_key:
                deps.append(
                    DependencyProposal(interface_key[info.id], functional_key[caller], "constrains")
                )

    outside = sorted(
        {
            caller
            for fid in ids
            for caller in graph.callers.get(fid, set())
            if caller not in in_cluster
            and caller in table.functions
            and not table.functions[caller].nested
        }
    )
    p2p = set(pass_to_pass)
    if p2p:
        guarded = [fid for fid in ids if graph.callers.get(fid, set()) - in_cluster]
        caller_tests = cmap.covering(outside) & p2p
        verifiers = sorted(caller_tests or p2p)
        if outside:
            names = ", ".join(f"`{display_name(table, c)}`" for c in outside[:6])
            more = f" and {len(outside) - 6} more" if len(outside) > 6 else ""
            statement = (
                f"Existing code that uses these functions ({names}{more}) keeps its current "
                "behaviour: its tests pass unchanged."
            )
        else:
            statement = (
                "The rest of the project keeps its current behaviour: the tests that already "
                "pass keep passing."
            )
        key = new_spec(
            "compatibility",
            statement,
            "These tests pass before and after the change; they guard the code around it.",
            verifiers,
        )
        for fid in guarded or ids:
            deps.append(DependencyProposal(key, functional_key[fid], "constrains"))

    unique: dict[tuple[str, str, str], DependencyProposal] = {}
    for dep in deps:
        if dep.from_key != dep.to_key:
            unique.setdefault((dep.from_key, dep.to_key, dep.relation), dep)
    return ClusterSpecs(
        specs=specs,
        dependencies=list(unique.values()),
        keys_by_function=keys,
        examples=examples,
        facts=facts,
        outside_callers=outside,
    )


def _pick_examples(tests: TestSources, verifiers: list[str], name: str) -> list[Example]:
    """Short examples from different tests first; deterministic order."""
    found: list[Example] = []
    seen_code: set[str] = set()
    for nodeid in verifiers:
        for example in tests.examples_for(nodeid, name):
            if example.code not in seen_code:
                seen_code.add(example.code)
                found.append(example)

    # Asserts that call the function themselves say most about it; then the shortest.
    def rank(example: Example) -> tuple[bool, int, str]:
        return (not example.direct, len(example.code), example.test)

    first_per_test: dict[str, Example] = {}
    for example in sorted(found, key=rank):
        first_per_test.setdefault(example.test, example)
    ranked = sorted(first_per_test.values(), key=rank)
    raises = [e for e in found if e.kind == "raises"]
    chosen = ranked[:_EXAMPLES_PER_FUNCTION]
    if raises and not any(e.kind == "raises" for e in chosen):
        chosen = [*chosen[: _EXAMPLES_PER_FUNCTION - 1], min(raises, key=lambda e: len(e.code))]
    return chosen


def _examples_via_callers(
    info: FunctionInfo,
    tests: TestSources,
    verifiers: list[str],
    table: FunctionTable,
    graph: CallGraph,
    cluster: set[str],
) -> list[Example]:
    """Helpers are rarely called by tests; show what a caller outside the cluster does instead.

    Callers up to two calls away are tried, nearest and public first; the cluster's own
    functions are passed through but not quoted, since they have examples of their own.
    """
    ranked: list[tuple[int, bool, str]] = []
    seen = {info.id}
    frontier = [info.id]
    for depth in (1, 2):
        next_frontier = []
        for fid in frontier:
            for caller in sorted(graph.callers.get(fid, set())):
                if caller in seen or caller not in table.functions:
                    continue
                seen.add(caller)
                if table.functions[caller].nested:
                    continue
                next_frontier.append(caller)
                if caller not in cluster:
                    ranked.append((depth, table.functions[caller].name.startswith("_"), caller))
        frontier = next_frontier
    for _, _, caller in sorted(ranked):
        found = _pick_examples(tests, verifiers, table.functions[caller].name)
        if found:
            name = display_name(table, caller)
            return [replace(example, via=name) for example in found[:2]]
    return []


def display_name(table: FunctionTable, fid: str) -> str:
    """How to name a function in prose: a constructor by its class."""
    info = table.functions[fid]
    return info.class_name if info.name == "__init__" and info.class_name else info.qualname


def _functional_statement(
    info: FunctionInfo,
    facts: FunctionFacts,
    examples: list[Example],
    table: FunctionTable,
    graph: CallGraph,
) -> str:
    where = f"`{info.qualname}` in `{info.path}` (`{info.signature}`)"
    parts = [f"{where}: {_summary(info)}"]
    if facts.is_generator:
        parts.append("It is a generator: it yields its results lazily.")
    elif facts.returns_value:
        parts.append("It returns its result.")
    else:
        parts.append("It returns nothing; its effect is on state.")
    if facts.self_attributes:
        names = ", ".join(f"`self.{a}`" for a in facts.self_attributes[:6])
        parts.append(f"It sets {names}.")
    uses = sorted(c for c in graph.callees.get(info.id, set()) if c in table.functions)
    if uses:
        shown = ", ".join(f"`{display_name(table, c)}`" for c in uses[:5])
        parts.append(f"It builds on {shown}.")
    # Only a self-contained one-liner reads well inline; the rest go to the Examples section.
    inline = [e for e in examples if e.kind == "assert" and "\n" not in e.code and not e.via]
    if inline:
        parts.append(f"For example: `{inline[0].code}`.")
    return " ".join(parts)


def _summary(info: FunctionInfo) -> str:
    if info.docstring:
        first = info.docstring.strip().split("\n\n", 1)[0]
        return " ".join(first.split())
    return "behaves as its covering tests show (it has no docstring)."


def _functional_rationale(info: FunctionInfo, examples: list[Example], verifiers: list[str]) -> str:
    sources = ["the signature"]
    if info.docstring:
        sources.append("the docstring")
    if examples:
        sources.append(f"{len(examples)} assert(s) of its tests")
    return (
        f"Derived from {', '.join(sources)}; {len(verifiers)} hidden test(s) exercise "
        f"`{info.qualname}`."
    )


def _error_statement(info: FunctionInfo, raised: RaiseInfo) -> str:
    allowed = set(info.params) | {"self", "cls"}
    # A condition over the parameters is a contract; one over locals would quote the body.
    when = ""
    if raised.condition and raised.condition_names and set(raised.condition_names) <= allowed:
        when = f" when `{raised.condition}`"
    if raised.message:
        template = "{" in raised.message
        kind = "a message of the form" if template else "the message"
        return (
            f"`{info.qualname}` raises `{raised.exception}`{when}, with {kind} '{raised.message}'."
        )
    return f"`{info.qualname}` raises `{raised.exception}`{when}."


def _error_verifiers(
    info: FunctionInfo, raised: RaiseInfo, cmap: CoverageMap, tests: TestSources, f2p: set[str]
) -> list[str]:
    candidates = sorted(cmap.tests_of.get(info.id, set()) & f2p)
    # Coverage of the raise line is direct evidence; naming the exception in pytest.raises is
    # the fallback for when coverage missed the line (e.g. it ran in a subprocess).
    covered = [t for t in candidates if cmap.covers_line(t, info.path, raised.line)]
    if covered:
        return covered
    short = raised.exception.rsplit(".", 1)[-1]
    return [t for t in candidates if short in tests.raised_names(t)]


def _find_def(tree: ast.AST, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno == line:
            return node
    return None


def _walk_own(node: ast.AST):
    """The function's own nodes: nested defs and lambdas have returns and yields of their own."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(
            child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef
        ):
            stack.extend(ast.iter_child_nodes(child))
