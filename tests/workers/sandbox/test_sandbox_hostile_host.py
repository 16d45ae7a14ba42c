"""Hostile repositories against the host around the jail, really run: environment builds (an
in-tree build backend, a curator's setup command), what a test can see of the host, what it can
leave behind, runs side by side with a fork bomb, and a worker killed in the middle of a run.

Each finding of the isolation issue has its test here; the jail's own limits are in
test_sandbox_hostile.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path

import pytest

from workers.sandbox import EnvironmentBuildError, EnvironmentSpec, Limits, RunRequest
from workers.sandbox.cgroups import owner_tag, process_start_time

pytestmark = [pytest.mark.slow, pytest.mark.needs_root]

APP_CHECKOUT = Path(__file__).resolve().parents[3]
NOBODY_UID = 65534


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def outcomes(result) -> dict[str, str]:
    return {nodeid: test.outcome.value for nodeid, test in result.tests.items()}


def failures(result) -> dict[str, str]:
    return {n: t.message[-600:] for n, t in result.tests.items() if t.outcome != "passed"}


# --- What a test can see of the host ---------------------------------------------------------

PEEK = """\
import os

import pytest

SECRETS = {secrets!r}


@pytest.mark.parametrize("path", SECRETS)
def test_host_path_is_absent(path):
    assert not os.path.exists(path), path
    with pytest.raises(OSError):
        open(path, "rb")


def test_the_shadow_file_and_service_configuration_are_absent():
    for path in ("/etc/shadow", "/etc/postgresql", "/etc/redis", "/root", "/home", "/srv"):
        assert not os.path.exists(path), path


def test_processes_of_the_host_are_invisible():
    pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    assert max(pids) < 50, pids
"""


@pytest.fixture(scope="module")
def app_files(tmp_path_factory) -> dict[str, Path]:
    """Stand-ins for the application's own files, world-readable as a careless host has them:
    storage with another repository's sources, an SQLite database, a worker log."""
    base = tmp_path_factory.mktemp("app-host")
    base.chmod(0o755)
    files = {
        "other_repository": base / "storage" / "repos" / "other.git" / "HEAD",
        "database": base / "var" / "specloom.sqlite3",
        "worker_log": base / "var" / "log" / "worker.log",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        for folder in [path.parent, *path.parent.parents]:
            if folder == base.parent:
                break
            folder.chmod(0o755)
        path.write_text("secret")
        path.chmod(0o644)
    return files


def test_a_test_sees_no_storage_repository_database_log_or_checkout(
    backend, make_snapshot, app_files, sandbox_root
):
    other_environment = sandbox_root / "envs" / f"other-{uuid.uuid4().hex}"
    other_environment.mkdir(mode=0o755)
    secrets = [
        *(str(path) for path in app_files.values()),
        str(other_environment),
        str(APP_CHECKOUT / "manage.py"),
        str(APP_CHECKOUT / "specloom" / "settings.py"),
        str(APP_CHECKOUT / "var"),
        str(sandbox_root / "wheelhouse"),
        str(sandbox_root / "bin"),
        f"/proc/{os.getpid()}/environ",
    ]
    snapshot = make_snapshot({"tests/test_peek.py": PEEK.format(secrets=secrets)})
    try:
        result = backend.run(RunRequest(snapshot=snapshot, limits=Limits(wall_seconds=60)))
    finally:
        other_environment.rmdir()
    assert failures(result) == {}
    assert len(result.tests) == len(secrets) + 2


# --- What a test can leave behind ------------------------------------------------------------

LITTER = """\
import os
import shutil
import subprocess

MARK = {mark!r}
HOST_TEMP = {host_temp!r}


def test_litters_every_temporary_folder():
    places = ["/tmp", "/var/tmp", "/dev/shm", "/run", os.environ["TMPDIR"], HOST_TEMP]
    written = []
    for place in places:
        try:
            os.makedirs(place, exist_ok=True)
            with open(os.path.join(place, MARK + ".txt"), "w") as note:
                note.write("was here")
            shell = os.path.join(place, MARK + "-sh")
            shutil.copyfile("/bin/sh", shell)
            os.chmod(shell, 0o4755)
            written.append(place)
        except OSError:
            pass
    # Fill the host's temp folder as far as it goes.
    try:
        with open(os.path.join("/var/tmp", MARK + ".fill"), "wb") as fill:
            for _ in range(500):
                fill.write(b"x" * 1024 * 1024)
    except OSError:
        pass
    assert written
"""


def test_nothing_a_test_writes_outside_its_run_survives_it(backend, make_snapshot, sandbox_root):
    mark = f"specloom-litter-{uuid.uuid4().hex}"
    host_temp = str(sandbox_root.parent)
    snapshot = make_snapshot(
        {"tests/test_litter.py": LITTER.format(mark=mark, host_temp=host_temp)}
    )
    result = backend.run(RunRequest(snapshot=snapshot, limits=Limits(wall_seconds=120)))
    assert failures(result) == {}
    survivors = []
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run", host_temp):
        survivors += [str(path) for path in Path(folder).glob(f"{mark}*")]
    assert survivors == []


# --- Runs side by side --------------------------------------------------------------------------

FORK_BOMB = """\
import subprocess
import sys
import time

BOMB = (
    "import os\\nwhile True:\\n    try:\\n        os.fork()\\n"
    "    except OSError:\\n        pass\\n"
)


def test_fork_bomb_runs_for_a_while():
    subprocess.Popen([sys.executable, "-c", BOMB], start_new_session=True)
    time.sleep(8)
"""

NEIGHBOUR = """\
import subprocess
import threading


def test_starts_processes_and_threads():
    for _ in range(5):
        subprocess.run(["true"], check=True)
    threads = [threading.Thread(target=lambda: None) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
"""


def test_a_fork_bomb_does_not_make_a_concurrent_run_fail(backend, make_snapshot):
    snapshot = make_snapshot(
        {"tests/test_bomb.py": FORK_BOMB, "tests/test_neighbour.py": NEIGHBOUR}
    )
    bomb_result = {}

    def bomb() -> None:
        bomb_result["result"] = backend.run(
            RunRequest(
                snapshot=snapshot,
                tests=("tests/test_bomb.py",),
                limits=Limits(wall_seconds=60, max_processes=64),
            )
        )

    thread = threading.Thread(target=bomb)
    thread.start()
    neighbours = []
    try:
        time.sleep(1.5)  # the bomb is going off
        while thread.is_alive() and len(neighbours) < 20:
            neighbours.append(
                backend.run(
                    RunRequest(
                        snapshot=snapshot,
                        tests=("tests/test_neighbour.py",),
                        limits=Limits(wall_seconds=60),
                    )
                )
            )
    finally:
        thread.join()
    assert neighbours
    assert [failures(result) for result in neighbours] == [{}] * len(neighbours)
    assert all(len(result.tests) == 1 for result in neighbours)
    assert outcomes(bomb_result["result"]) == {
        "tests/test_bomb.py::test_fork_bomb_runs_for_a_while": "passed"
    }


# --- A worker killed in the middle of a run ---------------------------------------------------

DAEMON = """\
import os
import subprocess
import time


def test_leaves_a_daemon_and_waits():
    subprocess.Popen(["sleep", "{mark}"], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("sleep", ["sleep", "{mark}"])
        os._exit(0)
    time.sleep(60)
"""

WORKER = """\
import sys
from pathlib import Path

sys.path.insert(0, {checkout!r})
from workers.sandbox import Limits, RunRequest, Snapshot, get_backend

backend = get_backend("process", root=Path({root!r}))
backend.run(
    RunRequest(
        snapshot=Snapshot(Path({git_dir!r}), {commit!r}),
        tests=("tests/test_daemon.py",),
        limits=Limits(wall_seconds=120),
    )
)
"""


def test_a_killed_worker_leaves_no_jailed_process_and_its_run_is_swept(
    session_backend, make_snapshot, sandbox_root
):
    mark = f"{3000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**6}"
    snapshot = make_snapshot({"tests/test_daemon.py": DAEMON.format(mark=mark)})
    script = WORKER.format(
        checkout=str(APP_CHECKOUT),
        root=str(sandbox_root),
        git_dir=str(snapshot.git_dir),
        commit=snapshot.commit,
    )
    worker = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while len(processes_with(mark)) < 2 and time.monotonic() < deadline:
            assert worker.poll() is None, "the worker ended before its run started"
            time.sleep(0.1)
        assert len(processes_with(mark)) >= 2, "the test's daemons never started"
        owner = owner_tag(worker.pid)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    finally:
        if worker.poll() is None:
            worker.kill()
    time.sleep(2)
    assert processes_with(mark) == []
    # What the dead worker left (its run folder, its run's cgroup) goes with the next sweep.
    assert process_start_time(worker.pid) is None or owner_tag(worker.pid) != owner
    session_backend.sweep()
    assert list((sandbox_root / "runs").glob(f"{owner}-*")) == []
    assert list((sandbox_root / "discarded").glob(f"{owner}-*")) == []
    cgroup_parent = session_backend.jails.hierarchy.parents[0]
    assert list(cgroup_parent.glob(f"{owner}-*")) == []


# --- Environment builds ---------------------------------------------------------------------

EVIL_BACKEND = """\
import os
import socket


def probe():
    found = {"uid": str(os.getuid())}

    def attempt(name, action):
        try:
            action()
            found[name] = "done"
        except FileNotFoundError:
            found[name] = "absent"
        except PermissionError:
            found[name] = "denied"
        except OSError as exc:
            found[name] = type(exc).__name__

    def connect(host, port):
        with socket.create_connection((host, port), timeout=2):
            pass

    attempt("shadow", lambda: open("/etc/shadow").read(15))
    attempt("worker_environ", lambda: open("/proc/%(worker)d/environ", "rb").read())
    attempt("checkout", lambda: open("%(checkout)s/manage.py").read())
    attempt("postgres", lambda: connect("127.0.0.1", 5432))
    attempt("redis", lambda: connect("127.0.0.1", 6379))
    attempt("outside", lambda: connect("1.1.1.1", 80))
    attempt("host_temp", lambda: open("%(host_temp)s/%(mark)s", "w").write("x"))
    return " ".join(f"{key}={value}" for key, value in sorted(found.items()))


raise SystemExit("PROBE " + probe())
"""

EVIL_PYPROJECT = """\
[build-system]
requires = []
build-backend = "evil_backend"
backend-path = ["."]

[project]
name = "evilproj"
version = "0.1.0"
"""


def probe_fields(output: str) -> dict[str, str]:
    line = next(line for line in output.splitlines() if "PROBE " in line)
    return dict(item.split("=", 1) for item in line.split("PROBE ", 1)[1].split())


def test_an_in_tree_build_backend_runs_jailed_offline_and_unprivileged(
    session_backend, make_snapshot, sandbox_root
):
    mark = f"specloom-build-probe-{uuid.uuid4().hex}"
    backend_source = EVIL_BACKEND % {
        "worker": os.getpid(),
        "checkout": APP_CHECKOUT,
        "host_temp": sandbox_root.parent,
        "mark": mark,
    }
    snapshot = make_snapshot(
        {"pyproject.toml": EVIL_PYPROJECT, "evil_backend.py": backend_source}, base=False
    )
    with pytest.raises(EnvironmentBuildError) as raised:
        session_backend.ensure_environment(snapshot, EnvironmentSpec())
    fields = probe_fields(raised.value.output_tail)
    assert fields == {
        "uid": str(NOBODY_UID),
        "shadow": "absent",
        "worker_environ": "absent",
        "checkout": "absent",
        "postgres": "ConnectionRefusedError",
        "redis": "ConnectionRefusedError",
        "outside": "OSError",
        "host_temp": "done",  # inside the jail's own tmpfs ...
    }, raised.value.output_tail
    assert not (sandbox_root.parent / mark).exists()  # ... which the host never sees


def test_a_curators_setup_command_runs_jailed_as_the_jails_user(
    session_backend, make_snapshot, sandbox_root
):
    mark = f"specloom-setup-probe-{uuid.uuid4().hex}"
    command = textwrap.dedent(
        f"""\
        echo "uid=$(id -u)"
        head -c 15 /etc/shadow || echo "shadow=unreadable"
        echo planted > {sandbox_root.parent}/{mark}
        python3 -c "import socket; socket.create_connection(('127.0.0.1', 5432), 2)" \\
          && echo "postgres=reachable"
        exit 7
        """
    )
    snapshot = make_snapshot({"tests/test_nothing.py": "def test_nothing():\n    pass\n"})
    with pytest.raises(EnvironmentBuildError) as raised:
        session_backend.ensure_environment(snapshot, EnvironmentSpec(setup_command=command))
    output = raised.value.output_tail
    assert raised.value.returncode == 7
    assert f"uid={NOBODY_UID}" in output
    assert "shadow=unreadable" in output
    assert "postgres=reachable" not in output
    assert not (sandbox_root.parent / mark).exists()


def test_a_finished_run_leaves_runs_at_once_and_its_folder_is_removed_or_swept(
    session_backend, sandbox_root, make_snapshot
):
    # A run's folder is moved out of `runs` before the result is returned and removed in the
    # background; one its worker did not live to remove goes with the next sweep.
    snapshot = make_snapshot({"tests/test_a.py": "def test_a():\n    open('left.txt', 'w')\n"})
    before = set(os.listdir(sandbox_root / "runs"))
    result = session_backend.run(RunRequest(snapshot=snapshot))
    assert result.tests["tests/test_a.py::test_a"].outcome == "passed"
    assert set(os.listdir(sandbox_root / "runs")) <= before
    session_backend.wait_for_removals()
    assert not [name for name in os.listdir(sandbox_root / "discarded") if owner_tag() in name]

    gone = subprocess.Popen(["true"])
    gone.wait()
    orphan = sandbox_root / "discarded" / f"{gone.pid}.1-{uuid.uuid4().hex}"
    (orphan / "work").mkdir(parents=True)
    (orphan / "work" / "left.txt").write_text("x")
    assert orphan.name in session_backend.sweep()["run_folders"]
    assert not orphan.exists()
