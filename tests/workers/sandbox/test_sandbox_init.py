"""The sandbox's compiled init: built once, fails clearly, and does what launch_argv asks.

What it does inside namespaces (loopback only, tmpfs, nobody, limits, kill at the wall limit)
is proven by test_sandbox_hostile.py through real runs; these tests run the binary directly.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from workers.sandbox import RunRequest, SandboxError
from workers.sandbox.init_binary import INIT_ERROR_EXIT, INIT_ERROR_MARKER, jail_init_binary
from workers.sandbox.isolation import Isolation, launch_argv
from workers.sandbox.process import ProcessBackend
from workers.sandbox.types import Limits


@pytest.fixture(scope="module")
def init_binary(tmp_path_factory) -> Path:
    return jail_init_binary(tmp_path_factory.mktemp("init-bin"))


def run_init(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), *args], capture_output=True, text=True, timeout=30, check=False
    )


def test_the_init_is_built_once_and_named_by_its_source(tmp_path):
    first = jail_init_binary(tmp_path)
    modified = first.stat().st_mtime_ns
    assert jail_init_binary(tmp_path) == first
    assert first.stat().st_mtime_ns == modified
    assert first.stat().st_mode & 0o022 == 0  # nobody may replace it
    assert [path.name for path in tmp_path.iterdir()] == [first.name]  # no partial files left


def test_no_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(SandboxError, match="building the sandbox's init"):
        jail_init_binary(tmp_path / "bin")


def test_a_failing_compiler_is_a_clear_error_and_leaves_nothing(tmp_path, monkeypatch):
    failing = tmp_path / "cc"
    failing.write_text("#!/bin/sh\necho 'cc: out of luck' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("CC", str(failing))
    with pytest.raises(SandboxError, match="out of luck"):
        jail_init_binary(tmp_path / "bin")
    assert list((tmp_path / "bin").iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ("--cwd", "/no/such/folder", "--", "/bin/true"),
        ("--", "/no/such/program"),
        ("--rlimit", "RLIMIT_STACK", "1", "--", "/bin/true"),
        ("--rlimit", "RLIMIT_CPU", "-1", "--", "/bin/true"),
        ("--user", "65534", "--", "/bin/true"),
        ("--unknown", "--", "/bin/true"),
        ("--cwd", "/"),
    ],
    ids=[
        "missing-cwd",
        "missing-program",
        "unknown-limit",
        "negative",
        "short",
        "option",
        "no-program",
    ],
)
def test_the_init_reports_what_it_could_not_do(init_binary, args):
    proc = run_init(init_binary, *args)
    assert proc.returncode == INIT_ERROR_EXIT
    assert proc.stderr.startswith(INIT_ERROR_MARKER)


def test_the_init_runs_the_program_with_only_the_given_environment_and_limits(
    init_binary, tmp_path
):
    proc = run_init(
        init_binary,
        "--rlimit",
        "RLIMIT_NOFILE",
        "64",
        "--rlimit",
        "RLIMIT_CPU",
        "30",
        "--cwd",
        str(tmp_path),
        "--env",
        "PATH=/usr/bin:/bin",
        "--env",
        "GREETING=a b=c",
        "--",
        "/bin/sh",
        "-c",
        'echo "$GREETING|$(pwd)|$(ulimit -n)|$(ulimit -t)|$(ulimit -H -t)|$SECRET_KEY"; exit 3',
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.strip() == f"a b=c|{tmp_path}|64|30|35|"


def test_as_init_reports_a_signal_as_128_plus_its_number(init_binary):
    proc = run_init(init_binary, "--as-init", "--", "/bin/sh", "-c", "kill -9 $$")
    assert proc.returncode == 128 + 9


def test_launch_argv_passes_the_isolation_to_the_init(tmp_path):
    isolation = Isolation("netns+nobody", ("--net", "--pid"), (65534, 65534))
    argv = launch_argv(
        isolation,
        init=tmp_path / "init",
        argv=["/usr/bin/python3", "-m", "pytest"],
        env={"PATH": "/usr/bin"},
        cwd=tmp_path,
        limits=Limits(max_open_files=99),
        keep_visible=[tmp_path],
    )
    assert argv[:4] == ["unshare", "--net", "--pid", "--"]
    assert argv[4] == str(tmp_path / "init")
    options = argv[5 : argv.index("--", 5)]
    assert "--loopback" in options and "--as-init" in options
    assert options[options.index("--user") + 1 : options.index("--user") + 3] == ["65534", "65534"]
    assert options[options.index("RLIMIT_NOFILE") - 1 : options.index("RLIMIT_NOFILE") + 2] == [
        "--rlimit",
        "RLIMIT_NOFILE",
        "99",
    ]
    assert argv[argv.index("--", 5) + 1 :] == ["/usr/bin/python3", "-m", "pytest"]


def test_without_namespaces_the_init_is_the_test_process_itself(tmp_path):
    argv = launch_argv(
        Isolation("none", (), None),
        init=tmp_path / "init",
        argv=["/bin/true"],
        env={},
        cwd=tmp_path,
        limits=Limits(),
        keep_visible=[],
    )
    assert argv[0] == str(tmp_path / "init")
    assert "--as-init" not in argv and "--loopback" not in argv and "--user" not in argv


WHO_AM_I_TESTS = {
    "tests/test_who.py": """\
        import os


        def test_identity_and_limits():
            assert os.getuid() == 65534 and os.getgid() == 65534
            assert os.getgroups() == []
            import resource

            assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 77
        """,
}


@pytest.mark.needs_root
@pytest.mark.slow
def test_without_namespaces_root_still_runs_the_tests_as_nobody(make_snapshot, sandbox_root):
    # The mode a root worker falls back to where namespaces are unavailable (e.g. a container
    # without CAP_SYS_ADMIN): no network isolation, but the user and the limits hold.
    nobody = Isolation("nobody", (), (65534, 65534))
    backend = ProcessBackend(sandbox_root, isolation=nobody)
    result = backend.run(
        RunRequest(
            snapshot=make_snapshot(WHO_AM_I_TESTS),
            limits=Limits(max_open_files=77),
        )
    )
    assert result.isolation == "nobody"
    assert {nodeid: test.outcome.value for nodeid, test in result.tests.items()} == {
        "tests/test_who.py::test_identity_and_limits": "passed"
    }, result.stdout_tail
