"""Warm jails (workers/sandbox/warm.py): the next run of an environment in an interpreter started,
jailed, before it — same outcomes as a cold run, never a way around the jail. Real runs."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workers.sandbox import EnvironmentSpec, Limits, RunRequest, get_backend
from workers.sandbox import run_folder as run_folder_module
from workers.sandbox.jail import patch_user
from workers.sandbox.warm_start import SHADOWED_EXIT, SHADOWED_MARKER
from workers.sandbox.workcopy import chown_tree

pytestmark = [pytest.mark.slow, pytest.mark.needs_root]

TESTS = {
    "tests/test_math.py": (
        "from sampleproj import add, mul\n\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_mul():\n    assert mul(2, 3) == 6\n\n\n"
        "def test_fails():\n    assert add(1, 1) == 3\n"
    )
}
SOLVE = (
    "diff --git a/src/sampleproj/extra.py b/src/sampleproj/extra.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/src/sampleproj/extra.py\n@@ -0,0 +1 @@\n+VALUE = 1\n"
)


@pytest.fixture
def warm_backend(sandbox_root: Path):
    backend = get_backend("process", root=sandbox_root, warm_jails=1)
    yield backend
    backend.warm.close()
    backend.wait_for_removals()


def request_for(snapshot, **changes) -> RunRequest:
    values = {
        "snapshot": snapshot,
        "environment": EnvironmentSpec(),
        "patches": (SOLVE,),
        "tests": ("tests/test_math.py",),
        "limits": Limits(wall_seconds=120),
    }
    return RunRequest(**(values | changes))


def outcomes(result) -> dict[str, str]:
    return {nodeid: test.outcome.value for nodeid, test in result.tests.items()}


def wait_for_warm_jail(backend, timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with backend.warm._lock:
            if any(warm.ready() for warms in backend.warm._ready.values() for warm in warms):
                return
        time.sleep(0.05)
    raise AssertionError("no warm jail was started")


def test_the_next_run_of_an_environment_starts_warm_with_the_same_outcomes(
    warm_backend, make_snapshot
):
    snapshot = make_snapshot(TESTS)
    cold = warm_backend.run(request_for(snapshot))
    assert not cold.warm_start
    wait_for_warm_jail(warm_backend)

    warm = warm_backend.run(request_for(snapshot))

    assert warm.warm_start
    assert (
        outcomes(warm)
        == outcomes(cold)
        == {
            "tests/test_math.py::test_add": "passed",
            "tests/test_math.py::test_mul": "passed",
            "tests/test_math.py::test_fails": "failed",
        }
    )
    assert warm.exit_code == cold.exit_code == 1
    assert "assert 2 == 3" in warm.tests["tests/test_math.py::test_fails"].message
    assert warm.patch_failure is None


def test_a_run_with_coverage_or_a_patch_that_does_not_apply_never_uses_a_warm_jail(
    warm_backend, make_snapshot
):
    snapshot = make_snapshot(TESTS)
    warm_backend.run(request_for(snapshot))
    wait_for_warm_jail(warm_backend)

    measured = warm_backend.run(request_for(snapshot, coverage=True))
    broken = warm_backend.run(request_for(snapshot, patches=("not a patch\n",)))

    assert not measured.warm_start and measured.coverage
    assert broken.patch_failure is not None and not broken.warm_start


def test_a_working_copy_that_shadows_pytest_runs_cold_and_gets_its_own_module(
    warm_backend, make_snapshot
):
    """`python -m pytest` imports a repository's own pytest.py; so must the warm path."""
    shadowing = (
        "diff --git a/pytest.py b/pytest.py\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/pytest.py\n@@ -0,0 +1,2 @@\n+print('the repository own pytest ran')\n"
        "+raise SystemExit(0)\n"
    )
    snapshot = make_snapshot(TESTS)
    warm_backend.run(request_for(snapshot))
    wait_for_warm_jail(warm_backend)

    result = warm_backend.run(request_for(snapshot, patches=(SOLVE, shadowing)))

    assert not result.warm_start, (result.stdout_tail, result.stderr_tail)
    assert "the repository own pytest ran" in result.stdout_tail
    assert result.tests == {}


def test_the_warm_starter_refuses_a_folder_that_shadows_what_it_imported(tmp_path):
    (tmp_path / "pytest.py").write_text("raise SystemExit('not this one')\n")
    # Run from a folder of its own, as from a run's support folder (beside it here: types.py).
    (tmp_path / "support").mkdir()
    starter = tmp_path / "support" / "warm_start.py"
    shutil.copyfile(Path(run_folder_module.__file__).with_name("warm_start.py"), starter)
    ready_read, ready_write = os.pipe()
    done = subprocess.run(
        [sys.executable, str(starter), str(ready_write)],
        input=f'{{"cwd": "{tmp_path}", "args": ["--version"]}}\n',
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        pass_fds=(ready_write,),
    )
    os.close(ready_write)
    assert os.read(ready_read, 64) == b"ready\n"
    os.close(ready_read)
    assert done.returncode == SHADOWED_EXIT
    assert f"{SHADOWED_MARKER} pytest" in done.stderr


def test_patches_are_applied_by_another_user_before_the_jail_user_gets_the_copy(
    sandbox_root, make_snapshot, monkeypatch
):
    """While a warm jail waits, its user must reach nothing of the copy being prepared."""
    backend = get_backend("process", root=sandbox_root)
    jail_uid = backend.jails.user[0]
    seen = {}
    original = run_folder_module.apply_patches

    def recording(work, patches, **options):
        seen["work_owner"] = work.stat().st_uid
        seen["run_as"] = options["run_as"]
        return original(work, patches, **options)

    monkeypatch.setattr(run_folder_module, "apply_patches", recording)
    run = run_folder_module.RunFolder(sandbox_root / "runs" / f"test-warm-{os.getpid()}")
    run.create()
    try:
        user = patch_user(backend.jails.user)
        prepared = run_folder_module.prepare_working_copy(
            run,
            request_for(make_snapshot(TESTS)),
            sandbox_user=backend.jails.user,
            patch_user=user,
        )
        assert prepared.patch_failure is None
        assert seen == {"work_owner": user[0], "run_as": user}
        owners = {path.lstat().st_uid for path in run.work.rglob("*")} | {run.work.stat().st_uid}
        assert owners == {jail_uid}
        assert (run.work / "src/sampleproj/extra.py").read_text() == "VALUE = 1\n"
    finally:
        from workers.sandbox.workcopy import remove_tree

        remove_tree(run.path)


def test_the_patch_user_is_no_account_of_this_host():
    uid, gid = patch_user((65534, 65534))
    assert uid != 65534
    with pytest.raises(KeyError):
        pwd.getpwuid(uid)
    assert 1000 < uid < 65534 and gid == uid


def test_a_tree_is_given_away_children_first_and_its_top_last(tmp_path, monkeypatch):
    (tmp_path / "top" / "a" / "b").mkdir(parents=True)
    (tmp_path / "top" / "a" / "b" / "f.py").write_text("")
    (tmp_path / "top" / "g.py").write_text("")
    order = []
    monkeypatch.setattr(os, "lchown", lambda path, uid, gid: order.append(str(path)))

    chown_tree(tmp_path / "top", 1, 1)

    top = str(tmp_path / "top")
    assert order[-1] == top
    for index, path in enumerate(order):
        # Nothing is changed after the folder that holds it.
        assert not any(path.startswith(earlier + "/") for earlier in order[:index])


def test_closing_ends_every_warm_jail_and_removes_its_folder(sandbox_root, make_snapshot):
    backend = get_backend("process", root=sandbox_root, warm_jails=1)
    backend.run(request_for(make_snapshot(TESTS)))
    wait_for_warm_jail(backend)
    with backend.warm._lock:
        warm = next(w for ws in backend.warm._ready.values() for w in ws)
    pid = warm.started.child.proc.pid

    backend.warm.close()

    assert not warm.run.path.exists()
    assert warm.started.child.proc.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def wait_for_walls(backend, walls: list[int], timeout: float = 60.0) -> dict:
    """The pool's ready jails by slot, once they are one each for the slots of these wall
    limits (the pool fills in the background)."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with backend.warm._lock:
            ready = {slot: list(warms) for slot, warms in backend.warm._ready.items()}
        ready_walls = sorted(slot.limits.wall_seconds for slot in ready)
        if ready_walls == walls and all(w.ready() for ws in ready.values() for w in ws):
            return ready
        time.sleep(0.05)
    raise AssertionError(f"the warm jails are not those of {walls}: {ready_walls}")


def test_the_pool_keeps_at_most_its_total_and_the_least_recently_run_slot_gives_way(
    sandbox_root, make_snapshot
):
    # Each slot is an environment as a run uses it (here: three wall limits on one build). A
    # worker going through a corpus meets many; each warm jail holds an interpreter.
    backend = get_backend("process", root=sandbox_root, warm_jails=1, warm_jails_total=2)
    try:
        snapshot = make_snapshot(TESTS)
        first, second, third = (Limits(wall_seconds=s) for s in (120, 121, 122))
        backend.run(request_for(snapshot, limits=first))
        [(first_slot, [first_jail])] = wait_for_walls(backend, [120]).items()
        backend.run(request_for(snapshot, limits=second))
        wait_for_walls(backend, [120, 121])

        backend.run(request_for(snapshot, limits=third))
        ready = wait_for_walls(backend, [121, 122])

        assert first_slot not in ready
        assert not first_jail.run.path.exists()
        assert first_jail.started.child.proc.poll() is not None
        # The slot that gave way runs cold, then is warm again, in place of the oldest.
        again = backend.run(request_for(snapshot, limits=first))
        assert not again.warm_start
        wait_for_walls(backend, [120, 122])
    finally:
        backend.warm.close()
        backend.wait_for_removals()
