"""Fixtures for the sandbox engine's tests: real git repositories, real runs.

Environments are built under one sandbox root that outlives the test session
(/var/tmp/specloom-test-jail, or $SPECLOOM_TEST_SANDBOX_ROOT), so only the first session
pays for building the sample repository's environment.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from workers.sandbox import Backend, Snapshot, get_backend
from workers.sandbox.process import ProcessBackend

SAMPLE_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "sampleproj"
version = "0.1.0"
dependencies = ["six"]

[tool.setuptools.packages.find]
where = ["src"]
"""

SAMPLE_PACKAGE = """\
def add(a, b):
    return a + b


def mul(a, b):
    return a * b
"""

# Every sample repository shares these dependency files, hence one environment key.
SAMPLE_FILES = {
    "pyproject.toml": SAMPLE_PYPROJECT,
    "src/sampleproj/__init__.py": SAMPLE_PACKAGE,
}

_GIT_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/nonexistent",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_AUTHOR_NAME": "Sample",
    "GIT_AUTHOR_EMAIL": "sample@example.invalid",
    "GIT_COMMITTER_NAME": "Sample",
    "GIT_COMMITTER_EMAIL": "sample@example.invalid",
}

NEEDS_ROOT_REASON = (
    "needs root: the hostile-code suite checks the full isolation (network namespace, "
    "user nobody), which only root can set up"
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"needs_root: {NEEDS_ROOT_REASON}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("needs_root") and os.geteuid() != 0:
        pytest.skip(NEEDS_ROOT_REASON)


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=_GIT_ENV, capture_output=True, text=True, check=True
    ).stdout.strip()


def write_files(folder: Path, files: dict[str, str]) -> None:
    for relative, content in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content), encoding="utf-8")


MakeSnapshot = Callable[..., Snapshot]


@pytest.fixture(scope="session")
def make_snapshot(tmp_path_factory: pytest.TempPathFactory) -> MakeSnapshot:
    """Commit `files` (on top of the sample project unless base=False) into a bare repository."""

    def make(files: dict[str, str], *, base: bool = True, name: str | None = None) -> Snapshot:
        # A name gives a predictable location: <basetemp>/<name>.git.
        checkout = tmp_path_factory.mktemp(name or "repo", numbered=name is None)
        write_files(checkout, {**(SAMPLE_FILES if base else {}), **files})
        _git("init", "-q", "-b", "main", cwd=checkout)
        _git("add", "-A", cwd=checkout)
        _git("commit", "-q", "-m", "snapshot", cwd=checkout)
        bare = checkout.with_name(checkout.name + ".git")
        _git("clone", "-q", "--bare", str(checkout), str(bare), cwd=checkout.parent)
        return Snapshot(git_dir=bare, commit=_git("rev-parse", "HEAD", cwd=checkout))

    return make


@pytest.fixture(scope="session")
def sandbox_root() -> Path:
    root = Path(os.environ.get("SPECLOOM_TEST_SANDBOX_ROOT", "/var/tmp/specloom-test-jail"))
    root.mkdir(parents=True, exist_ok=True)
    return root


@pytest.fixture(scope="session")
def session_backend(sandbox_root: Path) -> Backend:
    return get_backend("process", root=sandbox_root)


@pytest.fixture
def backend(
    session_backend: Backend, sandbox_root: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Backend]:
    """The session's backend, checking that every run folder made during the test is gone.

    Run folders are named by uuid4; recording the names this test drew keeps the check exact
    even when another process runs tests on the same sandbox root.
    """
    drawn: list[uuid.UUID] = []
    original = uuid.uuid4

    def recording_uuid4() -> uuid.UUID:
        drawn.append(original())
        return drawn[-1]

    monkeypatch.setattr(uuid, "uuid4", recording_uuid4)
    yield session_backend
    monkeypatch.undo()
    ProcessBackend.wait_for_removals()
    leftovers = [
        path
        for value in drawn
        for folder in ("runs", "discarded")
        for path in (sandbox_root / folder).glob(f"*-{value.hex}")
    ]
    assert drawn, "the test made no run"
    assert leftovers == [], f"run folders left behind: {leftovers}"
