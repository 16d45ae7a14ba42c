"""Uninstall the distributions installed from one source folder: `python -I forget_project.py SRC`.

Run by an environment's own interpreter right after the setup command, so that the environment
keeps the project's dependencies but not the project: every run puts its own working copy on
sys.path instead. Distributions installed from a local folder carry PEP 610's direct_url.json
with a file:// URL; those pointing exactly at SRC are the project. Prints their names as JSON.
Standalone: also copied into Docker images.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
from importlib import metadata
from pathlib import Path
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
    if names:
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--yes", *names], check=True)
    print(json.dumps({"uninstalled": names, "removed": remove_stray_test_packages()}))


if __name__ == "__main__":
    main()
