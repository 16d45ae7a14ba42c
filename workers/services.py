"""The job lifecycle: enqueue after commit, claim by conditional update, heartbeat, finish, reap.

Every state change is a single conditional UPDATE on the job row, so two workers, a reaper and
a cancelling user can act at the same moment and at most one of them wins each transition.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import traceback
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from workers.models import Job
from workers.registry import UnknownJobKind, get_job_kind

logger = logging.getLogger(__name__)

LOG_TAIL_CHARS = 20_000
MESSAGE_CHARS = 500  # Job.message's max_length


def fit_message(text: str, limit: int = MESSAGE_CHARS) -> str:
    """`text` within `limit` characters; one that does not fit ends at a word with an ellipsis,
    so a cut reason never reads as a different word ("an s")."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:(") + "…"


class JobLeaseLost(RuntimeError):
    """The job was taken away from this worker (reaped, cancelled); stop working on it."""


class JobFailed(Exception):
    """A handler's honest "this produced nothing": the job ends failed with `message` (one
    sentence of cause and how to fix it; no traceback, it is not a crash), `error` the longer
    text when there is one, and keeps `result` (e.g. the report of what was tried)."""

    def __init__(
        self, message: str, *, error: str = "", result: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = self.reason = message
        self.error = error or message
        self.result = result or {}


class JobNotRetryable(ValueError):
    pass


@dataclass(frozen=True)
class JobRequest:
    """One job of a batch: what it works on and what it says while it waits."""

    target: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    message: str = ""


def job_enqueue(
    *,
    kind: str,
    target=None,
    params: dict[str, Any] | None = None,
    user=None,
    queue: str | None = None,
    max_attempts: int | None = None,
    message: str = "",
) -> Job:
    """Create a queued job and send its message once the surrounding transaction commits."""
    (job,) = job_enqueue_many(
        kind=kind,
        requests=[JobRequest(target=target, params=params or {}, message=message)],
        user=user,
        queue=queue,
        max_attempts=max_attempts,
    )
    return job


def job_enqueue_many(
    *,
    kind: str,
    requests: list[JobRequest],
    user=None,
    queue: str | None = None,
    max_attempts: int | None = None,
) -> list[Job]:
    """`job_enqueue` for a batch: the same rows, written with one INSERT, each sent on commit.

    An import of thousands of trajectories would otherwise spend a round trip on each job.
    """
    job_kind = get_job_kind(kind)
    now = timezone.now()
    rows = [
        Job(
            kind=kind,
            queue=queue or job_kind.queue,
            params=request.params,
            target_type=(
                ContentType.objects.get_for_model(request.target)
                if request.target is not None
                else None
            ),
            target_id=str(request.target.pk) if request.target is not None else "",
            max_attempts=max_attempts or job_kind.max_attempts or settings.JOB_MAX_ATTEMPTS,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            enqueued_at=now,
            message=fit_message(request.message or "queued"),
        )
        for request in requests
    ]
    jobs = Job.objects.bulk_create(rows)

    def dispatch() -> None:
        for job in jobs:
            job_dispatch(job=job)

    transaction.on_commit(dispatch)
    return jobs


def job_dispatch(*, job: Job) -> None:
    """Send the job's message. A duplicate is harmless: claiming is conditional."""
    # By task name, so this module need not import the Celery task module (which imports us).
    current_app.send_task("workers.run_job", args=[job.pk], queue=job.queue)


def job_claim(*, job_id: int, worker: str) -> Job | None:
    """Take a queued job for `worker`. None when someone else has it or it no longer waits."""
    now = timezone.now()
    claimed = Job.objects.filter(pk=job_id, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING,
        worker=worker,
        attempts=F("attempts") + 1,
        started_at=now,
        lease_expires_at=now + timedelta(seconds=settings.JOB_LEASE_SECONDS),
        message="running",
        updated_at=now,
    )
    if not claimed:
        return None
    return Job.objects.get(pk=job_id)


def _owned(job: Job):
    return Job.objects.filter(
        pk=job.pk, status=Job.Status.RUNNING, worker=job.worker, attempts=job.attempts
    )


def job_heartbeat(*, job: Job) -> bool:
    """Extend the lease; False when the job is no longer this worker's."""
    now = timezone.now()
    return bool(
        _owned(job).update(
            lease_expires_at=now + timedelta(seconds=settings.JOB_LEASE_SECONDS), updated_at=now
        )
    )


def job_succeed(*, job: Job, result: dict[str, Any] | None = None, message: str = "done") -> bool:
    now = timezone.now()
    return bool(
        _owned(job).update(
            status=Job.Status.SUCCEEDED,
            progress=100,
            result=result or {},
            message=fit_message(message),
            finished_at=now,
            lease_expires_at=None,
            updated_at=now,
        )
    )


def job_fail(
    *, job: Job, error: str, message: str = "failed", result: dict[str, Any] | None = None
) -> bool:
    now = timezone.now()
    fields: dict[str, Any] = {"result": result} if result is not None else {}
    return bool(
        _owned(job).update(
            **fields,
            status=Job.Status.FAILED,
            error=error[-LOG_TAIL_CHARS:],
            message=fit_message(message),
            finished_at=now,
            lease_expires_at=None,
            updated_at=now,
        )
    )


def job_cancel(*, job: Job) -> bool:
    """Cancel a job that has not finished. A running handler notices at its next heartbeat."""
    now = timezone.now()
    return bool(
        Job.objects.filter(pk=job.pk, status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).update(
            status=Job.Status.CANCELLED,
            message="cancelled",
            finished_at=now,
            lease_expires_at=None,
            updated_at=now,
        )
    )


def job_retry(*, job: Job, user=None) -> Job:
    """Start a failed or cancelled job again: a new job with the same kind, target and
    parameters (the old one stays as the record of what happened)."""
    if job.status not in (Job.Status.FAILED, Job.Status.CANCELLED):
        raise JobNotRetryable(f"job {job.pk} is {job.status}; only failed or cancelled jobs retry")
    retry = job_enqueue(
        kind=job.kind,
        target=job.target,
        params={**job.params, "retry_of": job.pk},
        user=user,
        queue=job.queue,
        message=f"retry of job {job.pk}",
    )
    return retry


def job_reap(*, now=None) -> dict[str, int]:
    """Recover jobs whose worker vanished and jobs whose message the broker lost.

    Running jobs with an expired lease go back to the queue until they run out of attempts, then
    fail with the reason. Queued jobs that nobody picked up for a long time get their message
    sent again.
    """
    now = now or timezone.now()
    counts = {"requeued": 0, "failed": 0, "redispatched": 0}
    expired = Job.objects.filter(status=Job.Status.RUNNING, lease_expires_at__lt=now)
    for job in expired:
        base = Job.objects.filter(
            pk=job.pk, status=Job.Status.RUNNING, lease_expires_at__lt=now, attempts=job.attempts
        )
        if job.attempts >= job.max_attempts:
            if base.update(
                status=Job.Status.FAILED,
                error=(
                    f"the worker's lease expired on attempt {job.attempts} of "
                    f"{job.max_attempts} (worker {job.worker or '?'} lost or killed); giving up"
                ),
                message="failed: worker lost",
                finished_at=now,
                lease_expires_at=None,
                updated_at=now,
            ):
                counts["failed"] += 1
                _abandoned(job)
        elif base.update(
            status=Job.Status.QUEUED,
            message=f"re-queued after the lease of {job.worker or '?'} expired",
            worker="",
            lease_expires_at=None,
            enqueued_at=now,
            updated_at=now,
        ):
            counts["requeued"] += 1
            job.refresh_from_db()
            job_dispatch(job=job)

    stale_before = now - timedelta(seconds=settings.JOB_REQUEUE_STALE_SECONDS)
    for job in Job.objects.filter(status=Job.Status.QUEUED, enqueued_at__lt=stale_before):
        if Job.objects.filter(
            pk=job.pk, status=Job.Status.QUEUED, enqueued_at=job.enqueued_at
        ).update(enqueued_at=now, message="message sent again (not picked up)", updated_at=now):
            counts["redispatched"] += 1
            job_dispatch(job=job)
    if any(counts.values()):
        logger.info("reaper: %s", counts)
    return counts


def _abandoned(job: Job) -> None:
    """Let the job's kind undo what its killed handler left half-made."""
    try:
        kind = get_job_kind(job.kind)
    except UnknownJobKind:
        return
    if kind.on_abandoned is None:
        return
    try:
        kind.on_abandoned(job)
    except Exception:  # the reaper goes on with the other jobs
        logger.exception("cleaning up after abandoned job %s (%s) failed", job.pk, job.kind)


@dataclass
class JobContext:
    """What a handler gets besides the job: progress, log and a way to notice it lost the job."""

    job: Job
    _lost: threading.Event = field(default_factory=threading.Event)
    _log: list[str] = field(default_factory=list)

    def progress(self, percent: int, message: str = "") -> None:
        self.check()
        percent = max(0, min(100, int(percent)))
        fields: dict[str, Any] = {"progress": percent, "updated_at": timezone.now()}
        if message:
            fields["message"] = fit_message(message)
        if not _owned(self.job).update(**fields):
            self._lost.set()
            self.check()

    def log(self, line: str) -> None:
        self.check()
        self._log.append(line.rstrip("\n"))
        tail = "\n".join(self._log)[-LOG_TAIL_CHARS:]
        if not _owned(self.job).update(log_tail=tail, updated_at=timezone.now()):
            self._lost.set()
            self.check()

    def check(self) -> None:
        if self._lost.is_set():
            raise JobLeaseLost(f"job {self.job.pk} is no longer held by {self.job.worker}")

    @property
    def lost(self) -> bool:
        return self._lost.is_set()


class _Heartbeat(threading.Thread):
    def __init__(self, ctx: JobContext):
        super().__init__(daemon=True, name=f"job-{ctx.job.pk}-heartbeat")
        self.ctx = ctx
        self.stopped = threading.Event()
        self.interval = max(1.0, settings.JOB_LEASE_SECONDS / 3)

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.interval):
                try:
                    if not job_heartbeat(job=self.ctx.job):
                        self.ctx._lost.set()
                        return
                except Exception:  # a passing database hiccup must not kill the heartbeat
                    logger.exception("heartbeat of job %s failed", self.ctx.job.pk)
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join(timeout=self.interval + 5)


def worker_identity() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def job_execute(*, job_id: int, worker: str | None = None) -> str:
    """Claim and run one job to its end. Returns what happened, for logs and tests."""
    worker = worker or worker_identity()
    job = job_claim(job_id=job_id, worker=worker)
    if job is None:
        return "not-claimed"
    ctx = JobContext(job=job)
    heartbeat = _Heartbeat(ctx)
    heartbeat.start()
    try:
        handler = get_job_kind(job.kind).handler
        result = handler(job, ctx)
    except JobLeaseLost:
        logger.warning("job %s lost its lease while running; leaving it to its new owner", job.pk)
        return "lost"
    except JobFailed as exc:
        job_fail(job=job, error=exc.error, message=exc.message, result=exc.result)
        return "failed"
    except UnknownJobKind as exc:
        job_fail(job=job, error=str(exc), message="failed: unknown job kind")
        return "failed"
    except Exception as exc:
        logger.exception("job %s (%s) failed", job.pk, job.kind)
        job_fail(
            job=job,
            error="".join(traceback.format_exception(exc)),
            message=fit_message(f"failed: {type(exc).__name__}: {exc}"),
        )
        return "failed"
    finally:
        heartbeat.stop()
    if job_succeed(job=job, result=result or {}, message=(result or {}).get("message", "done")):
        return "succeeded"
    return "lost"
