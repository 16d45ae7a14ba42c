"""Environments: keyed by dependency files, built once, serialised builders, clean failures."""

from __future__ import annotations

import subprocess
import threading
import uuid

import pytest

from workers.sandbox import EnvironmentBuildError, EnvironmentSpec
from workers.sandbox.environments import (
    TOOL_REQUIREMENTS,
    environment_key,
    is_dependency_file,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def sample_snapshot(make_snapshot):
    return make_snapshot({"tests/test_nothing.py": "def test_nothing():\n    pass\n"})


def test_it_builds_an_environment_once(session_backend, sample_snapshot):
    spec = EnvironmentSpec()
    key, _built = session_backend.ensure_environment(sample_snapshot, spec)
    assert session_backend.ensure_environment(sample_snapshot, spec) == (key, False)


def test_it_holds_the_dependencies_and_test_tools_not_the_project(
    session_backend, sample_snapshot, sandbox_root
):
    key, _built = session_backend.ensure_environment(sample_snapshot, EnvironmentSpec())
    python = sandbox_root / "envs" / key / "bin" / "python"
    check = (
        "import importlib.util, pytest, coverage, six\n"
        "assert importlib.util.find_spec('sampleproj') is None\n"
        "print(pytest.__version__, coverage.__version__)\n"
    )
    out = subprocess.run(
        [str(python), "-I", "-c", check], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == [req.split("==")[1] for req in TOOL_REQUIREMENTS]
    # Built in a staging folder, then renamed: scripts must name the final folder (pip writes a
    # /bin/sh wrapper instead of a shebang when the path is longer than a shebang may be).
    script = (sandbox_root / "envs" / key / "bin" / "pytest").read_text()
    assert script.startswith(f"#!{python}\n") or f"'{python}'" in script.split("\n", 3)[1]
    assert ".staging" not in script


def test_concurrent_builders_of_one_key_build_once(session_backend, sample_snapshot, tmp_path):
    # A setup command of its own gives a key no earlier session has built.
    spec = EnvironmentSpec(setup_command=f"echo {uuid.uuid4().hex}")
    results: list[tuple[str, bool]] = []
    errors: list[BaseException] = []

    def build() -> None:
        try:
            results.append(session_backend.ensure_environment(sample_snapshot, spec))
        except BaseException as exc:  # reported below, in the test's own thread
            errors.append(exc)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert sorted(built for _key, built in results) == [False, True]
        assert len({key for key, _built in results}) == 1
    finally:
        for key in {key for key, _built in results}:
            subprocess.run(["rm", "-rf", str(session_backend.environments.path(key))], check=True)


def test_a_failing_setup_command_raises_and_caches_nothing(
    session_backend, sample_snapshot, sandbox_root
):
    marker = uuid.uuid4().hex
    command = f"echo building {marker}; echo 'setup exploded' >&2; exit 3"
    spec = EnvironmentSpec(setup_command=command)
    with pytest.raises(EnvironmentBuildError) as raised:
        session_backend.ensure_environment(sample_snapshot, spec)
    error = raised.value
    assert error.command == command
    assert error.returncode == 3
    assert f"building {marker}" in error.output_tail
    assert "setup exploded" in error.output_tail
    assert command in str(error)
    assert not (sandbox_root / "envs" / error.environment_key).exists()
    assert not list((sandbox_root / "envs").glob(f".staging-{error.environment_key}-*"))


def test_the_key_follows_dependency_files_command_extras_and_interpreter():
    spec = EnvironmentSpec()
    deps = {"pyproject.toml": "1" * 40}
    key = environment_key(deps, spec, "cpython 3.11.2")
    assert key == environment_key(dict(deps), EnvironmentSpec(), "cpython 3.11.2")
    assert key != environment_key({"pyproject.toml": "2" * 40}, spec, "cpython 3.11.2")
    assert key != environment_key(deps, EnvironmentSpec(setup_command="pip install -e ."), "x")
    assert key != environment_key(
        deps, EnvironmentSpec(extra_requirements=("pytest-mock",)), "cpython 3.11.2"
    )
    assert key != environment_key(deps, spec, "cpython 3.11.9")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pyproject.toml", True),
        ("setup.py", True),
        ("setup.cfg", True),
        ("tox.ini", True),
        ("requirements.txt", True),
        ("requirements-dev.txt", True),
        ("requirements/test.txt", True),
        ("requirements/base.in", True),
        ("subpackage/pyproject.toml", True),
        ("README.md", False),
        ("src/pkg/module.py", False),
        ("docs/conf.py", False),
    ],
)
def test_it_recognises_dependency_files(path, expected):
    assert is_dependency_file(path) is expected
