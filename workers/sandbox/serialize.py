"""RunResult to and from JSON-ready dicts, for caches and job results."""

from __future__ import annotations

import dataclasses
from typing import Any

from workers.sandbox.types import CollectionError, Outcome, PatchFailure, RunResult, TestResult


def run_result_to_dict(result: RunResult) -> dict[str, Any]:
    data = dataclasses.asdict(result)
    for test in data["tests"].values():
        test["outcome"] = str(test["outcome"])
    return data


def run_result_from_dict(data: dict[str, Any]) -> RunResult:
    values = dict(data)
    values["tests"] = {
        nodeid: TestResult(**{**test, "outcome": Outcome(test["outcome"])})
        for nodeid, test in data.get("tests", {}).items()
    }
    values["collection_errors"] = [CollectionError(**e) for e in data.get("collection_errors", [])]
    failure = data.get("patch_failure")
    values["patch_failure"] = PatchFailure(**failure) if failure else None
    known = {f.name for f in dataclasses.fields(RunResult)}
    return RunResult(**{k: v for k, v in values.items() if k in known})
