"""Groups of 2-4 coupled functions, each of which becomes one task.

Coupling comes from two sources: call edges (one function uses another, so its tests need
both) and shared covering tests (the same tests exercise both). Clusters are grown greedily
from seeds taken in a seeded random order; every choice iterates sorted data and draws from
`random.Random(seed)`, so the same repository, commit and seed give the same clusters.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from dataclasses import dataclass

from workers.synthesis.callgraph import CallGraph
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.functions import FunctionTable

_EXACT_CALL_WEIGHT = 3.0
_NAME_CALL_WEIGHT = 2.0  # only counted when coverage shows the two run in one test
_MIN_JACCARD = 0.2
_SIZES = (2, 3, 3, 4)  # cluster sizes to aim for; three is the common case


@dataclass(frozen=True)
class Cluster:
    functions: tuple[str, ...]  # function ids, ordered by file and line
    cohesion: float  # sum of pairwise coupling weights

    @property
    def modules(self) -> list[str]:
        return sorted({fid.split("::", 1)[0] for fid in self.functions})


def coupling_graph(
    candidates: list[str], graph: CallGraph, cmap: CoverageMap
) -> dict[str, dict[str, float]]:
    """Symmetric weights between candidates; absent pairs are not coupled."""
    chosen = set(candidates)
    weights: dict[str, dict[str, float]] = {fid: {} for fid in candidates}

    def add(a: str, b: str, weight: float) -> None:
        weights[a][b] = weights[a].get(b, 0.0) + weight
        weights[b][a] = weights[b].get(a, 0.0) + weight

    for edge in graph.edges:
        a, b = edge.caller, edge.callee
        if a not in chosen or b not in chosen or a == b:
            continue
        if graph.is_exact(a, b):
            add(a, b, _EXACT_CALL_WEIGHT)
        elif cmap.tests_of.get(a, set()) & cmap.tests_of.get(b, set()):
            add(a, b, _NAME_CALL_WEIGHT)
    by_test: dict[str, list[str]] = {}
    for fid in candidates:
        for test in cmap.tests_of.get(fid, ()):
            by_test.setdefault(test, []).append(fid)
    pairs: set[tuple[str, str]] = set()
    for fids in by_test.values():
        # A test that runs half the project says little about any pair; skip the broad ones.
        if len(fids) > 12:
            continue
        for i, a in enumerate(fids):
            for b in fids[i + 1 :]:
                pairs.add((min(a, b), max(a, b)))
    for a, b in sorted(pairs):
        ta, tb = cmap.tests_of[a], cmap.tests_of[b]
        jaccard = len(ta & tb) / len(ta | tb)
        if jaccard >= _MIN_JACCARD:
            add(a, b, 2.0 * jaccard)
    return weights


def form_clusters(
    candidates: list[str],
    graph: CallGraph,
    cmap: CoverageMap,
    table: FunctionTable,
    *,
    seed: int,
    wanted: int,
    per_module_cap: int | None = None,
) -> list[Cluster]:
    """Disjoint clusters in the order they should be tried (seeded)."""
    rng = random.Random(seed)  # noqa: S311 - reproducible choice, not security
    weights = coupling_graph(candidates, graph, cmap)
    module_of = {fid: table.functions[fid].module for fid in candidates}
    modules = sorted(set(module_of.values()))
    if per_module_cap is None:
        # Twice the fair share per module leaves room for rejections while keeping variety.
        per_module_cap = max(2, math.ceil(2 * max(wanted, 1) / max(len(modules), 1)))
    per_module: Counter[str] = Counter()
    used: set[str] = set()
    order = sorted(fid for fid in candidates if weights[fid])
    rng.shuffle(order)
    clusters: list[Cluster] = []
    for seed_fid in order:
        if seed_fid in used or per_module[module_of[seed_fid]] >= per_module_cap:
            continue
        members = [seed_fid]
        size = rng.choice(_SIZES)
        while len(members) < size:
            touched = {module_of[m] for m in members}
            # Two same-named functions of one file would be indistinguishable as patch parts.
            names = {_file_and_name(table, m) for m in members}
            scores: dict[str, float] = {}
            for member in members:
                for other, weight in sorted(weights[member].items()):
                    if other in used or other in members or _file_and_name(table, other) in names:
                        continue
                    module = module_of[other]
                    if module not in touched and per_module[module] >= per_module_cap:
                        continue
                    scores[other] = scores.get(other, 0.0) + weight
            if not scores:
                break
            ranked = sorted(scores, key=lambda fid: (-round(scores[fid], 6), fid))
            best = round(scores[ranked[0]], 6)
            tied = [fid for fid in ranked if round(scores[fid], 6) == best]
            members.append(tied[rng.randrange(len(tied))])
        if len(members) < 2:
            continue
        used.update(members)
        for module in {module_of[m] for m in members}:
            per_module[module] += 1
        ordered = tuple(
            sorted(members, key=lambda f: (table.functions[f].path, table.functions[f].start))
        )
        cohesion = sum(
            weights[a].get(b, 0.0) for i, a in enumerate(ordered) for b in ordered[i + 1 :]
        )
        clusters.append(Cluster(functions=ordered, cohesion=round(cohesion, 3)))
    return clusters


def _file_and_name(table: FunctionTable, fid: str) -> tuple[str, str]:
    info = table.functions[fid]
    return info.path, info.name
