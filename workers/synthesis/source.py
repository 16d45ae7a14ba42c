"""The Python files of a snapshot, and which of them are test code.

Synthesis only ever reads the snapshot; edits are made as text and turned into patches, so the
stored repository is never touched except through `commit_patch`.
"""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from workers.gitstore import archive_to
from workers.sandbox.types import Snapshot

# Folders that never hold project code worth synthesising from.
_SKIPPED_DIRS = {
    ".git",
    ".hg",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    "env",
    "build",
    "dist",
    "node_modules",
    "__pycache__",
    "site-packages",
    "docs",
    "doc",
    "examples",
    "benchmarks",
}


def is_test_path(path: str) -> bool:
    """Test code is never a candidate: tests/ folders, test_*.py, *_test.py and conftest.py."""
    parts = PurePosixPath(path).parts
    name = parts[-1]
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    return any(part in ("tests", "test", "testing") for part in parts[:-1])


@dataclass
class SourceTree:
    """Text of every Python file of one commit, keyed by POSIX path relative to the root."""

    files: dict[str, str]
    modes: dict[str, str] = field(default_factory=dict)  # git file mode, "100644" or "100755"
    # README and docs pages (markdown, reStructuredText, text): what the project documents.
    docs: dict[str, str] = field(default_factory=dict)

    def mode(self, path: str) -> str:
        return self.modes.get(path, "100644")

    @property
    def source_paths(self) -> list[str]:
        return sorted(p for p in self.files if not is_test_path(p))

    @property
    def test_paths(self) -> list[str]:
        return sorted(p for p in self.files if is_test_path(p))

    def module_name(self, path: str) -> str:
        """Dotted import name of a file, found by walking up the packages (src layout aware)."""
        parts = list(PurePosixPath(path).parts)
        stem = parts[-1].removesuffix(".py")
        names = [] if stem == "__init__" else [stem]
        folders = parts[:-1]
        while folders and "/".join([*folders, "__init__.py"]) in self.files:
            names.insert(0, folders.pop())
        return ".".join(names) or stem


_DOC_SUFFIXES = (".md", ".rst", ".txt", ".markdown")
_DOC_DIRS = ("docs", "doc")
_MAX_DOC_BYTES = 300_000
_MAX_DOCS = 300


def read_docs(root: Path) -> dict[str, str]:
    """The README files at the root and the pages under docs/ (or doc/), as text."""
    found: list[Path] = [
        p for p in sorted(root.iterdir()) if p.is_file() and p.name.lower().startswith("readme")
    ]
    for folder in _DOC_DIRS:
        base = root / folder
        if base.is_dir() and not base.is_symlink():
            found += sorted(
                p
                for p in base.rglob("*")
                if p.suffix.lower() in _DOC_SUFFIXES and p.is_file() and not p.is_symlink()
            )
    docs: dict[str, str] = {}
    for path in found[:_MAX_DOCS]:
        if path.is_symlink() or path.stat().st_size > _MAX_DOC_BYTES:
            continue
        try:
            docs[path.relative_to(root).as_posix()] = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            continue
    return docs


def read_tree(root: Path) -> SourceTree:
    files: dict[str, str] = {}
    modes: dict[str, str] = {}
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in _SKIPPED_DIRS and not d.startswith(".")
        )
        for filename in sorted(filenames):
            if not filename.endswith(".py"):
                continue
            full = Path(folder, filename)
            if full.is_symlink():
                continue
            rel = full.relative_to(root).as_posix()
            try:
                files[rel] = full.read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                continue  # not something we can edit as text safely
            executable = full.stat().st_mode & stat.S_IXUSR
            modes[rel] = "100755" if executable else "100644"
    return SourceTree(files=files, modes=modes, docs=read_docs(root))


def read_snapshot(snapshot: Snapshot) -> SourceTree:
    with tempfile.TemporaryDirectory(prefix="specloom-synth-") as scratch:
        dest = Path(scratch, "tree")
        archive_to(Path(snapshot.git_dir), snapshot.commit, dest)
        return read_tree(dest)
