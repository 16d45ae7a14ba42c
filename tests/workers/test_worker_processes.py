"""Real Celery worker processes against the real database and broker.

The job row is the truth: a worker killed mid-job, two workers racing for one job and a message
the broker lost must all end with the job done exactly once.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone

from tests.conftest import requires_redis
from workers.models import Job
from workers.services import job_dispatch, job_enqueue, job_reap

ROOT = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 3

pytestmark = pytest.mark.django_db(transaction=True)


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _purge_broker() -> None:
    if settings.REDIS_URL:
        from specloom.celery import app

        with app.connection_for_write() as conn:
            for queue in ("default", "sandbox", "synthesis"):
                conn.default_channel.queue_purge(queue)
    else:
        folder = settings.BROKER_DIR / "queue"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)


class WorkerProcess:
    def __init__(self, name: str):
        self.name = name
        env = {
            **os.environ,
            "DATABASE_URL": _database_url(),
            "SPECLOOM_JOB_LEASE_SECONDS": str(LEASE_SECONDS),
            "PYTHONUNBUFFERED": "1",
        }
        self.output: list[str] = []
        self.ready = threading.Event()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "specloom",
                "worker",
                "-Q",
                "default",
                "-c",
                "1",
                "-n",
                f"{name}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "-l",
                "INFO",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(60):
            self.kill()
            raise AssertionError("worker did not start:\n" + "".join(self.output[-40:]))

    def _read(self) -> None:
        for line in self.process.stdout:
            self.output.append(line)
            if " ready." in line:
                self.ready.set()

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)


@pytest.fixture
def workers():
    _purge_broker()
    started: list[WorkerProcess] = []

    def start(name: str) -> WorkerProcess:
        worker = WorkerProcess(name)
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.kill()
        # Shown by pytest only when the test failed.
        print(f"--- output of {worker.name} ---\n" + "".join(worker.output[-60:]))


def _wait_for(predicate, timeout: float = 60, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _job(pk: int) -> Job:
    return Job.objects.get(pk=pk)


def test_a_job_whose_worker_is_killed_is_reaped_and_completes_exactly_once(workers, tmp_path):
    marker = tmp_path / "completions.txt"
    first = workers("first")
    job = job_enqueue(kind="sleep", params={"seconds": 6, "steps": 30, "marker_file": str(marker)})
    _wait_for(lambda: _job(job.pk).progress >= 10, what="the job to be half-way")
    first.kill()

    time.sleep(LEASE_SECONDS + 0.5)
    assert job_reap()["requeued"] == 1
    workers("second")
    done = _wait_for(lambda: _job(job.pk).status == "succeeded" and _job(job.pk), what="success")

    assert done.attempts == 2
    assert len(marker.read_text().splitlines()) == 1


def test_two_workers_racing_for_one_job_run_it_once(workers, tmp_path):
    marker = tmp_path / "completions.txt"
    workers("one")
    workers("two")
    job = job_enqueue(kind="sleep", params={"seconds": 1, "steps": 2, "marker_file": str(marker)})
    job_dispatch(job=job)  # a duplicate message: both workers receive one
    _wait_for(lambda: _job(job.pk).status == "succeeded", what="success")
    time.sleep(1.5)  # give the second message time to be consumed and refused

    assert _job(job.pk).attempts == 1
    assert len(marker.read_text().splitlines()) == 1


def test_a_job_whose_message_was_lost_is_recovered_by_the_reaper(workers, tmp_path, settings):
    marker = tmp_path / "completions.txt"
    workers("lonely")
    stale = timezone.now() - timedelta(seconds=settings.JOB_REQUEUE_STALE_SECONDS + 60)
    # The row says queued, but no message was ever sent: the broker lost it.
    job = Job.objects.create(
        kind="sleep", params={"seconds": 0.2, "marker_file": str(marker)}, enqueued_at=stale
    )
    time.sleep(2)
    assert _job(job.pk).status == "queued"

    assert job_reap()["redispatched"] == 1
    _wait_for(lambda: _job(job.pk).status == "succeeded", what="success")
    assert len(marker.read_text().splitlines()) == 1


@requires_redis
def test_two_worker_processes_on_redis_share_a_batch_of_jobs(workers, tmp_path):
    workers("left")
    workers("right")
    jobs = [job_enqueue(kind="sleep", params={"seconds": 1.5, "steps": 3}) for _ in range(6)]
    _wait_for(
        lambda: all(_job(j.pk).status == "succeeded" for j in jobs), timeout=90, what="all jobs"
    )
    processes = {_job(j.pk).worker.rsplit(":", 1)[0] for j in jobs}
    assert len(processes) == 2, processes
