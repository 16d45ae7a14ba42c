"""Hostile code, really run: the calling process survives and the result says what happened.

Each scenario is a test module of one sample repository, selected by path. The tests inside the
sandbox assert what they can see; these tests assert what the host sees afterwards.
"""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from workers.sandbox import Limits, Outcome, RunRequest

pytestmark = [pytest.mark.slow, pytest.mark.needs_root]

NOBODY_UID = 65534

SCENARIOS = {
    "tests/test_loop.py": """\
        import subprocess


        def test_before_the_loop():
            pass


        def test_spins_forever():
            subprocess.Popen(["sleep", "3141.5"], start_new_session=True)
            while True:
                pass
        """,
    "tests/test_memory.py": """\
        def test_allocates_too_much():
            hoard = bytearray(8 * 1024**3)
            assert hoard
        """,
    "tests/test_fork_bomb.py": """\
        import subprocess
        import sys
        import time

        BOMB = (
            "import os\\n"
            "while True:\\n"
            "    try:\\n"
            "        os.fork()\\n"
            "    except OSError:\\n"
            "        pass\\n"
        )


        def test_fork_bomb_hits_the_process_limit():
            subprocess.Popen(["sleep", "2718.5"], start_new_session=True)
            subprocess.Popen([sys.executable, "-c", BOMB], start_new_session=True)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                try:
                    subprocess.run(["true"], check=False)
                except BlockingIOError:
                    return  # fork refused: the limit holds
                time.sleep(0.05)
            raise AssertionError("the process limit never refused a fork")
        """,
    "tests/test_network.py": """\
        import os
        import socket
        import threading

        import pytest


        def connect(host, port):
            with socket.create_connection((host, port), timeout=3):
                pass


        @pytest.mark.parametrize("port", [5432, 6379])
        def test_host_services_are_refused(port):
            with pytest.raises(OSError):
                connect("127.0.0.1", port)


        def test_host_service_sockets_are_hidden():
            assert not os.path.exists("/run/postgresql")
            assert not os.path.exists("/var/run/postgresql/.s.PGSQL.5432")


        def test_outside_addresses_are_unreachable():
            # Guard: only try once it is certain that no packet can leave this namespace.
            with open("/proc/net/dev") as devices:
                names = [line.split(":")[0].strip() for line in devices.readlines()[2:]]
            assert names == ["lo"]
            with open("/proc/net/route") as routes:
                assert routes.readlines()[1:] == []
            with pytest.raises(OSError):
                connect("1.1.1.1", 80)


        def test_a_server_on_the_sandboxs_own_loopback_works():
            server = socket.create_server(("127.0.0.1", 0))
            port = server.getsockname()[1]

            def answer():
                connection, _ = server.accept()
                connection.sendall(b"hello")
                connection.close()

            thread = threading.Thread(target=answer)
            thread.start()
            with socket.create_connection(("127.0.0.1", port), timeout=3) as client:
                assert client.recv(5) == b"hello"
            thread.join()
            server.close()
        """,
    "tests/test_writes.py": """\
        import os
        import sysconfig

        import pytest


        def test_the_jails_root_is_read_only():
            for path in ("/etc/specloom-planted", "/specloom-planted", "/usr/specloom-planted"):
                with pytest.raises(OSError):
                    open(path, "w")


        def test_the_shared_environment_cannot_be_poisoned():
            site_packages = sysconfig.get_paths()["purelib"]
            with pytest.raises(OSError):
                open(os.path.join(site_packages, "sitecustomize.py"), "w")


        def test_user_namespaces_cannot_be_made_inside():
            # unshare -Ur would make the test root of a namespace of its own.
            import subprocess

            made = subprocess.run(["unshare", "-Ur", "id", "-u"], capture_output=True, text=True)
            assert made.returncode != 0, made.stdout


        def test_no_privilege_can_be_gained_and_setuid_does_nothing(tmp_path):
            status = open("/proc/self/status").read()
            assert "NoNewPrivs:\\t1" in status
            assert "CapEff:\\t0000000000000000" in status
            shell = tmp_path / "sh"
            shell.write_bytes(open("/bin/sh", "rb").read())
            os.chmod(shell, 0o4755)
            import subprocess

            euid = subprocess.run([str(shell), "-c", "id -u"], capture_output=True, text=True)
            assert euid.stdout.strip() == str(os.getuid())
        """,
    "tests/test_identity.py": """\
        import os

        ALLOWED = {{
            "PATH", "HOME", "TMPDIR", "LANG", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
            "PYTEST_CURRENT_TEST", "PYTEST_VERSION", "PWD",
        }}


        def test_runs_as_nobody_in_its_own_session():
            assert os.geteuid() == {nobody}
            # A session of the jail's own (its init, pid 1, leads it): no host terminal.
            assert os.getsid(0) in (1, os.getpid())


        def test_no_secret_of_the_application_is_inherited():
            assert "SECRET_KEY" not in os.environ
            assert "DATABASE_URL" not in os.environ
            assert set(os.environ) <= ALLOWED, set(os.environ) - ALLOWED


        def test_only_the_sandboxs_processes_are_visible():
            pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
            assert len(pids) < 10, pids
        """,
    "tests/test_flood.py": """\
        import sys


        def test_prints_fifty_megabytes(capsys):
            line = "x" * 1023 + "\\n"
            with capsys.disabled():
                for _ in range(50 * 1024):
                    sys.stdout.write(line)
                sys.stdout.write("END-OF-FLOOD\\n")
                sys.stdout.flush()
        """,
    "tests/test_vandal.py": """\
        import os
        import shutil

        GIT_DIR = {git_dir!r}


        def test_deletes_everything_it_can():
            shutil.rmtree(os.getcwd(), ignore_errors=True)
            shutil.rmtree(GIT_DIR, ignore_errors=True)
        """,
    "tests/test_big_file.py": """\
        import pytest


        def test_cannot_write_past_the_file_size_limit(tmp_path):
            with open(tmp_path / "big", "wb") as big, pytest.raises(OSError):
                big.write(b"x" * (4 * 1024 * 1024))
                big.flush()
        """,
    "tests/test_cpu.py": """\
        def test_burns_cpu():
            while True:
                pass
        """,
    "tests/test_ok.py": "def test_ok():\n    pass\n",
    "tests/test_says_memory.py": (
        "def test_says_it():\n    raise MemoryError('Cannot allocate memory (on purpose)')\n"
    ),
}


@pytest.fixture(scope="module")
def hostile(make_snapshot, sandbox_root, tmp_path_factory):
    # The vandal test is told where its own repository lives.
    git_dir = str(tmp_path_factory.getbasetemp() / "hostile.git")
    files = {
        path: content.format(
            nobody=NOBODY_UID,
            git_dir=git_dir,
        )
        if "{" in content
        else content
        for path, content in SCENARIOS.items()
    }
    snapshot = make_snapshot(files, name="hostile")
    assert str(snapshot.git_dir) == git_dir
    return snapshot


def run_scenario(backend, snapshot, module: str, **limits):
    return backend.run(
        RunRequest(
            snapshot=snapshot, tests=(module,), limits=Limits(**{"wall_seconds": 60, **limits})
        )
    )


def processes_of(uid: int) -> dict[int, str]:
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                found[int(entry)] = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue  # ended meanwhile
    return found


def assert_all_passed(result) -> None:
    failed = {nodeid: t.message for nodeid, t in result.tests.items() if t.outcome != "passed"}
    assert failed == {}
    assert result.collection_errors == []


def test_an_infinite_loop_is_stopped_at_the_wall_clock_limit(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_loop.py", wall_seconds=3)
    assert result.timed_out
    assert result.exit_code is None
    assert 3 <= result.wall_seconds < 8
    # The JUnit file is never written; the plugin's events still tell what finished.
    assert result.tests["tests/test_loop.py::test_before_the_loop"].outcome == Outcome.PASSED
    assert "tests/test_loop.py::test_spins_forever" not in result.tests
    # Even the child that left the session in a new one died with the namespace.
    assert not [cmd for cmd in processes_of(NOBODY_UID).values() if "3141.5" in cmd]


def test_a_memory_bomb_is_killed_by_the_kernel_and_reported(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_memory.py", memory_bytes=256 * 1024**2)
    # The kernel's OOM count says so, not the test's output: pytest itself was killed.
    assert result.memory_exceeded
    assert not result.timed_out
    assert result.interrupted_test == "tests/test_memory.py::test_allocates_too_much"
    assert "tests/test_memory.py::test_allocates_too_much" not in result.tests


def test_a_memory_error_the_test_prints_is_not_a_memory_limit(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_says_memory.py")
    assert not result.memory_exceeded
    assert result.tests["tests/test_says_memory.py::test_says_it"].outcome == Outcome.FAILED


def test_a_fork_bomb_is_contained_and_the_run_ends(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_fork_bomb.py", max_processes=64)
    assert_all_passed(result)
    assert not result.timed_out
    # Matched by command line: other runs on this host may have processes of nobody too.
    leftovers = [
        cmd for cmd in processes_of(NOBODY_UID).values() if "2718.5" in cmd or "os.fork()" in cmd
    ]
    assert leftovers == []


def test_cpu_time_is_limited(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_cpu.py", cpu_seconds=1)
    assert not result.timed_out
    assert result.exit_code == -signal.SIGXCPU
    assert result.tests == {}


def test_file_size_is_limited(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_big_file.py", max_file_bytes=1024**2)
    assert_all_passed(result)
    assert len(result.tests) == 1


def test_the_network_holds_only_the_sandboxs_own_loopback(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_network.py")
    assert result.isolation == "bwrap+cgroup"
    assert_all_passed(result)
    assert len(result.tests) == 5


def test_a_service_on_the_hosts_loopback_is_reachable_outside_and_refused_inside(
    backend, make_snapshot
):
    """The refusals above mean something only while a host service listens: one listens here.

    A jail that shared the host's network would let the sandboxed test connect, which fails
    the test inside and shows here as a second accepted connection.
    """
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except TimeoutError:
                continue
            accepted.append(peer[0])
            connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        snapshot = make_snapshot(
            {
                "tests/test_reach_host.py": f"""\
                    import socket

                    import pytest


                    def test_the_hosts_listener_is_refused():
                        with pytest.raises(OSError):
                            socket.create_connection(("127.0.0.1", {port}), timeout=3).close()
                    """
            }
        )
        result = run_scenario(backend, snapshot, "tests/test_reach_host.py")
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()
    assert_all_passed(result)
    assert list(result.tests) == ["tests/test_reach_host.py::test_the_hosts_listener_is_refused"]
    assert accepted == ["127.0.0.1"]  # the host's own connection, and nothing from the jail


def test_the_jail_cannot_write_its_root_make_namespaces_or_gain_privileges(backend, hostile):
    result = run_scenario(backend, hostile, "tests/test_writes.py")
    assert_all_passed(result)
    assert len(result.tests) == 4
    assert not Path("/etc/specloom-planted").exists()


def test_no_secret_reaches_the_tests(backend, hostile, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", "do-not-leak")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:password@127.0.0.1/specloom")
    result = run_scenario(backend, hostile, "tests/test_identity.py")
    assert_all_passed(result)
    assert len(result.tests) == 3
    assert "do-not-leak" not in result.stdout_tail + result.stderr_tail


def test_a_flood_of_output_is_cut_keeping_the_tail(backend, hostile):
    limit = 256 * 1024
    result = run_scenario(backend, hostile, "tests/test_flood.py", max_output_bytes=limit)
    assert result.output_truncated
    assert len(result.stdout_tail.encode()) <= limit
    assert "END-OF-FLOOD" in result.stdout_tail
    assert result.tests["tests/test_flood.py::test_prints_fifty_megabytes"].outcome == "passed"


def test_a_test_that_deletes_its_working_copy_does_not_affect_the_next_run(
    backend, hostile, sandbox_root
):
    run_scenario(backend, hostile, "tests/test_vandal.py")
    assert (hostile.git_dir / "HEAD").is_file()
    subprocess.run(
        ["git", f"--git-dir={hostile.git_dir}", "cat-file", "-e", hostile.commit], check=True
    )
    result = run_scenario(backend, hostile, "tests/test_ok.py")
    assert list(result.tests) == ["tests/test_ok.py::test_ok"]
    assert_all_passed(result)


def test_the_sandbox_root_is_shaped_for_the_jails_user(sandbox_root, session_backend):
    def mode(name: str) -> int:
        return stat.S_IMODE((sandbox_root / name).stat().st_mode)

    # Traversable by the jail's user (bubblewrap binds from here), never listable.
    assert stat.S_IMODE(sandbox_root.stat().st_mode) == 0o711
    assert mode("runs") == 0o711
    assert mode("envs") == 0o711
    assert mode("bin") == 0o700  # the launcher: root's alone
    assert mode("locks") == 0o700
