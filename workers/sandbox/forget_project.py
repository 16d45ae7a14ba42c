"""Uninstall the distributions installed from one source folder: `python -I forget_project.py SRC`.

Run by an environment's own interpreter right after the setup command, so that the environment
keeps the project's dependencies but not the project: every run puts its own working copy on
sys.path instead. Distributions installed from a local folder carry PEP 610's direct_url.json
with a file:// URL; those pointing exactly at SRC are the project. Prints their names as JSON.

A project's compiled extension modules exist only in its installed copy (a wheel build leaves
them in build/lib*/ at best, and other build backends elsewhere). Before the project is
uninstalled they are copied into SRC where an in-place build (`setup.py build_ext --inplace`)
puts them, next to the package's Python files, so that the runs' working copies get them as
they get other generated files (keep_generated.py, environments.py). An optional extension that
did not build is simply not there. Standalone: also copied into Docker images.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlparse


def installed_from(source: Path) -> list[str]:
    names = []
    for dist in metadata.distributions():
        text = dist.read_text("direct_url.json")
        if not text:
            continue
        try:
            url = urlparse(json.loads(text).get("url", ""))
        except (ValueError, AttributeError):
            continue
        if url.scheme == "file" and Path(unquote(url.path)).resolve() == source:
            names.append(dist.metadata["Name"])
    return sorted(set(names))


def place_extension_modules(source: Path, names: list[str]) -> list[str]:
    """Copy the extension modules of the distributions `names` from the environment into
    `source`, where an in-place build puts them; never over a file of the source. Returns the
    paths placed, relative to `source`."""
    placed = []
    for dist in metadata.distributions():
        if dist.metadata["Name"] not in names:
            continue
        for record in dist.files or ():
            relative = PurePosixPath(str(record))
            if ".." in relative.parts or not relative.name.endswith(tuple(EXTENSION_SUFFIXES)):
                continue  # outside the import path (scripts), or not an extension module
            installed = Path(dist.locate_file(record))
            target_relative = in_place_folder(source, relative) / relative
            target = source / target_relative
            if not installed.is_file() or target.exists() or target.is_symlink():
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(installed, target)
            placed.append(target_relative.as_posix())
    return sorted(placed)


def in_place_folder(source: Path, relative: PurePosixPath) -> PurePosixPath:
    """Where the import path starts in the source for an installed file: the root, or src/ when
    the package's folder is there (the runs put both on sys.path)."""
    if len(relative.parts) > 1:
        for folder in ("", "src"):
            if (source / folder / relative.parts[0]).is_dir():
                return PurePosixPath(folder)
    return PurePosixPath("src" if (source / "src").is_dir() else "")


def remove_stray_test_packages() -> list[str]:
    """Top-level `tests`/`test` packages some wheels install by mistake: as regular packages
    they would shadow the repository's own tests folder (a namespace package when it has no
    __init__.py) and break its imports."""
    removed = []
    for site_dir in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        for name in ("tests", "test"):
            package = Path(site_dir) / name
            if (package / "__init__.py").is_file() and not package.is_symlink():
                shutil.rmtree(package)
                removed.append(str(package))
    return removed


def main() -> None:
    source = Path(sys.argv[1]).resolve()
    names = installed_from(source)
    placed = place_extension_modules(source, names)
    if names:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", *names], check=True)
    removed = remove_stray_test_packages()
    print(json.dumps({"uninstalled": names, "extension_modules": placed, "removed": removed}))


if __name__ == "__main__":
    main()
