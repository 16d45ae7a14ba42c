"""Detect a Python repository's layout from its file list and a few config files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

CONFIG_FILES = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini")
_PYTEST_HINT = re.compile(r"^\s*(import pytest|from pytest\b)|@pytest\.", re.M)
_UNITTEST_HINT = re.compile(r"^\s*(import unittest|from unittest\b)|unittest\.TestCase", re.M)


def is_test_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    name = parts[-1]
    return (
        any(part in {"tests", "test", "testing"} for part in parts[:-1])
        or name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
    )


def detect_layout(files: list[str], read: Callable[[str], str | None]) -> dict:
    """Package folders, src/ layout, test folders and files, test framework, config files."""
    file_set = set(files)
    python_files = [f for f in files if f.endswith(".py")]
    src_layout = any(f.startswith("src/") and f.endswith("/__init__.py") for f in files)
    packages = sorted(
        {
            str(PurePosixPath(f).parent)
            for f in python_files
            if f.endswith("__init__.py")
            and not is_test_path(f)
            and len(PurePosixPath(f).parts) == (3 if f.startswith("src/") else 2)
        }
    )
    test_files = sorted(
        f
        for f in python_files
        if is_test_path(f) and PurePosixPath(f).name != "conftest.py" and "/." not in f
    )
    test_dirs = sorted({str(PurePosixPath(f).parent) for f in test_files})
    config = [name for name in CONFIG_FILES if name in file_set]

    pytest_votes = unittest_votes = 0
    for name in ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"):
        text = read(name) if name in file_set else None
        if text and ("[pytest]" in text or "[tool:pytest]" in text or "[tool.pytest" in text):
            pytest_votes += 5
    if any(PurePosixPath(f).name == "conftest.py" for f in files):
        pytest_votes += 3
    for path in test_files[:50]:
        text = read(path) or ""
        pytest_votes += bool(_PYTEST_HINT.search(text))
        unittest_votes += bool(_UNITTEST_HINT.search(text))
    if not test_files:
        framework = "none"
    elif unittest_votes and not pytest_votes:
        framework = "unittest"
    else:
        framework = "pytest"

    requirements = sorted(f for f in files if re.fullmatch(r"requirements[\w.-]*\.txt", f))
    return {
        "src_layout": src_layout,
        "packages": packages,
        "modules": sorted(
            f for f in python_files if "/" not in f and not is_test_path(f) and f != "setup.py"
        ),
        "test_dirs": test_dirs,
        "test_files": len(test_files),
        "test_framework": framework,
        "config_files": config,
        "requirements": requirements,
        "python_files": len(python_files),
        "installable": bool({"pyproject.toml", "setup.py", "setup.cfg"} & file_set),
    }


def default_setup_command(layout: dict) -> str:
    if layout.get("installable"):
        return "pip install ."
    if layout.get("requirements"):
        return " && ".join(f"pip install -r {name}" for name in layout["requirements"])
    return ""
