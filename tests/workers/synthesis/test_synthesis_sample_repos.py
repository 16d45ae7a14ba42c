"""Synthesis on the sample repositories with the real process sandbox.

Each task is checked the way the validator will: at the base commit with the hidden tests put
back, FAIL_TO_PASS tests fail and PASS_TO_PASS tests pass; with the reference patch too, all pass.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from workers.gitstore import commit_folder, read_file
from workers.sandbox import get_backend
from workers.sandbox.types import EnvironmentSpec, Outcome, RunRequest, Snapshot
from workers.synthesis import synthesize_procedural
from workers.synthesis.statement import leaks
from workers.synthesis.stubs import STUB

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[3] / "examples" / "repos"
SANDBOX_ROOT = Path("/var/tmp/specloom-test-jail")
TASKS = 10


@pytest.fixture(scope="module")
def runner():
    return get_backend("process", root=SANDBOX_ROOT).run


def import_sample(name: str, tmp_path_factory) -> Snapshot:
    source = EXAMPLES / name
    if not source.is_dir():
        pytest.skip(f"sample repository {name} is missing")
    folder = tmp_path_factory.mktemp(name) / "src"
    shutil.copytree(source, folder, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    git_dir = folder.parent / "repo.git"
    return Snapshot(git_dir, commit_folder(folder, git_dir, "import sample"))


@pytest.fixture(scope="module", params=["ledger", "marktext"])
def synthesized(request, runner, tmp_path_factory):
    snapshot = import_sample(request.param, tmp_path_factory)
    outcome = synthesize_procedural(
        snapshot=snapshot,
        environment=EnvironmentSpec(),
        runner=runner,
        count=TASKS,
        seed=7,
    )
    return snapshot, outcome


def test_it_makes_enough_tasks(synthesized):
    _, outcome = synthesized
    report = outcome.report
    assert report["status"] == "ok", report
    assert len(outcome.proposals) >= TASKS, report
    assert report["tasks"] == len(outcome.proposals)
    assert report["mean_specs_per_task"] >= 4
    functions = [f for p in outcome.proposals for f in p.metadata["functions"]]
    assert len(functions) == len(set(functions)), "two tasks share a function"


def test_fail_to_pass_fails_at_base_and_everything_passes_with_the_reference(synthesized, runner):
    snapshot, outcome = synthesized
    for proposal in outcome.proposals:
        base = Snapshot(snapshot.git_dir, proposal.base_commit)
        tests = tuple(proposal.fail_to_pass + proposal.pass_to_pass)
        before = runner(RunRequest(snapshot=base, patches=(proposal.test_patch,), tests=tests))
        assert before.patch_failure is None and not before.collection_errors, proposal.title
        for test in proposal.fail_to_pass:
            assert before.tests[test].outcome in (Outcome.FAILED, Outcome.ERROR), test
        for test in proposal.pass_to_pass:
            assert before.tests[test].outcome == Outcome.PASSED, test
        after = runner(
            RunRequest(
                snapshot=base, patches=(proposal.test_patch, proposal.reference_patch), tests=tests
            )
        )
        assert after.patch_failure is None, proposal.title
        failing = [t for t in tests if after.tests[t].outcome != Outcome.PASSED]
        assert failing == [], proposal.title


def test_base_holds_stubs_and_no_hidden_tests_and_statements_hold_no_code(synthesized):
    snapshot, outcome = synthesized
    for proposal in outcome.proposals:
        for fid in proposal.metadata["functions"]:
            path = fid.split("::")[0]
            assert STUB in read_file(snapshot.git_dir, proposal.base_commit, path)
        for hidden in proposal.metadata["hidden_tests"]:
            path, _, rest = hidden.partition("::")
            text = read_file(snapshot.git_dir, proposal.base_commit, path) or ""
            name = rest.split("[")[0].split("::")[-1]
            assert f"def {name}(" not in text or "::" in rest, hidden
        removed = [
            line[1:].strip()
            for line in proposal.reference_patch.splitlines()
            if line.startswith("+") and not line.startswith("+++")
        ]
        assert leaks(proposal.problem_statement, removed) == []
        assert {s.kind for s in proposal.specs} >= {"functional"}
        keys = {s.key for s in proposal.specs}
        assert all(k in keys for part in proposal.reference_parts for k in part.spec_keys)
        assert len(proposal.reference_parts) == len(proposal.metadata["functions"])
