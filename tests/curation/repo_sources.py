"""Small repositories to import, made on the fly: a project folder, a git repository with two
commits, archives (tar.gz with optional links, zip)."""

from __future__ import annotations

import io
import os
import subprocess
import tarfile
import zipfile
from pathlib import Path

from workers import gitstore


def write_project(root: Path, *, tests: bool = True) -> Path:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text("def add(a, b):\n    return a + b\n")
    if tests:
        (root / "tests").mkdir()
        (root / "tests" / "test_add.py").write_text(
            "import pytest\nfrom pkg import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
        )
    (root / "pyproject.toml").write_text("[project]\nname='pkg'\nversion='0'\n")
    return root


def git_repo(root: Path) -> tuple[Path, list[str]]:
    """A work tree with two commits; returns it and the commit ids, newest first."""
    write_project(root)
    env = {**os.environ, **gitstore.GIT_IDENTITY}
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "one"], check=True, env=env)
    (root / "README.md").write_text("two\n")
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "two"], check=True, env=env)
    log = subprocess.run(
        ["git", "-C", str(root), "log", "--format=%H"], check=True, capture_output=True, text=True
    ).stdout.split()
    return root, log


def tar(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return path


def project_tar(path: Path, top: str = "proj") -> Path:
    """A tar.gz of a small installable project with one test file."""
    return tar(
        path,
        {
            f"{top}/pyproject.toml": b"[project]\nname='proj'\nversion='0'\n",
            f"{top}/proj/__init__.py": b"def double(x):\n    return 2 * x\n",
            f"{top}/tests/test_double.py": b"from proj import double\n\n"
            b"def test_double():\n    assert double(2) == 4\n",
        },
    )


def project_zip(path: Path, members: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in (members or {"z/__init__.py": "", "z/test_z.py": ""}).items():
            archive.writestr(name, text)
    return path
