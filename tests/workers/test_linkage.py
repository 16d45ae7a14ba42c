"""Which tests verify which specs, and observed edges, established from validation's runs."""

from __future__ import annotations

from workers.linkage import SpecEvidence, TestEvidence, link_specs

A, B = "pkg/m.py::a", "pkg/m.py::b"
PARTS = [A, B]


def evidence(nodeid, role="FAIL_TO_PASS", needs=()):
    return TestEvidence(nodeid, role, tuple(needs))


TESTS = [
    evidence("t::both", needs=[A, B]),
    evidence("t::only_a", needs=[A]),
    evidence("t::only_b", needs=[B]),
    evidence("t::neither_alone"),  # fails only when both are missing
    evidence("t::p2p", role="PASS_TO_PASS"),
    evidence("t::flaky", role="flaky", needs=[A]),
]


def test_a_claim_holds_only_for_a_fail_to_pass_test_that_needs_the_specs_part():
    specs = [
        SpecEvidence("S1", A, True, ("t::both", "t::only_a", "t::only_b", "t::neither_alone")),
        SpecEvidence("S2", B, True, ("t::only_b",)),
    ]
    linkage = link_specs(specs=specs, tests=TESTS, parts=PARTS)
    # t::only_b passes without part a: it does not verify a spec of part a.
    assert linkage.verified_by["S1"] == ["t::both", "t::neither_alone", "t::only_a"]
    assert linkage.verified_by["S2"] == ["t::only_b"]


def test_a_spec_no_test_verifies_is_unverified_with_the_reason():
    specs = [
        SpecEvidence("S1", A, True, ("t::only_a",)),
        SpecEvidence("S2", A, False, ()),
        SpecEvidence("S3", A, False, ("t::p2p", "t::flaky")),
        SpecEvidence("S4", A, False, ("t::only_b",)),
    ]
    linkage = link_specs(specs=specs, tests=TESTS, parts=PARTS)
    assert [k for k in ("S1", "S2", "S3", "S4") if linkage.verified(k)] == ["S1"]
    assert linkage.notes["S2"] == "no test of the task is said to verify it"
    assert "none of its 2 test(s) is a FAIL_TO_PASS test" in linkage.notes["S3"]
    assert linkage.notes["S4"] == f"none of its FAIL_TO_PASS tests fails without {A}"


def test_observed_edges_come_only_from_tests_that_verify_the_source_and_need_the_target_part():
    specs = [
        SpecEvidence("S1", A, True, ("t::both", "t::only_a")),  # contract of a
        SpecEvidence("S2", B, True, ("t::only_b",)),  # contract of b
        SpecEvidence("S3", A, False, ("t::both",)),  # an error spec of a, checked by t::both
        SpecEvidence("S4", B, False, ("t::only_b",)),  # a behaviour of b
        SpecEvidence("S5", A, False, ()),  # untested
    ]
    linkage = link_specs(specs=specs, tests=TESTS, parts=PARTS)
    edges = {(e.from_key, e.to_key): e for e in linkage.observed}
    # t::both verifies S1 and S3 and fails without b: both need b's contract, nothing more.
    assert set(edges) == {("S1", "S2"), ("S3", "S2")}
    assert edges[("S1", "S2")].detail == f"t::both fails without {B}"
    # Not copied onto every pair: no edge into S3/S4 (they stand for no part), none for S5.
    assert not any("S5" in pair for pair in edges)


def test_without_the_full_interaction_check_no_part_is_checked_and_no_edge_observed():
    specs = [SpecEvidence("S1", A, True, ("t::only_b",)), SpecEvidence("S2", B, True, ("t::both",))]
    linkage = link_specs(specs=specs, tests=TESTS, parts=[])
    assert linkage.verified_by["S1"] == ["t::only_b"]
    assert linkage.observed == []


def test_a_spec_without_a_part_stands_for_the_one_part_all_its_tests_need():
    specs = [
        SpecEvidence("S1", "", False, ("t::only_a",)),
        SpecEvidence("S2", "", False, ("t::both",)),
    ]
    linkage = link_specs(specs=specs, tests=TESTS, parts=PARTS)
    assert linkage.owners == {A: "S1"}
    assert [(e.from_key, e.to_key) for e in linkage.observed] == [("S2", "S1")]


def test_a_spec_a_person_wrote_stands_for_the_part_its_statement_names():
    # The contract and the error spec both name part a: the contract stands for it.
    specs = [
        SpecEvidence("S1", claimed=("t::both", "t::only_a"), kind="functional", named_part=A),
        SpecEvidence("S2", claimed=("t::only_a",), kind="error-handling", named_part=A),
        SpecEvidence("S3", claimed=("t::only_b",), kind="interface", named_part=B),
    ]
    linkage = link_specs(specs=specs, tests=TESTS, parts=PARTS)
    assert linkage.owners == {A: "S1", B: "S3"}
    assert {(e.from_key, e.to_key) for e in linkage.observed} == {("S1", "S3")}
