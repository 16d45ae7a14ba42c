"""Pieces of the engine that need no sandboxed run."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from workers.sandbox import Outcome, SandboxError, get_backend
from workers.sandbox import specloom_sandbox_plugin as plugin
from workers.sandbox import supervise as supervise_module
from workers.sandbox.environments import declared_build_requirements
from workers.sandbox.events import MESSAGE_LIMIT, parse_events
from workers.sandbox.jail import Jail, bwrap_argv
from workers.sandbox.pytest_invocation import selected_paths
from workers.sandbox.results import read_sandbox_file
from workers.sandbox.supervise import TailBuffer, supervise
from workers.sandbox.wheelhouse import FetchError, missing_requirements, named_requirement
from workers.sandbox.workcopy import remove_paths


def test_the_tail_buffer_keeps_the_last_bytes():
    buffer = TailBuffer(10)
    for chunk in (b"0123456789", b"abcdefghij", b"KLMNO"):
        buffer.feed(chunk)
    assert buffer.tail() == b"fghijKLMNO"
    assert buffer.total_bytes == 25
    assert buffer.truncated


def test_supervise_kills_the_process_group_at_the_wall_clock_limit(tmp_path):
    started = time.monotonic()
    finished = supervise(
        ["sh", "-c", "echo started; sleep 30 & sleep 30"],
        env={"PATH": "/usr/bin:/bin"},
        cwd=tmp_path,
        wall_seconds=0.5,
        max_output_bytes=1024,
    )
    assert finished.timed_out
    assert finished.returncode is None
    assert finished.stdout.text() == "started\n"
    assert time.monotonic() - started < 5


# Both ways of waiting for a child's exit: a pidfd, and polling where the kernel has none.
EACH_WAY_OF_WAITING = pytest.mark.parametrize(
    "wait",
    [supervise_module._wait_without_reaping, supervise_module._poll_without_reaping],
    ids=["pidfd", "polling"],
)


@EACH_WAY_OF_WAITING
def test_waiting_for_the_exit_leaves_the_child_unreaped(wait):
    child = subprocess.Popen(["sleep", "0.1"])
    try:
        assert wait(child.pid, time.monotonic() + 30)
        # Still a zombie: its process group id cannot have been reused yet.
        assert os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    finally:
        child.wait()
    assert child.returncode == 0


@EACH_WAY_OF_WAITING
def test_waiting_for_the_exit_gives_up_at_the_deadline(wait):
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert not wait(child.pid, time.monotonic() + 0.2)
    finally:
        child.kill()
        child.wait()


def test_finished_events_carry_the_exact_node_id_outcome_and_the_end_of_the_message():
    nodeid = 'tests/t.py::test_p[ünï "q" <x> \\t]'
    message = "x" * MESSAGE_LIMIT + "\nAssertionError: boom"
    event = {"kind": "finished", "nodeid": nodeid, "outcome": "failed", "duration": 0.25}
    reported = parse_events((json.dumps(event | {"message": message}) + "\n").encode())
    assert list(reported.tests) == [nodeid]
    assert reported.tests[nodeid].outcome == Outcome.FAILED
    assert reported.tests[nodeid].duration == 0.25
    assert reported.tests[nodeid].message.endswith("AssertionError: boom")
    assert len(reported.tests[nodeid].message) == MESSAGE_LIMIT


def test_events_of_an_unknown_outcome_or_shape_are_not_tests():
    lines = [
        json.dumps({"kind": "finished", "nodeid": "t.py::a", "outcome": "exploded"}),
        json.dumps(["finished", "t.py::b"]),
        json.dumps({"kind": "finished", "nodeid": "t.py::c", "outcome": "skipped", "message": 7}),
    ]
    reported = parse_events("\n".join(lines).encode())
    assert list(reported.tests) == ["t.py::c"]
    assert reported.tests["t.py::c"].message == "7"


def test_events_survive_a_line_cut_by_a_kill():
    lines = (
        json.dumps({"kind": "finished", "nodeid": "t.py::a", "outcome": "passed", "duration": 1})
        + "\n"
        + json.dumps({"kind": "collection_error", "path": "t2.py", "message": "boom"})
        + "\n"
        + '{"kind": "finished", "nodeid": "t.py::b", "outc'
    )
    reported = parse_events(lines.encode())
    assert list(reported.tests) == ["t.py::a"]
    assert reported.collection_errors[0].path == "t2.py"


def test_a_selector_names_a_test_or_any_of_its_parents():
    nodeid = "tests/unit/test_a.py::TestX::test_y[a::b]"
    wanted = {"tests/unit", "tests/unit/test_a.py::TestX", "tests/other.py", nodeid}
    assert plugin._selectors_of(nodeid, wanted) == wanted - {"tests/other.py"}


def test_only_functions_and_classes_that_hold_a_selected_test_are_collected(tmp_path):
    selection = tmp_path / "select.json"
    selection.write_text(
        json.dumps(["tests/a.py::TestX::test_y[a::b]", "tests/b.py::test_p[1]", "tests/unit"])
    )

    class Options:
        def getoption(self, name):
            return {"specloom_events": None, "specloom_select": str(selection)}[name]

    recorder = plugin._Recorder(Options())

    def collects(collector_id: str, name: str) -> bool:
        collector = type("Collector", (), {"nodeid": collector_id})()
        return recorder.pytest_pycollect_makeitem(collector=collector, name=name) is None

    assert collects("tests/a.py", "TestX")
    assert collects("tests/a.py::TestX", "test_y")
    assert not collects("tests/a.py::TestX", "test_z")
    assert not collects("tests/a.py", "TestW")
    assert collects("tests/b.py", "test_p")
    assert not collects("tests/b.py", "test_q")
    assert collects("tests/unit/test_c.py", "test_anything")  # inside a selected folder
    assert not collects("tests/unitx/test_c.py", "test_anything")


def test_selected_paths_keep_existing_files_only(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    ids = ("tests/test_a.py::test_x", "tests/test_a.py::test_y", "tests/gone.py::t", "../x::t")
    assert selected_paths(ids, tmp_path) == ["tests/test_a.py"]


def test_remove_paths_refuses_to_leave_the_working_copy(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "outside").mkdir()
    (work / "link").symlink_to(tmp_path / "outside")
    for bad in ("../outside", "/etc/passwd", "link/file"):
        with pytest.raises(SandboxError):
            remove_paths(work, (bad,))


def test_files_left_by_the_sandbox_are_read_without_following_symlinks(tmp_path):
    (tmp_path / "secret").write_text("secret")
    (tmp_path / "coverage.sqlite").symlink_to(tmp_path / "secret")
    os.mkfifo(tmp_path / "events.jsonl")
    assert read_sandbox_file(tmp_path / "coverage.sqlite", 1024) is None
    assert read_sandbox_file(tmp_path / "events.jsonl", 1024) is None


def test_the_jail_binds_only_what_it_is_given_parents_first(tmp_path):
    jail = Jail(
        argv=["/usr/bin/python3", "-m", "pytest"],
        env={"PATH": "/usr/bin", "HOME": "/h"},
        cwd="/var/tmp/sb/runs/r/work",
        read_only=("/var/tmp/sb/envs/k", "/var/tmp/sb/runs/r/support"),
        writable=("/var/tmp/sb/runs/r/work", "/var/tmp/sb/runs/r/tmp"),
        moved=(("/var/tmp/sb/envs/.staging", "/var/tmp/sb/envs/final", True),),
    )
    argv = bwrap_argv(jail, etc=tmp_path, status_fd=7)
    for option in ("--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent"):
        assert option in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--json-status-fd") + 1] == "7"
    assert "--share-net" not in argv
    binds = [
        (argv[i], argv[i + 1], argv[i + 2])
        for i, word in enumerate(argv)
        if word in ("--bind", "--ro-bind") and argv[i + 1].startswith("/var/tmp/sb")
    ]
    assert binds == [
        ("--bind", "/var/tmp/sb/envs/.staging", "/var/tmp/sb/envs/final"),
        ("--ro-bind", "/var/tmp/sb/envs/k", "/var/tmp/sb/envs/k"),
        ("--ro-bind", "/var/tmp/sb/runs/r/support", "/var/tmp/sb/runs/r/support"),
        ("--bind", "/var/tmp/sb/runs/r/tmp", "/var/tmp/sb/runs/r/tmp"),
        ("--bind", "/var/tmp/sb/runs/r/work", "/var/tmp/sb/runs/r/work"),
    ]
    # Temporary folders are empty tmpfs laid down before any bind under them.
    assert argv.index("/var/tmp") < argv.index("/var/tmp/sb/envs/k")
    # /etc comes from an allowlist plus the jail's own passwd: never the host's shadow.
    assert "/etc/shadow" not in argv and f"{tmp_path}/passwd" in argv
    assert argv[argv.index("--clearenv") :][:1] == ["--clearenv"]
    assert argv[-4:] == ["--", "/usr/bin/python3", "-m", "pytest"]


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (
            "ERROR: Could not find a version that satisfies the requirement freezegun>=1.0 "
            "(from versions: none)\nERROR: No matching distribution found for freezegun>=1.0\n",
            ["freezegun>=1.0"],
        ),
        (
            "ERROR: No matching distribution found for setuptools_scm[toml]>=6.2\n",
            ["setuptools_scm[toml]>=6.2"],
        ),
        ("Successfully installed six-1.17.0\n", []),
    ],
)
def test_what_an_offline_pip_could_not_find_is_read_from_its_output(output, expected):
    assert missing_requirements(output) == expected


@pytest.mark.parametrize(
    "text",
    [
        "foo @ file:///etc/shadow",
        "bar @ https://example.invalid/bar.whl",
        "-r /etc/passwd",
        "--index-url=x",
        "",
    ],
)
def test_only_named_requirements_are_ever_fetched(text):
    with pytest.raises(FetchError):
        named_requirement(text)


def test_declared_build_requirements_are_read_as_data(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling>=1.0", 7]\n'
        '[project]\nname = "x"\ndependencies = ["attrs>=22"]\n'
    )
    (tmp_path / "setup.cfg").write_text("[options]\ninstall_requires =\n    six\n")
    assert declared_build_requirements(tmp_path) == ["hatchling>=1.0", "attrs>=22", "six"]
    (tmp_path / "pyproject.toml").write_text("not [valid toml")
    # Unreadable: setuptools' defaults (PEP 518), then what setup.cfg says.
    assert declared_build_requirements(tmp_path) == ["setuptools>=40.8.0", "wheel", "six"]


def test_the_sandbox_root_may_not_be_under_root_home():
    with pytest.raises(SandboxError, match="under /root"):
        get_backend(root=Path("/root/sandbox"))


def test_an_unknown_backend_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown sandbox backend"):
        get_backend("vm", root=tmp_path)


def test_the_interpreters_identity_is_asked_once_per_interpreter_file(tmp_path):
    from workers.sandbox.environments import interpreter_identity

    calls = tmp_path / "calls"
    interpreter = tmp_path / "python"
    interpreter.write_text(f'#!/bin/sh\necho x >> {calls}\necho "cpython  3.11.2 (main)"\n')
    interpreter.chmod(0o755)
    assert interpreter_identity(str(interpreter)) == "cpython 3.11.2 (main)"
    assert interpreter_identity(str(interpreter)) == "cpython 3.11.2 (main)"
    assert calls.read_text().count("x") == 1
    # An upgraded interpreter is another file: it is asked again.
    interpreter.write_text(f'#!/bin/sh\necho x >> {calls}\necho "cpython 3.11.9 (main)"\n')
    os.utime(interpreter, ns=(time.time_ns(), time.time_ns() + 10**9))
    assert interpreter_identity(str(interpreter)) == "cpython 3.11.9 (main)"
    assert calls.read_text().count("x") == 2
