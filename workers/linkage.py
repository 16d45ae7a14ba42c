"""Which tests verify which specs, and which specs need which, established from the runs.

Plain Python (no Django), the same for every engine and for tasks people wrote. The author of a
task (the procedural engine, a model, a curator) *claims* tests for each spec; validation then
keeps only the claims its runs bear out:

- a claimed test verifies a spec only when it is a FAIL_TO_PASS test after validation and, when
  the spec lives in one part of the reference and every part was left out once, the test fails
  without that part (or without no single part: it then fails only when several are missing);
- a spec no test verifies is *unverified*: it stays visible with the reason, and is never
  counted;
- an observed edge A -> B exists only where a test that verifies A fails when only the part
  behind B is removed, the part being another than A's own. The spec behind a part is the one
  that stands for it (its function's contract), so a co-failure is one edge per test and part,
  never copied onto every pair of specs; unverified specs get no edges at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FAIL_TO_PASS = "FAIL_TO_PASS"
_DETAIL_TESTS = 3


@dataclass(frozen=True)
class SpecEvidence:
    key: str
    part: str = ""  # the reference part its behaviour lives in; "" when it spans several
    owns_part: bool = False  # it stands for its part (the contract of the function the part is)
    claimed: tuple[str, ...] = ()  # node ids of the tests its author says verify it
    kind: str = ""
    # For a spec its author did not place: the one part whose function its statement names.
    named_part: str = ""


@dataclass(frozen=True)
class TestEvidence:
    __test__ = False  # not a pytest class, despite the name

    nodeid: str
    role: str
    needs_parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class ObservedEdge:
    from_key: str
    to_key: str
    part: str  # the part behind `to_key` whose removal made the tests fail
    tests: tuple[str, ...]  # tests that verify `from_key` and fail without `part`

    @property
    def detail(self) -> str:
        shown = "; ".join(f"{t} fails without {self.part}" for t in self.tests[:_DETAIL_TESTS])
        more = len(self.tests) - _DETAIL_TESTS
        return shown + (f" (+{more} more)" if more > 0 else "")


@dataclass
class Linkage:
    verified_by: dict[str, list[str]] = field(default_factory=dict)  # spec key -> node ids
    notes: dict[str, str] = field(default_factory=dict)  # unverified spec key -> why
    owners: dict[str, str] = field(default_factory=dict)  # part -> the spec that stands for it
    observed: list[ObservedEdge] = field(default_factory=list)

    def verified(self, key: str) -> bool:
        return bool(self.verified_by.get(key))


def link_specs(
    *, specs: list[SpecEvidence], tests: list[TestEvidence], parts: list[str]
) -> Linkage:
    """Verifiers, reasons and observed edges of one validated task.

    `parts` are the parts every one of which was left out once (empty when the interaction check
    did not run in full: then no claim is checked against a part and no edge is observed).
    """
    by_id = {t.nodeid: t for t in tests}
    known_parts = set(parts)
    linkage = Linkage()
    for spec in specs:
        verifiers, note = _verifiers(spec, by_id, known_parts)
        linkage.verified_by[spec.key] = verifiers
        if not verifiers:
            linkage.notes[spec.key] = note
    linkage.owners = _owners(specs, linkage, by_id, known_parts)
    linkage.observed = _observed(specs, linkage, by_id)
    return linkage


def _verifiers(
    spec: SpecEvidence, tests: dict[str, TestEvidence], parts: set[str]
) -> tuple[list[str], str]:
    claimed = [tests[n] for n in dict.fromkeys(spec.claimed) if n in tests]
    if not claimed:
        return [], "no test of the task is said to verify it"
    failing = [t for t in claimed if t.role == FAIL_TO_PASS]
    if not failing:
        roles = sorted({t.role for t in claimed})
        return [], (
            f"none of its {len(claimed)} test(s) is a FAIL_TO_PASS test after validation "
            f"({', '.join(roles)})"
        )
    if spec.part and spec.part in parts:
        needing = [t for t in failing if spec.part in t.needs_parts or not t.needs_parts]
        if not needing:
            return [], f"none of its FAIL_TO_PASS tests fails without {spec.part}"
        failing = needing
    return sorted(t.nodeid for t in failing), ""


def _owners(
    specs: list[SpecEvidence],
    linkage: Linkage,
    tests: dict[str, TestEvidence],
    parts: set[str],
) -> dict[str, str]:
    """The verified spec that stands for each part, when exactly one does.

    Its author says so (`owns_part`); otherwise, for specs its author did not place, the one
    spec that names the part's function (a contract rather than an error, when several do), or
    the one whose tests all need that part and no other. An error spec never stands for a part:
    it refines the contract of one.
    """
    owners: dict[str, str] = {}
    declared: dict[str, list[str]] = {}
    named: dict[str, list[SpecEvidence]] = {}
    needed: dict[str, list[str]] = {}
    for spec in specs:
        if not linkage.verified(spec.key):
            continue
        if spec.owns_part and spec.part in parts:
            declared.setdefault(spec.part, []).append(spec.key)
        elif spec.part:
            continue
        elif spec.named_part in parts:
            named.setdefault(spec.named_part, []).append(spec)
        elif spec.kind != "error-handling":
            common = set.intersection(
                *(set(tests[n].needs_parts) for n in linkage.verified_by[spec.key])
            )
            if len(common) == 1:
                needed.setdefault(next(iter(common)), []).append(spec.key)
    for part, keys in declared.items():
        if len(keys) == 1:
            owners[part] = keys[0]
    for part, candidates in named.items():
        if part in owners or part in declared:
            continue
        if len(candidates) > 1:
            candidates = [c for c in candidates if c.kind != "error-handling"]
        if len(candidates) == 1:
            owners[part] = candidates[0].key
    for part, keys in needed.items():
        if part not in owners and part not in declared and part not in named and len(keys) == 1:
            owners[part] = keys[0]
    return owners


def _observed(
    specs: list[SpecEvidence], linkage: Linkage, tests: dict[str, TestEvidence]
) -> list[ObservedEdge]:
    own_part = {s.key: s.part or s.named_part for s in specs}
    for part, key in linkage.owners.items():
        own_part.setdefault(key, part)
        if not own_part[key]:
            own_part[key] = part
    found: dict[tuple[str, str], list[str]] = {}
    part_of_edge: dict[tuple[str, str], str] = {}
    for spec in specs:
        for nodeid in linkage.verified_by.get(spec.key, []):
            for part in tests[nodeid].needs_parts:
                target = linkage.owners.get(part)
                if target is None or target == spec.key or part == own_part.get(spec.key):
                    continue
                found.setdefault((spec.key, target), []).append(nodeid)
                part_of_edge[(spec.key, target)] = part
    return [
        ObservedEdge(source, target, part_of_edge[(source, target)], tuple(sorted(set(nodes))))
        for (source, target), nodes in sorted(found.items())
    ]
