"""A cgroup per run, on the real cgroup trees of this host: v1 controllers (limits, OOM count,
kill) and, where the host also mounts the unified v2 tree, v2 membership, kill and sweep."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from workers.sandbox.cgroups import (
    CGROUP_MOUNT,
    detect_hierarchy,
    owner_is_alive,
    owner_of,
    owner_tag,
    process_start_time,
    unified_test_hierarchy,
)
from workers.sandbox.types import Limits

pytestmark = pytest.mark.needs_root

V1_AVAILABLE = all((CGROUP_MOUNT / name / "cgroup.procs").is_file() for name in ("pids", "memory"))
UNIFIED = CGROUP_MOUNT / "unified"


@pytest.fixture
def hierarchy():
    if not ((CGROUP_MOUNT / "cgroup.controllers").is_file() or V1_AVAILABLE):
        pytest.skip("no cgroup tree with the pids and memory controllers on this host")
    made = detect_hierarchy(f"specloom-test-{os.getpid()}")
    yield made
    for parent in made.parents:
        with contextlib.suppress(OSError):
            parent.rmdir()


def sleeper_in(cgroup, *extra: str) -> subprocess.Popen:
    """A process that joins the cgroup itself (as the launcher does) and then sleeps."""
    joins = "".join(f"echo $$ > {procs}; " for procs in cgroup.procs_files)
    return subprocess.Popen(["/bin/sh", "-c", f"{joins}exec sleep {' '.join(extra) or '300'}"])


def wait_for(predicate, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()


def test_the_owner_tag_names_a_live_process_exactly():
    tag = owner_tag()
    assert tag == f"{os.getpid()}.{process_start_time(os.getpid())}"
    assert owner_is_alive(tag)
    assert owner_of(f"{tag}-{uuid.uuid4().hex}") == tag
    # Same pid, another start time: a reused pid is not the owner.
    assert not owner_is_alive(f"{os.getpid()}.1")
    assert not owner_is_alive("not-a-tag")


def test_a_run_cgroup_carries_the_limits(hierarchy):
    cgroup = hierarchy.run_cgroup(f"{owner_tag()}-{uuid.uuid4().hex}")
    cgroup.create(Limits(max_processes=42, memory_bytes=256 * 1024**2, cpu_cores=0.5))
    try:
        if hierarchy.version == 1:
            pids, memory, cpu = cgroup.folders[:3]
            assert (pids / "pids.max").read_text().strip() == "42"
            assert int((memory / "memory.limit_in_bytes").read_text()) == 256 * 1024**2
            assert (cpu / "cpu.cfs_quota_us").read_text().strip() == "50000"
        else:
            folder = cgroup.folders[0]
            assert (folder / "pids.max").read_text().strip() == "42"
            assert int((folder / "memory.max").read_text()) == 256 * 1024**2
            assert (folder / "cpu.max").read_text().split() == ["50000", "100000"]
    finally:
        cgroup.kill()
        cgroup.remove()
    assert not any(folder.exists() for folder in cgroup.folders)


def test_killing_a_run_cgroup_kills_everything_in_it(hierarchy):
    cgroup = hierarchy.run_cgroup(f"{owner_tag()}-{uuid.uuid4().hex}")
    cgroup.create(Limits())
    process = sleeper_in(cgroup)
    try:
        assert wait_for(lambda: process.pid in cgroup.pids())
        cgroup.kill()
        assert process.wait(timeout=5) == -signal.SIGKILL
        assert cgroup.pids() == []
    finally:
        cgroup.kill()
        cgroup.remove()


def test_the_memory_limit_is_enforced_and_counted_by_the_kernel(hierarchy):
    cgroup = hierarchy.run_cgroup(f"{owner_tag()}-{uuid.uuid4().hex}")
    cgroup.create(Limits(memory_bytes=64 * 1024**2))
    joins = "".join(f"echo $$ > {procs}; " for procs in cgroup.procs_files)
    hog = "b = bytearray(512 * 1024 * 1024)"
    try:
        process = subprocess.run(
            ["/bin/sh", "-c", f"{joins}exec /usr/bin/python3 -c '{hog}'"], check=False
        )
        assert process.returncode == -signal.SIGKILL
        assert cgroup.oom_kills() >= 1
    finally:
        cgroup.kill()
        cgroup.remove()


def test_the_sweep_removes_cgroups_of_dead_owners_only(hierarchy):
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead_owner = f"{gone.pid}.{process_start_time(os.getpid())}"
    orphan = hierarchy.run_cgroup(f"{dead_owner}-{uuid.uuid4().hex}")
    mine = hierarchy.run_cgroup(f"{owner_tag()}-{uuid.uuid4().hex}")
    orphan.create(Limits())
    mine.create(Limits())
    left_running = sleeper_in(orphan)
    try:
        assert wait_for(lambda: left_running.pid in orphan.pids())
        assert hierarchy.sweep() == [orphan.name]
        assert left_running.wait(timeout=5) == -signal.SIGKILL
        assert not any(folder.exists() for folder in orphan.folders)
        assert all(folder.exists() for folder in mine.folders)
    finally:
        for cgroup in (orphan, mine):
            cgroup.kill()
            cgroup.remove()


@pytest.mark.skipif(
    not (UNIFIED / "cgroup.procs").is_file(),
    reason="needs a unified (v2) cgroup tree at /sys/fs/cgroup/unified to test the v2 paths",
)
def test_v2_membership_kill_and_sweep_on_the_unified_tree():
    hierarchy = unified_test_hierarchy(UNIFIED / f"specloom-test-{os.getpid()}")
    gone = subprocess.Popen(["true"])
    gone.wait()
    orphan = hierarchy.run_cgroup(f"{gone.pid}.1-{uuid.uuid4().hex}")
    orphan.create(Limits())
    process = sleeper_in(orphan)
    try:
        assert orphan.procs_files == [str(orphan.folders[0] / "cgroup.procs")]
        assert wait_for(lambda: process.pid in orphan.pids())
        assert hierarchy.sweep() == [orphan.name]
        assert process.wait(timeout=5) == -signal.SIGKILL
        assert not orphan.folders[0].exists()
    finally:
        orphan.kill()
        orphan.remove()
        Path(hierarchy.parents[0]).rmdir()
