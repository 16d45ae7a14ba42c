"""The engine end to end: reports for repositories it cannot use, and a real run on a tiny one."""

from pathlib import Path

from workers.sandbox import types as sandbox
from workers.sandbox.errors import EnvironmentBuildError
from workers.synthesis import synthesize_procedural
from workers.synthesis.source import SourceTree

SNAPSHOT = sandbox.Snapshot(Path("/nonexistent.git"), "0" * 40)


def synthesize(files, runner, **kwargs):
    return synthesize_procedural(
        snapshot=SNAPSHOT,
        environment=sandbox.EnvironmentSpec(),
        runner=runner,
        count=kwargs.pop("count", 3),
        seed=kwargs.pop("seed", 0),
        commit_base=lambda parent, patch, message: "1" * 40,
        tree=SourceTree(files=files),
        **kwargs,
    )


def test_a_sandbox_failure_is_reported_not_raised(shop_files):
    def runner(request):
        raise EnvironmentBuildError(
            environment_key="abc",
            command="pip install .",
            returncode=1,
            output_tail="ERROR: pip install . failed: no setup.py",
        )

    outcome = synthesize(shop_files, runner)
    assert outcome.proposals == []
    assert outcome.report["status"] == "unusable"
    assert "pip install . failed" in outcome.report["reason"]


def test_no_tests_or_only_failing_tests_are_reported(shop_files):
    empty = synthesize(shop_files, lambda request: sandbox.RunResult(exit_code=5))
    assert empty.report["reason"].startswith("no tests found at the snapshot")

    failing = sandbox.RunResult(
        tests={"t.py::a": sandbox.TestResult("t.py::a", sandbox.Outcome.FAILED)}, exit_code=1
    )
    outcome = synthesize(shop_files, lambda request: failing)
    assert outcome.report["reason"] == "none of the 1 tests passes at the snapshot"


def test_a_project_without_functions_is_reported():
    outcome = synthesize({"tests/test_x.py": "def test_a():\n    pass\n"}, lambda r: None)
    assert outcome.report["status"] == "unusable"
    assert "no Python functions" in outcome.report["reason"]


def test_progress_is_reported_and_stub_runs_only_select_relevant_tests(
    shop_files, shop_analysis, shop_coverage
):
    """A fake sandbox: every test passes at the snapshot; with stubs, tests of stubs fail."""
    test_functions, coverage_for = shop_coverage
    _, table, _, _ = shop_analysis
    passed = sandbox.Outcome.PASSED
    requests = []

    def runner(request):
        requests.append(request)
        if request.coverage:
            results = {t: sandbox.TestResult(t, passed) for t in test_functions}
            return sandbox.RunResult(tests=results, coverage=coverage_for(table), exit_code=0)
        stubbed = {
            fid
            for fid, info in table.functions.items()
            if f"def {info.name}(" in request.patches[0]
        }
        results = {}
        for test in request.tests:
            failed = set(test_functions[test]) & stubbed
            outcome = sandbox.Outcome.FAILED if failed else sandbox.Outcome.PASSED
            results[test] = sandbox.TestResult(test, outcome)
        return sandbox.RunResult(tests=results, exit_code=1)

    seen = []
    outcome = synthesize(shop_files, runner, progress=lambda p, m: seen.append(p), count=2)
    assert outcome.report["status"] == "ok", outcome.report
    assert 1 <= len(outcome.proposals) <= 2
    assert seen[0] <= seen[-1] == 100
    assert requests[0].coverage and requests[0].tests is None
    for request in requests[1:]:
        assert request.tests and not request.coverage and len(request.patches) == 1
    for proposal in outcome.proposals:
        assert proposal.fail_to_pass
        assert not set(proposal.fail_to_pass) & set(proposal.pass_to_pass)
        assert proposal.base_commit == "1" * 40
        assert {s.kind for s in proposal.specs} >= {"functional"}
        assert proposal.reference_parts and all(p.spec_keys for p in proposal.reference_parts)
    again = synthesize(shop_files, runner, count=2)
    assert [p.reference_patch for p in again.proposals] == [
        p.reference_patch for p in outcome.proposals
    ]


def test_a_loaded_machine_changes_nothing_a_seed_yields(shop_files, shop_analysis, shop_coverage):
    """Stub runs that hit the wall clock once (a busy machine) are run again with more time:
    the same seed gives the same tasks, in the same order, as on a quiet machine."""
    test_functions, coverage_for = shop_coverage
    _, table, _, _ = shop_analysis

    def quiet(request):
        if request.coverage:
            results = {t: sandbox.TestResult(t, sandbox.Outcome.PASSED) for t in test_functions}
            return sandbox.RunResult(tests=results, coverage=coverage_for(table), exit_code=0)
        stubbed = {
            fid
            for fid, info in table.functions.items()
            if f"def {info.name}(" in request.patches[0]
        }
        results = {}
        for test in request.tests:
            failed = set(test_functions[test]) & stubbed
            outcome = sandbox.Outcome.FAILED if failed else sandbox.Outcome.PASSED
            results[test] = sandbox.TestResult(test, outcome)
        return sandbox.RunResult(tests=results, exit_code=1)

    seen_slow: set[tuple] = set()
    limits_seen = []

    def busy(request):
        limits_seen.append(request.limits.wall_seconds)
        key = (request.patches, request.tests)
        if request.tests is not None and key not in seen_slow:
            seen_slow.add(key)
            return sandbox.RunResult(timed_out=True)
        return quiet(request)

    calm = synthesize(shop_files, quiet, count=3, seed=5)
    loaded = synthesize(shop_files, busy, count=3, seed=5)
    assert [p.reference_patch for p in loaded.proposals] == [
        p.reference_patch for p in calm.proposals
    ]
    assert loaded.rejected == calm.rejected
    assert max(limits_seen) == 2 * min(limits_seen)  # the retry had more time


def test_doctests_are_never_selected_as_tests_of_a_task(shop_files, shop_analysis, shop_coverage):
    """A doctest lives in the docstring of the code the stub edits: it can never be hidden as
    a test patch, so it is never a FAIL_TO_PASS or PASS_TO_PASS test (wcwidth met this)."""
    test_functions, coverage_for = shop_coverage
    _, table, _, _ = shop_analysis
    doctests = {f"{info.path}::{info.qualname}": [fid] for fid, info in table.functions.items()}
    everything = {**test_functions, **doctests}
    requests = []

    def runner(request):
        requests.append(request)
        if request.coverage:
            coverage = coverage_for(table)
            for nodeid, fids in doctests.items():
                info = table.functions[fids[0]]
                coverage[nodeid] = {info.path: list(info.body_lines)}
            results = {t: sandbox.TestResult(t, sandbox.Outcome.PASSED) for t in everything}
            return sandbox.RunResult(tests=results, coverage=coverage, exit_code=0)
        results = {t: sandbox.TestResult(t, sandbox.Outcome.FAILED) for t in request.tests}
        return sandbox.RunResult(tests=results, exit_code=1)

    outcome = synthesize(shop_files, runner, count=2)
    assert outcome.proposals
    stub_runs = [request for request in requests if not request.coverage]
    assert stub_runs and not any(set(r.tests) & set(doctests) for r in stub_runs)
    for proposal in outcome.proposals:
        assert not set(proposal.fail_to_pass + proposal.pass_to_pass) & set(doctests)
