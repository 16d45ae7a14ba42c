"""The whole-suite coverage run of a snapshot, kept in storage and made once.

It depends only on the commit and the environment (the recipe: build and pytest options), so
every later synthesis run and recipe try on that snapshot reuses it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from workers.sandbox.serialize import run_result_from_dict, run_result_to_dict
from workers.sandbox.types import RunRequest, RunResult

KEY_FORMAT = 2  # 2: the whole EnvironmentSpec, recipes' pytest options included


class CoverageCache:
    """Wrap a sandbox runner so that the coverage run of a snapshot happens once."""

    def __init__(self, runner: Callable[[RunRequest], RunResult], folder: Path):
        self.runner = runner
        self.folder = folder
        self.hits = 0

    def _key(self, request: RunRequest) -> str:
        material = json.dumps(
            [
                KEY_FORMAT,
                str(request.snapshot.git_dir),
                request.snapshot.commit,
                asdict(request.environment),
                request.limits.wall_seconds,
            ],
            sort_keys=True,
        )
        return hashlib.sha256(material.encode()).hexdigest()[:32]

    def __call__(self, request: RunRequest) -> RunResult:
        cacheable = request.coverage and not request.patches and request.tests is None
        if not cacheable:
            return self.runner(request)
        path = self.folder / f"{self._key(request)}.json"
        if path.exists():
            self.hits += 1
            return run_result_from_dict(json.loads(path.read_text()))
        result = self.runner(request)
        if result.ok and result.tests and result.coverage:
            self.folder.mkdir(parents=True, exist_ok=True)
            scratch = path.with_suffix(f".{id(result)}.tmp")
            scratch.write_text(json.dumps(run_result_to_dict(result)))
            scratch.replace(path)
        return result
