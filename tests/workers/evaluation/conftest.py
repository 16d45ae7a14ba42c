"""A real snapshot of the marktext sample repository at the hand-made task's base, and the real
sandbox (its environments cached with the app-level tests', same dependency files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers import gitstore
from workers.sandbox import get_backend
from workers.sandbox.types import EnvironmentSpec, Snapshot

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "tests" / "fixtures" / "tasks" / "marktext_toc"
SANDBOX_ROOT = Path("/var/tmp/specloom-test-jail-app")


@pytest.fixture(scope="session")
def marktext_base(tmp_path_factory) -> Snapshot:
    git_dir = tmp_path_factory.mktemp("marktext") / "marktext.git"
    commit = gitstore.commit_folder(ROOT / "examples" / "repos" / "marktext", git_dir, "sample")
    base = gitstore.commit_patch(git_dir, commit, (TASK / "base.patch").read_text(), "task base")
    return Snapshot(git_dir=git_dir, commit=base)


@pytest.fixture(scope="session")
def marktext_task() -> dict:
    spec = json.loads((TASK / "task.json").read_text())
    return {
        "reference_patch": (TASK / "reference.patch").read_text(),
        "test_patch": (TASK / "tests.patch").read_text(),
        "fail_to_pass": tuple(
            t["nodeid"] for t in spec["tests"] if t["intended_role"] == "FAIL_TO_PASS"
        ),
        "pass_to_pass": tuple(
            t["nodeid"] for t in spec["tests"] if t["intended_role"] == "PASS_TO_PASS"
        ),
        "spec_tests": tuple(
            (s["key"], tuple(t["nodeid"] for t in spec["tests"] if s["key"] in t["specs"]))
            for s in spec["specs"]
        ),
    }


@pytest.fixture(scope="session")
def backend():
    SANDBOX_ROOT.mkdir(parents=True, exist_ok=True)
    return get_backend("process", root=SANDBOX_ROOT)


@pytest.fixture
def counting_runner(backend):
    """The real sandbox, counting its runs."""

    class Runner:
        def __init__(self):
            self.requests = []

        def __call__(self, request):
            self.requests.append(request)
            return backend.run(request)

    return Runner()


@pytest.fixture
def environment() -> EnvironmentSpec:
    return EnvironmentSpec(setup_command="pip install .")
