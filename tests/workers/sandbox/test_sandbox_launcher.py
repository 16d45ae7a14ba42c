"""The sandbox's compiled launcher: built once, fails clearly, joins the cgroup, sets the limits
and drops to the jail's user for good before it executes anything.

What the jail around it does (bubblewrap: namespaces, minimal root, no network) is proven by the
hostile-code suites through real runs; these tests run the binary directly.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from workers.sandbox import SandboxError
from workers.sandbox.launcher import INIT_ERROR_EXIT, INIT_ERROR_MARKER, jail_launcher_binary


@pytest.fixture(scope="module")
def launcher(tmp_path_factory) -> Path:
    return jail_launcher_binary(tmp_path_factory.mktemp("launcher-bin"))


def run_launcher(binary: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(binary), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={"PATH": "/usr/bin:/bin", "GREETING": "a b=c"},
    )


def test_it_is_built_once_named_by_its_source_and_private(tmp_path):
    first = jail_launcher_binary(tmp_path)
    modified = first.stat().st_mtime_ns
    assert jail_launcher_binary(tmp_path) == first
    assert first.stat().st_mtime_ns == modified
    assert first.stat().st_mode & 0o077 == 0  # root's alone: the jail never runs or reads it
    assert [path.name for path in tmp_path.iterdir()] == [first.name]  # no partial files left


def test_no_compiler_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    with pytest.raises(SandboxError, match="building the sandbox's launcher"):
        jail_launcher_binary(tmp_path / "bin")


def test_a_failing_compiler_is_a_clear_error_and_leaves_nothing(tmp_path, monkeypatch):
    failing = tmp_path / "cc"
    failing.write_text("#!/bin/sh\necho 'cc: out of luck' >&2\nexit 1\n")
    failing.chmod(0o755)
    monkeypatch.setenv("CC", str(failing))
    with pytest.raises(SandboxError, match="out of luck"):
        jail_launcher_binary(tmp_path / "bin")
    assert list((tmp_path / "bin").iterdir()) == []


@pytest.mark.parametrize(
    "args",
    [
        ("--", "/no/such/program"),
        ("--rlimit", "RLIMIT_STACK", "1", "--", "/bin/true"),
        ("--rlimit", "RLIMIT_NPROC", "10", "--", "/bin/true"),
        ("--rlimit", "RLIMIT_CPU", "-1", "--", "/bin/true"),
        ("--user", "65534", "--", "/bin/true"),
        ("--unknown", "--", "/bin/true"),
        ("--cgroup", "/no/such/cgroup.procs", "--", "/bin/true"),
        ("--rlimit", "RLIMIT_CPU", "1"),
    ],
    ids=[
        "missing-program",
        "unknown-limit",
        "nproc-is-the-cgroups",
        "negative",
        "short",
        "option",
        "missing-cgroup",
        "no-program",
    ],
)
def test_it_reports_what_it_could_not_do(launcher, args):
    proc = run_launcher(launcher, *args)
    assert proc.returncode == INIT_ERROR_EXIT
    assert proc.stderr.startswith(INIT_ERROR_MARKER)


def test_it_runs_the_program_with_its_environment_and_limits(launcher):
    proc = run_launcher(
        launcher,
        "--rlimit",
        "RLIMIT_NOFILE",
        "64",
        "--rlimit",
        "RLIMIT_CPU",
        "30",
        "--",
        "/bin/sh",
        "-c",
        'echo "$GREETING|$(ulimit -n)|$(ulimit -t)|$(ulimit -H -t)|$(umask)"; exit 3',
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.strip() == "a b=c|64|30|35|0022"


@pytest.mark.needs_root
def test_it_drops_to_the_user_for_good_with_no_new_privileges(launcher):
    proc = run_launcher(
        launcher,
        "--user",
        "65534",
        "65534",
        "--",
        "/usr/bin/python3",
        "-c",
        "import os\n"
        "print(os.getresuid(), os.getresgid(), os.getgroups())\n"
        "print(open('/proc/self/status').read().split('NoNewPrivs:')[1].split()[0])\n",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == [
        "(65534, 65534, 65534) (65534, 65534, 65534) []",
        "1",
    ]


@pytest.mark.needs_root
def test_it_joins_the_cgroups_it_is_given_before_running_anything(launcher, tmp_path):
    procs = tmp_path / "cgroup.procs"
    procs.write_text("")
    proc = run_launcher(launcher, "--cgroup", str(procs), "--", "/bin/sh", "-c", "echo $$")
    assert proc.returncode == 0, proc.stderr
    # The launcher wrote its own pid, which execve kept for the program.
    assert procs.read_text().split() == proc.stdout.split()
    assert os.path.getsize(procs) > 0
