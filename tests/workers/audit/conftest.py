"""The ledger task's facts as plain values, for the auditor's rules (no database)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workers.audit.facts import SpecFacts, TaskFacts, TestFacts

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "tests" / "fixtures" / "tasks" / "ledger_allocation"
ATTEMPTS = ROOT / "tests" / "fixtures" / "trajectories" / "ledger_allocation"
BASE_RESERVATIONS = ROOT / "examples" / "repos" / "ledger" / "src" / "ledger" / "reservations.py"


@pytest.fixture
def ledger_facts() -> TaskFacts:
    spec = json.loads((TASK / "task.json").read_text())
    roles = {t["nodeid"]: t["intended_role"] for t in spec["tests"]}
    roles["tests/test_allocation_spec.py::test_allocation_is_flaky_on_purpose"] = "flaky"
    return TaskFacts(
        instance_id="specloom__ledger-1",
        title=spec["title"],
        problem_statement=spec["problem_statement"],
        reference_patch=(TASK / "reference.patch").read_text(),
        test_patch=(TASK / "tests.patch").read_text(),
        specs=tuple(SpecFacts(s["key"], s["kind"], s["statement"]) for s in spec["specs"]),
        tests=tuple(
            TestFacts(t["nodeid"], roles[t["nodeid"]], tuple(t["specs"])) for t in spec["tests"]
        ),
    )


@pytest.fixture
def attempt():
    def read(name: str) -> str:
        return (ATTEMPTS / f"{name}.patch").read_text()

    return read


@pytest.fixture
def read_base():
    """The base files the ledger attempts edit (reservations.py as the sample has it)."""
    files = {"src/ledger/reservations.py": BASE_RESERVATIONS.read_text()}
    return files.get
