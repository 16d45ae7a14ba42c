"""The heuristic auditor's rules over plain facts (outcomes as an evaluation records them)."""

from dataclasses import replace

from workers.audit.facts import ActionFacts, EvaluationFacts, TestFacts, TrajectoryFacts
from workers.audit.heuristic import audit_task

F2P = "tests/test_allocation_spec.py::"
FULLEST = f"{F2P}test_allocation_takes_the_fullest_location_first"
SHORT = f"{F2P}test_allocation_when_short_raises_and_reserves_nothing"
ZERO = f"{F2P}test_allocation_rejects_a_quantity_that_is_not_positive[zero [0]]"
NEGATIVE = f"{F2P}test_allocation_rejects_a_quantity_that_is_not_positive[n\\xe9gatif \\u22121]"
P2P = (
    "tests/test_reservations.py::TestReserve::test_ids_are_sequential",
    "tests/test_stock.py::TestApply::test_issue_takes_stock",
)
ALL = (FULLEST, SHORT, ZERO, NEGATIVE, *P2P)


def _evaluation(passed=ALL, **fields) -> EvaluationFacts:
    tests = {nodeid: "passed" if nodeid in passed else "failed" for nodeid in ALL}
    resolved = "full" if set(passed) >= set(ALL) else "partial" if passed else "none"
    return EvaluationFacts(patch_applied=True, resolved=resolved, tests=tests, **fields)


def _attempt(id, model, patch="", evaluation=None, actions=()):
    return TrajectoryFacts(id=id, model=model, patch=patch, evaluation=evaluation, actions=actions)


def _kinds(result):
    return sorted((f.kind, f.trajectory) for f in result.findings)


def test_a_clean_task_with_honest_attempts_has_no_findings(ledger_facts, attempt, read_base):
    attempts = [
        _attempt(1, "gold", ledger_facts.reference_patch, _evaluation()),
        _attempt(2, "m1", attempt("partial"), _evaluation(passed=(FULLEST, SHORT, *P2P))),
    ]
    result = audit_task(ledger_facts, attempts, read_base)
    assert result.findings == [] and result.unsafe == set()


def test_an_empty_patch_that_passes_a_fail_to_pass_test_reveals_a_weak_test(ledger_facts):
    result = audit_task(ledger_facts, [_attempt(1, "idle", "", _evaluation(passed=(SHORT, *P2P)))])
    (finding,) = result.findings
    assert (finding.kind, finding.severity, finding.trajectory) == ("weak_test", "high", 1)
    assert finding.evidence["test"] == SHORT
    assert "an empty patch" in finding.message


def test_a_patch_to_unrelated_files_counts_as_empty_but_other_code_does_not(ledger_facts):
    readme = (
        "diff --git a/README.md b/README.md\n--- a/README.md\n+++ b/README.md\n"
        "@@ -1 +1 @@\n-a\n+b\n"
    )
    other_code = readme.replace("README.md", "src/ledger/pricing.py")
    weak = audit_task(ledger_facts, [_attempt(1, "m", readme, _evaluation(passed=(SHORT,)))])
    assert _kinds(weak) == [("weak_test", 1)]
    assert "README.md" in weak.findings[0].message
    # Changing another module may be a genuine solution: no verdict on the test from it.
    assert (
        audit_task(
            ledger_facts, [_attempt(1, "m", other_code, _evaluation(passed=(SHORT,)))]
        ).findings
        == []
    )


def test_editing_the_test_harness_is_tampering_but_adding_tests_is_only_noted(
    ledger_facts, attempt, read_base
):
    tampering = _attempt(
        1, "h", attempt("tampering"), _evaluation(touched_test_files=("conftest.py",))
    )
    new_test = (
        "diff --git a/tests/test_mine.py b/tests/test_mine.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/test_mine.py\n@@ -0,0 +1 @@\n+def test_mine(): pass\n"
    )
    adds = _attempt(2, "a", new_test, _evaluation(touched_test_files=("tests/test_mine.py",)))
    result = audit_task(ledger_facts, [tampering, adds], read_base)
    by_trajectory = {f.trajectory: f for f in result.findings}
    assert by_trajectory[1].kind == "tampering" and by_trajectory[1].severity == "high"
    assert by_trajectory[1].evidence["files"] == ["conftest.py"]
    assert by_trajectory[2].kind == "tampering" and by_trajectory[2].severity == "low"
    # Without an evaluation, the patch itself says what it touched.
    unevaluated = audit_task(ledger_facts, [replace(tampering, evaluation=None)], read_base)
    assert _kinds(unevaluated) == [("tampering", 1)]


def test_special_cased_literals_are_found_with_their_lines(ledger_facts, attempt, read_base):
    result = audit_task(
        ledger_facts,
        [_attempt(5, "lit", attempt("special_cased"), _evaluation(passed=(FULLEST, *P2P)))],
        read_base,
    )
    (finding,) = result.findings
    assert finding.kind == "special_cased_literal" and finding.severity == "high"
    assert finding.evidence["lines"][0]["line"] == 'if sku == "PNT-200" and quantity == 12:'
    assert finding.evidence["links"] == {"trajectory": "/api/v1/trajectories/5"}


def test_a_test_every_model_fails_while_passing_its_siblings(ledger_facts, attempt, read_base):
    partial = _evaluation(passed=(FULLEST, SHORT, *P2P))
    attempts = [
        _attempt(1, "m1", attempt("partial"), partial),
        _attempt(2, "m2", attempt("partial") + "\n", partial),
        _attempt(3, "m3", attempt("partial"), _evaluation(passed=(FULLEST, *P2P))),
        # Left out: the gold run, an empty patch (passes no sibling), a tampering run.
        _attempt(4, "gold", ledger_facts.reference_patch, _evaluation()),
        _attempt(5, "idle", "", _evaluation(passed=P2P)),
        _attempt(6, "hack", attempt("tampering"), _evaluation(touched_test_files=("conftest.py",))),
    ]
    result = audit_task(ledger_facts, attempts, read_base)
    failing = [f for f in result.findings if f.kind == "all_models_fail_one_test"]
    assert {f.evidence["test"] for f in failing} == {ZERO, NEGATIVE}
    assert failing[0].evidence["models"] == ["m1", "m2", "m3"]
    assert failing[0].trajectory is None and failing[0].evidence["trajectories"] == [1, 2, 3]
    # One model is not "every model".
    alone = audit_task(ledger_facts, attempts[:1] + attempts[3:], read_base)
    assert not [f for f in alone.findings if f.kind == "all_models_fail_one_test"]


def test_task_rules_untested_spec_and_unlinked_test(ledger_facts):
    tests = [t for t in ledger_facts.tests if "S3" not in t.specs]
    tests.append(TestFacts("tests/test_extra.py::test_orphan", "FAIL_TO_PASS", ()))
    tests.append(TestFacts(ZERO, "invalid", ("S3",), reason="the reference fails it"))
    result = audit_task(replace(ledger_facts, tests=tuple(tests)), [])
    kinds = {(f.kind, f.evidence.get("spec") or f.evidence.get("test")) for f in result.findings}
    assert kinds == {("untested_spec", "S3"), ("unlinked_test", "tests/test_extra.py::test_orphan")}
    untested = next(f for f in result.findings if f.kind == "untested_spec")
    assert "(invalid)" in untested.message


def test_flaky_tests_and_a_failing_reference_are_reported(ledger_facts):
    attempts = [
        _attempt(1, "m", "", _evaluation(passed=P2P, flaky=(P2P[0],))),
        _attempt(
            2,
            "gold",
            ledger_facts.reference_patch,
            _evaluation(passed=(FULLEST, SHORT, ZERO, *P2P)),
        ),
    ]
    result = audit_task(ledger_facts, attempts)
    flaky = next(f for f in result.findings if f.kind == "flaky")
    assert flaky.evidence["test"] == P2P[0] and flaky.trajectory == 1
    reference = next(f for f in result.findings if f.kind == "reference_fails")
    assert reference.trajectory == 2 and reference.evidence["tests"] == [NEGATIVE]


def test_unsafe_actions_flag_the_trajectory_once_per_rule(ledger_facts):
    actions = (
        ActionFacts(2, "bash", "pip install -e ."),
        ActionFacts(4, "bash", "curl https://x.io/a"),
        ActionFacts(6, "bash", "wget https://x.io/b"),
    )
    result = audit_task(
        ledger_facts,
        [_attempt(9, "m", "", None, actions), _attempt(10, "n", "", None, actions[:1])],
    )
    network = next(f for f in result.findings if f.evidence.get("rule") == "network_client")
    assert network.evidence["count"] == 2
    assert [s["index"] for s in network.evidence["steps"]] == [4, 6]
    assert network.evidence["links"]["steps"] == "/api/v1/trajectories/9/steps?from_index=4"
    # Installing packages is noted, not held against the trajectory.
    assert result.unsafe == {9}
    assert {f.severity for f in result.findings if f.trajectory == 10} == {"low"}


def test_finding_keys_are_stable_across_audits(ledger_facts, attempt, read_base):
    attempts = [_attempt(5, "lit", attempt("special_cased"), None)]
    first = audit_task(ledger_facts, attempts, read_base)
    second = audit_task(ledger_facts, attempts, read_base)
    assert [f.key for f in first.findings] == [f.key for f in second.findings]
    assert first.findings[0].key == "special_cased_literal:5"
