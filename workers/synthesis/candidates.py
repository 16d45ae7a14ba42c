"""Functions worth removing: real bodies that passing tests exercise."""

from __future__ import annotations

from dataclasses import dataclass

from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.functions import FunctionInfo, FunctionTable
from workers.synthesis.source import is_test_path

WIDELY_COVERED = "covered by most of the suite"


@dataclass(frozen=True)
class CandidatePolicy:
    min_statements: int = 2
    # A function that most of the suite runs (a core constructor, say) makes an unfocused task:
    # stubbing it fails everything. Skip it when it is this widely covered and the suite is big.
    max_cover_share: float = 0.4
    max_cover_share_floor: int = 25


def select_candidates(
    table: FunctionTable,
    cmap: CoverageMap,
    policy: CandidatePolicy | None = None,
    near_copies: set[str] | frozenset[str] = frozenset(),
) -> tuple[list[str], dict[str, str]]:
    """Candidate function ids (sorted) and, for the others, why they were left out.

    `near_copies` are functions whose body another function of their module repeats: with
    its body removed, the answer would sit right next to it (workers.synthesis.trivial).
    """
    policy = policy or CandidatePolicy()
    chosen: list[str] = []
    skipped: dict[str, str] = {}
    suite = max(len(cmap.passing), 1)
    for fid in sorted(table.functions):
        reason = _exclusion(table.functions[fid], cmap, policy, suite)
        if not reason and fid in near_copies:
            reason = "a sibling repeats its body (the answer would be visible)"
        if reason:
            skipped[fid] = reason
        else:
            chosen.append(fid)
    if not chosen:
        # A small library whose every function most of the suite runs: those functions are
        # the library, so they are the candidates (an unfocused task beats no task at all).
        widely = [fid for fid, why in skipped.items() if why == WIDELY_COVERED]
        for fid in widely:
            del skipped[fid]
        chosen = sorted(widely)
    return chosen, skipped


def _exclusion(info: FunctionInfo, cmap: CoverageMap, policy: CandidatePolicy, suite: int) -> str:
    if is_test_path(info.path):
        return "test code"
    if info.nested:
        return "nested function"
    if info.declaration:
        return "no real body"
    if info.single_line:
        return "body shares a line with the signature or docstring"
    if info.statements < policy.min_statements:
        return "trivial body"
    if info.id in cmap.import_time:
        return "runs at import time"
    tests = cmap.tests_of.get(info.id, set())
    if not tests:
        return "not covered by a passing test"
    if len(tests) > policy.max_cover_share_floor and len(tests) / suite > policy.max_cover_share:
        return WIDELY_COVERED
    return ""
