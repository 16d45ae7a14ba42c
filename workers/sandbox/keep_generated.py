"""Copy the files a build generated into the work tree (`keep_generated.py BUILD WORK`).

Run in an environment image (images.py) after the build, which ran in a scratch copy BUILD of
the work tree WORK: a file that the build wrote and that WORK lacks is copied there and listed
in WORK's .git/info/exclude, so that git (and the SWE-bench harness's `git clean`) leaves it
alone. Kept are Python files (a setuptools-scm version module) and compiled extension modules
(`pkg/_speedups.abi3.so`, placed where an in-place build puts them by forget_project.py): the
tests run against the work tree, as `python -m pytest` from the repository root does, and the
project's own installed copy is gone. The process sandbox keeps the same files
(environments.py) and copies them into every run's working copy. Standalone: copied into images.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

NOT_GENERATED = {"build", "dist", ".eggs", "__pycache__", ".tox", ".git", ".pytest_cache"}
LIMIT_FILES = 200
# Bytes per file: a generated Python module is small; a compiled module with its tables is not.
LIMIT_PYTHON_BYTES, LIMIT_EXTENSION_BYTES = 1024**2, 64 * 1024**2


def kept_size_limit(name: str) -> int | None:
    """The largest file of this name that is kept, or None when such files are not kept."""
    if name.endswith(".py"):
        return LIMIT_PYTHON_BYTES
    if name.endswith(tuple(EXTENSION_SUFFIXES)):
        return LIMIT_EXTENSION_BYTES
    return None


def generated_files(build: Path, work: Path) -> list[str]:
    found = []
    for folder, dirnames, filenames in os.walk(build):
        dirnames[:] = sorted(
            name
            for name in dirnames
            if name not in NOT_GENERATED and not name.endswith(".egg-info")
        )
        for name in sorted(filenames):
            path = Path(folder) / name
            relative = path.relative_to(build).as_posix()
            limit = kept_size_limit(name)
            if (
                limit is not None
                and not path.is_symlink()
                and path.stat().st_size <= limit
                and not (work / relative).exists()
                and not (work / relative).is_symlink()
            ):
                found.append(relative)
    return found[:LIMIT_FILES]


def main() -> None:
    build, work = Path(sys.argv[1]), Path(sys.argv[2])
    kept = generated_files(build, work)
    for relative in kept:
        target = work / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(build / relative, target)
    exclude = work / ".git" / "info" / "exclude"
    if kept and exclude.parent.is_dir():
        with exclude.open("a", encoding="utf-8") as handle:
            handle.writelines(f"/{relative}\n" for relative in kept)
    print(json.dumps({"kept": kept}))


if __name__ == "__main__":
    main()
