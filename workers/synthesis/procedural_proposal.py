"""The procedural engine's task proposal for a cluster whose stub run and hidden tests are
settled: the briefs, specs and statement, the reference parts and the metadata.

Plain Python (no Django); `workers.synthesis.procedural` calls it once per surviving cluster.
"""

from __future__ import annotations

import time
from typing import Protocol

from workers.patchcore import PatchParseError, split_by_function
from workers.synthesis.briefs import borrow_examples, build_briefs
from workers.synthesis.callgraph import CallGraph
from workers.synthesis.clusters import Cluster
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.difficulty import estimate_difficulty
from workers.synthesis.example_tests import show_held_examples
from workers.synthesis.examples import Example, TestSources
from workers.synthesis.functions import FunctionInfo, FunctionTable
from workers.synthesis.proposals import ReferencePart, SpecProposal, TaskProposal
from workers.synthesis.source import SourceTree
from workers.synthesis.specs import build_specs
from workers.synthesis.statement import problem_statement, task_title
from workers.synthesis.stubs import removed_body_lines
from workers.synthesis.trivial import check_trivial


class SharedAnalysis(Protocol):
    """What the proposal reads of the snapshot's analysis (the engine's shared context)."""

    seed: int
    tree: SourceTree
    table: FunctionTable
    graph: CallGraph
    cmap: CoverageMap
    tests: TestSources


def cluster_proposal(
    shared: SharedAnalysis,
    *,
    cluster: Cluster,
    functions: list[FunctionInfo],
    originals: dict[str, str],
    stubbed: dict[str, str],
    base_commit: str,
    reference_patch: str,
    test_patch: str,
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    hidden: list[str],
    visible_failing: list[str],
    held_out: dict[str, tuple[str, list[str], Example]],
    run_seconds: float,
    started: float,
) -> TaskProposal:
    """The task a cluster makes: statement, specs, parts, difficulty and metadata."""
    briefs = build_briefs(
        functions=functions,
        texts=originals,
        tree=shared.tree,
        table=shared.table,
        graph=shared.graph,
        hidden=set(hidden),
    )
    show_held_examples(briefs, held_out)
    borrow_examples(briefs, shared.table, shared.graph, shared.tree.docs)
    cluster_specs = build_specs(
        functions=functions,
        briefs=briefs,
        texts=originals,
        table=shared.table,
        graph=shared.graph,
        cmap=shared.cmap,
        tests=shared.tests,
        fail_to_pass=fail_to_pass,
    )
    removed: list[str] = []
    for path, fns in group_by_file(functions).items():
        removed += removed_body_lines(originals[path], fns)
    ids = set(cluster.functions)
    relations = [
        (shared.table.functions[a].qualname, shared.table.functions[b].qualname)
        for a in cluster.functions
        for b in sorted(shared.graph.callees.get(a, set()) & ids)
        if shared.graph.is_exact(a, b)
    ]
    statement = problem_statement(
        functions=functions,
        briefs=briefs,
        specs=cluster_specs.specs,
        relations=relations,
        removed_lines=removed,
    )
    parts = _reference_parts(reference_patch, stubbed, cluster_specs.specs)
    trivial = check_trivial(originals, [(f.path, f.qualname) for f in functions])
    difficulty = estimate_difficulty(
        lines_removed=len(removed),
        functions=len(functions),
        tests=len(fail_to_pass),
        dependencies=sum(1 for d in cluster_specs.dependencies if d.relation == "calls"),
        error_contracts=sum(1 for s in cluster_specs.specs if s.kind == "error-handling"),
    )
    metadata = {
        "origin": "procedural",
        "seed": shared.seed,
        "functions": list(cluster.functions),
        "modules": sorted({f.module for f in functions}),
        "cohesion": cluster.cohesion,
        "lines_removed": len(removed),
        "hidden_tests": hidden,
        "visible_fail_to_pass": visible_failing,
        "outside_callers": cluster_specs.outside_callers,
        "untested_specs": [s.key for s in cluster_specs.specs if not s.verified_by],
        "examples": {
            fid: [f"{e.kind}: {e.source}" + (_route(e) if e.via else "") for e in brief.examples]
            for fid, brief in briefs.items()
        },
        "trivial": trivial.as_dict(),
        "example_tests": {fid: test for fid, (test, _, _) in held_out.items()},
        "stub_run_seconds": round(run_seconds, 2),
        "synthesis_seconds": round(time.monotonic() - started, 2),
    }
    return TaskProposal(
        title=task_title(functions),
        problem_statement=statement,
        base_commit=base_commit,
        reference_patch=reference_patch,
        test_patch=test_patch,
        fail_to_pass=fail_to_pass,
        pass_to_pass=pass_to_pass,
        specs=cluster_specs.specs,
        dependencies=cluster_specs.dependencies,
        reference_parts=parts,
        difficulty=difficulty,
        metadata=metadata,
    )


def group_by_file(functions: list[FunctionInfo]) -> dict[str, list[FunctionInfo]]:
    grouped: dict[str, list[FunctionInfo]] = {}
    for info in sorted(functions, key=lambda f: (f.path, f.start)):
        grouped.setdefault(info.path, []).append(info)
    return grouped


def _reference_parts(
    reference_patch: str, stubbed: dict[str, str], specs: list[SpecProposal]
) -> list[ReferencePart]:
    """The reference patch split by function (workers.patchcore), with each part's specs."""
    try:
        parts = split_by_function(reference_patch, stubbed.get)
    except PatchParseError:
        return []
    return [
        ReferencePart(
            name=part.name,
            patch=part.patch,
            spec_keys=[s.key for s in specs if s.part == part.name],
        )
        for part in parts
    ]


def _route(example) -> str:
    if example.via_resolved:
        return f", through `{example.via}`"
    return f", in a test that calls `{example.via}`"
