"""The environment images a release ships: `environments/<hash>/` beside the task files.

Every released task names its environment in the manifest (`environment`: the hash, `image`:
`<prefix>:<hash>`); every distinct environment gets a folder with the build context of its
image (workers.sandbox.images: `Dockerfile`, `forget_project.py`, `keep_generated.py`,
`source.tar.gz`), which `docker build` takes as it is and which is exactly what the docker
backend builds. The datasheet lists each folder's files with their SHA-256. The hash is the
SHA-256 of the Dockerfile, which names the commit, so the manifest's own digest vouches for
every Dockerfile too.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path
from typing import Any

from curation.exports.harness import harness_row
from workers.sandbox import SandboxError, Snapshot
from workers.sandbox.images import ImageSpec, build_context

FOLDER = "environments"


class ReleaseEnvironments:
    """Collects the environments of a release's records, then writes their folders."""

    def __init__(self) -> None:
        self._images: dict[str, tuple[ImageSpec, str, str]] = {}
        self._tasks: dict[str, int] = {}

    def add(self, record: Any) -> dict[str, str]:
        """The manifest's `environment` and `image` of a record ({} without an environment)."""
        holder = getattr(record, "harness", None)
        image = harness_row(record).get("image") if holder is not None else ""
        if not image:
            return {}
        environment = holder.environment
        spec = environment.image_spec(record["base_commit"])
        self._images.setdefault(spec.hash, (spec, environment.git_dir, image))
        self._tasks[spec.hash] = self._tasks.get(spec.hash, 0) + 1
        return {"environment": spec.hash, "image": image}

    def write(self, folder: Path, *, root_path: str) -> dict[str, dict[str, Any]]:
        """Write `folder/environments/<hash>/...`; the datasheet's description of them (paths
        relative to the release root, under `root_path`)."""
        sheet: dict[str, dict[str, Any]] = {}
        if not self._images:
            return sheet
        with tempfile.TemporaryDirectory(prefix="release-env-") as scratch:
            for key in sorted(self._images):
                spec, git_dir, image = self._images[key]
                entry: dict[str, Any] = {"image": image, "tasks": self._tasks[key], "files": {}}
                try:
                    files = build_context(
                        Snapshot(Path(git_dir), spec.commit), spec, scratch=Path(scratch)
                    )
                except SandboxError as exc:
                    # A repository whose files are gone (or a commit it lacks): the manifest
                    # still names the image; the datasheet says why its files are missing.
                    entry["error"] = f"its build context cannot be made: {exc}"[:500]
                    sheet[key] = entry
                    continue
                target = folder / FOLDER / key
                target.mkdir(parents=True)
                for name in sorted(files):
                    (target / name).write_bytes(files[name])
                    entry["files"][name] = {
                        "path": f"{root_path}/{FOLDER}/{key}/{name}",
                        "sha256": hashlib.sha256(files[name]).hexdigest(),
                        "bytes": len(files[name]),
                    }
                sheet[key] = entry
        return sheet
