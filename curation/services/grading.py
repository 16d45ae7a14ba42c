"""Grading patches: "does this patch solve task T, and which specs does it satisfy?"

`grades_submit` takes (task, patch) pairs from the API or the command line. A grade is stored
once per (task revision, patch SHA-256): a pair asked before returns that grade (finished or
still pending); one that failed for want of a sandbox is queued again. New grades of one task
go to the sandbox queue together, up to SPECLOOM_GRADE_GROUP_SIZE per job (`grade_patches`):
the job loads the task once, and runs its patches SPECLOOM_GRADE_THREADS at a time with the
evaluation engine (workers.evaluation) in the jail, on the task's cached environment. Results
are written as each patch finishes, with a row per spec (GradeSpecResult).

Limits are per token (per user for a browser session): patches accepted per minute (a counter
in the cache) and grades queued or running at once (counted in the database, with the token's
row locked, so two requests of one token cannot both slip under it).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections import defaultdict
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from curation import runtime
from curation.models import ApiToken, Grade, GradeSpecResult, GradeSubmission, Task
from curation.selectors.evaluations import task_has_evaluated_tests
from curation.services.evaluation import evaluation_plan
from workers.evaluation import EvaluationInput, EvaluationOutcome, evaluate_patch
from workers.models import Job
from workers.sandbox import EnvironmentBuildError, SandboxError
from workers.services import JobLeaseLost, job_enqueue

GRADE_KIND = "grade_patches"
UNNAMED_MODEL = "unnamed"
MODEL_NAME_MAX = 200


class GradeInputError(ValueError):
    """A pair that cannot be graded as sent (the message says why); the API's 400."""


class GradeConflict(Exception):
    """The task is not at the revision the client read, or has nothing to grade; the API's 409."""

    def __init__(self, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


class GradeLimited(Exception):
    """A limit of the token was reached; the API's 429 with Retry-After."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class GradeRequest:
    task: Task
    patch: str
    model: str = ""
    # The task revision the client read; None grades the current one.
    revision: int | None = None


@dataclass(frozen=True)
class Submitted:
    grade: Grade
    # False: the pair was graded (or queued) before, and this is that grade.
    created: bool


def patch_digest(patch: str) -> str:
    return hashlib.sha256(patch.encode("utf-8")).hexdigest()


def _check(requests: list[GradeRequest]) -> None:
    if not requests:
        raise GradeInputError("send at least one (task, patch) pair")
    if len(requests) > settings.SPECLOOM_GRADE_BATCH_MAX:
        raise GradeInputError(
            f"at most {settings.SPECLOOM_GRADE_BATCH_MAX} pairs per request, got {len(requests)}"
        )
    for index, request in enumerate(requests):
        size = len(request.patch.encode("utf-8", errors="replace"))
        if size > settings.SPECLOOM_GRADE_MAX_PATCH_BYTES:
            raise GradeInputError(
                f"pair {index}: the patch is {size} bytes; the limit is "
                f"{settings.SPECLOOM_GRADE_MAX_PATCH_BYTES}"
            )
        if "\0" in request.patch or "\0" in request.model:
            raise GradeInputError(f"pair {index}: a patch or model name holds a NUL character")
        try:
            request.patch.encode("utf-8")
            request.model.encode("utf-8")
        except UnicodeEncodeError:
            raise GradeInputError(
                f"pair {index}: a patch or model name is not valid Unicode text (a lone surrogate)"
            ) from None
        if len(request.model) > MODEL_NAME_MAX:
            raise GradeInputError(f"pair {index}: a model name has at most {MODEL_NAME_MAX} chars")
    tasks = {request.task.pk: request.task for request in requests}
    for request in requests:
        if request.revision is not None and request.revision != request.task.revision:
            raise GradeConflict(
                f"{request.task.instance_id} is at revision {request.task.revision}, not "
                f"{request.revision}: read it again",
                {"task": request.task.pk, "revision": request.task.revision},
            )
    for task in tasks.values():
        if not task_has_evaluated_tests(task):
            raise GradeConflict(
                f"{task.instance_id} has no FAIL_TO_PASS or PASS_TO_PASS test to grade against",
                {"task": task.pk},
            )


def _principal(user, token: ApiToken | None) -> str:
    if token is not None:
        return f"token:{token.pk}"
    return f"user:{getattr(user, 'pk', None)}"


def _count_rate(principal: str, count: int) -> None:
    """Patches per minute over a sliding minute: the current one-minute window's count plus the
    previous window's, weighted by how much of it the last 60 seconds still cover. Fixed windows
    alone would let twice the limit through across a boundary, and whether a burst is refused
    would depend on when in the minute it came."""
    now = time.time()
    window, into = divmod(now, 60)
    key = f"grade-rate:{principal}:{int(window)}"
    cache.add(key, 0, 180)
    try:
        used = cache.incr(key, count)
    except ValueError:  # the entry expired between add and incr
        cache.set(key, count, 180)
        used = count
    previous = cache.get(f"grade-rate:{principal}:{int(window) - 1}", 0)
    covered = 1 - into / 60
    limit = settings.SPECLOOM_GRADE_RATE_PER_MINUTE
    if used + previous * covered > limit:
        cache.decr(key, count)
        already = used - count
        if already + count <= limit:
            # The previous window's share has to fall to what this one leaves free.
            wait = (covered - (limit - already - count) / previous) * 60
        else:
            # This window alone is too full: in the next one, its own count has to fall.
            wait = 60 - into + max(0.0, 1 - (limit - count) / already) * 60
        raise GradeLimited(
            f"at most {limit} patches a minute per token; "
            f"{already + round(previous * covered)} sent in the last minute",
            retry_after=max(1, math.ceil(wait)),
        )


def _pending(user, token: ApiToken | None) -> int:
    owner = Q(submissions__token=token) if token is not None else Q(submissions__user=user)
    return Grade.objects.filter(owner, status__in=Grade.PENDING).distinct().count()


def _lock_principal(user, token: ApiToken | None) -> None:
    # One request of a token at a time gets past the concurrency check.
    if token is not None:
        ApiToken.objects.select_for_update().filter(pk=token.pk).first()
    elif getattr(user, "pk", None) is not None:
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()


def grades_submit(
    *, requests: list[GradeRequest], user=None, token: ApiToken | None = None, limits: bool = True
) -> list[Submitted]:
    """Grade each (task, patch) pair, or find its grade; queue the new ones. `limits=False`
    (the command line) skips the per-token limits."""
    _check(requests)
    if limits:
        _count_rate(_principal(user, token), len(requests))
    with transaction.atomic():
        already = 0
        if limits:
            _lock_principal(user, token)
            already = _pending(user, token)
        submitted = [_grade_for(request) for request in requests]
        fresh = list(
            {
                s.grade.pk: s.grade
                for s in submitted
                if s.grade.status == Grade.Status.QUEUED and s.grade.job_id is None
            }.values()
        )
        limit = settings.SPECLOOM_GRADE_MAX_PENDING
        if limits and fresh and already + len(fresh) > limit:
            transaction.set_rollback(True)
            raise GradeLimited(
                f"at most {limit} grades queued or running per token; {already} are, "
                f"and this request adds {len(fresh)}",
                retry_after=5,
            )
        for item, request in zip(submitted, requests, strict=True):
            GradeSubmission.objects.get_or_create(
                grade=item.grade,
                model_name=request.model.strip() or UNNAMED_MODEL,
                defaults={
                    "user": user if getattr(user, "is_authenticated", False) else None,
                    "token": token,
                },
            )
        _enqueue_groups(fresh, user=user)
        # The same pair twice in a batch is one grade, and every copy names its job.
        jobs = {g.pk: g.job_id for g in fresh}
        for item in submitted:
            item.grade.job_id = jobs.get(item.grade.pk, item.grade.job_id)
    return submitted


def _grade_for(request: GradeRequest) -> Submitted:
    task = request.task
    digest = patch_digest(request.patch)
    grade, created = Grade.objects.get_or_create(
        task=task,
        task_revision=task.revision,
        patch_sha256=digest,
        defaults={"patch": request.patch},
    )
    if not created and grade.status == Grade.Status.FAILED:
        # It failed for want of a sandbox, not for the patch: asking again tries again.
        Grade.objects.filter(pk=grade.pk).update(
            status=Grade.Status.QUEUED, error="", job=None, started_at=None, finished_at=None
        )
        grade.refresh_from_db()
    return Submitted(grade=grade, created=created)


def _enqueue_groups(grades: list[Grade], *, user) -> list[Job]:
    by_task: dict[int, list[Grade]] = defaultdict(list)
    for grade in grades:
        by_task[grade.task_id].append(grade)
    size = settings.SPECLOOM_GRADE_GROUP_SIZE
    jobs = []
    for group in by_task.values():
        for start in range(0, len(group), size):
            chunk = group[start : start + size]
            task = chunk[0].task
            job = job_enqueue(
                kind=GRADE_KIND,
                target=task,
                params={"grade_ids": [g.pk for g in chunk]},
                user=user,
                message=f"grade {len(chunk)} patch(es) on {task.instance_id}",
            )
            Grade.objects.filter(pk__in=[g.pk for g in chunk]).update(job=job)
            for grade in chunk:
                grade.job = job
            jobs.append(job)
    return jobs


# ---------------------------------------------------------------------------------------------
# The job


def grade_group_run(*, job: Job, ctx) -> dict[str, Any]:
    """The `grade_patches` job: run its pending grades, in parallel, and record each."""
    grades = list(
        Grade.objects.select_related("task__repository")
        .filter(pk__in=job.params.get("grade_ids", []), status__in=Grade.PENDING)
        .order_by("id")
    )
    if not grades:
        return {"message": "nothing to grade: every grade of this job is finished"}
    now = timezone.now()
    Grade.objects.filter(pk__in=[g.pk for g in grades]).update(
        status=Grade.Status.RUNNING, started_at=now
    )
    task = Task.objects.select_related("repository").get(pk=grades[0].task_id)
    stale = [g for g in grades if g.task_revision != task.revision]
    for grade in stale:
        _fail(grade, f"the task moved to revision {task.revision} before this grade ran")
    grades = [g for g in grades if g.task_revision == task.revision]
    if not grades:
        return {"message": "the task changed before its grades ran", "failed": len(stale)}
    snapshot = runtime.snapshot_for(task.repository, task.base_commit)
    environment = runtime.environment_for(task.repository)
    try:
        # Built (or found) once, here, for every patch of the group; the runs then only read it.
        runtime.sandbox_backend().ensure_environment(snapshot, environment)
    except (EnvironmentBuildError, SandboxError) as exc:
        for grade in grades:
            _fail(grade, f"the task's environment cannot be built: {exc}"[:4000])
        return {"message": f"the environment cannot be built: {exc}", "failed": len(grades)}
    base = EvaluationInput(
        snapshot=snapshot,
        environment=environment,
        patch="",
        test_patch=task.test_patch,
        limits=runtime.sandbox_limits(),
        rerun_failures=settings.SPECLOOM_GRADE_RERUNS,
        # The environment is built: the sandbox's own `git apply` finds a patch that does not
        # apply as fast as a check in a scratch index would.
        check_first=False,
        **evaluation_plan(task=task),
    )
    counts: dict[str, int] = defaultdict(int)
    threads = max(1, min(settings.SPECLOOM_GRADE_THREADS, len(grades)))
    if threads == 1:
        # One patch (a single grade's usual case) runs here: a pool's thread would only add
        # its start to the grade's latency.
        for done, grade in enumerate(grades, start=1):
            _grade_one(grade, lambda grade=grade: _evaluate(base, grade), counts)
            ctx.progress(int(100 * done / len(grades)), f"graded {done}/{len(grades)}")
    else:
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix=f"grade-{job.pk}") as pool:
            futures = {pool.submit(_evaluate, base, g): g for g in grades}
            for done, future in enumerate(as_completed(futures), start=1):
                _grade_one(futures[future], future.result, counts)
                try:
                    ctx.progress(int(100 * done / len(grades)), f"graded {done}/{len(grades)}")
                except JobLeaseLost:
                    pool.shutdown(wait=False, cancel_futures=True)
                    raise
    summary = ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))
    return {"message": f"graded {len(grades)} patch(es): {summary}", "counts": dict(counts)}


def _evaluate(base: EvaluationInput, grade: Grade) -> EvaluationOutcome:
    return evaluate_patch(replace(base, patch=grade.patch), runtime.run_in_sandbox)


def _grade_one(grade: Grade, outcome_of, counts: dict[str, int]) -> None:
    """Record the outcome `outcome_of()` returns for `grade`, or why the sandbox gave none."""
    try:
        outcome = outcome_of()
    except (EnvironmentBuildError, SandboxError) as exc:
        _fail(grade, f"the sandbox could not grade it: {exc}"[:4000])
        counts["failed"] += 1
        return
    grade_record(grade=grade, outcome=outcome)
    counts[outcome.resolved] += 1


def _fail(grade: Grade, error: str) -> None:
    Grade.objects.filter(pk=grade.pk).update(
        status=Grade.Status.FAILED, error=error, finished_at=timezone.now()
    )


@transaction.atomic
def grade_record(*, grade: Grade, outcome: EvaluationOutcome) -> Grade:
    """Write a grade's outcome and its spec rows (replacing any from an earlier attempt)."""
    Grade.objects.filter(pk=grade.pk).update(
        status=Grade.Status.DONE,
        resolved=outcome.resolved,
        patch_applied=outcome.patch_applied,
        patch_error=outcome.patch_error,
        test_outcomes=outcome.tests,
        flaky_tests=sorted(outcome.flaky),
        problems=outcome.problems,
        run_seconds=outcome.seconds,
        environment_key=outcome.environment_key,
        error="",
        finished_at=timezone.now(),
    )
    GradeSpecResult.objects.filter(grade=grade).delete()
    specs = {spec.key: spec for spec in grade.task.specs.all()}
    GradeSpecResult.objects.bulk_create(
        GradeSpecResult(grade=grade, spec=specs[key], satisfied=satisfied)
        for key, satisfied in outcome.spec_satisfied.items()
        if key in specs
    )
    grade.refresh_from_db()
    return grade


def grade_group_abandoned(job: Job) -> None:
    """The reaper gave up on the job's worker: its unfinished grades fail, and asking again
    queues them anew."""
    for grade in Grade.objects.filter(pk__in=job.params.get("grade_ids", [])).filter(
        status__in=Grade.PENDING
    ):
        _fail(grade, "the worker grading it was lost; ask again")


def grades_wait(
    *,
    grade_ids: Iterable[int],
    seconds: float,
    user=None,
    token: ApiToken | None = None,
    limited: bool = True,
) -> None:
    """Hold until every grade finished or `seconds` passed (the API's long-poll). A token
    already holding SPECLOOM_GRADE_MAX_WAITING long-polls gets its answer at once (`limited`;
    the command line is not)."""
    if seconds <= 0:
        return
    if not limited:
        _wait(list(grade_ids), seconds)
        return
    key = f"grade-waiting:{_principal(user, token)}"
    cache.add(key, 0, int(seconds) + 60)
    try:
        holding = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, int(seconds) + 60)
        holding = 1
    try:
        if holding <= settings.SPECLOOM_GRADE_MAX_WAITING:
            _wait(list(grade_ids), seconds)
    finally:
        with contextlib.suppress(ValueError):  # the counter expired meanwhile
            cache.decr(key)


def _wait(ids: list[int], seconds: float) -> None:
    deadline = time.monotonic() + max(0.0, seconds)
    delay = 0.05
    while time.monotonic() < deadline:
        if not Grade.objects.filter(pk__in=ids, status__in=Grade.PENDING).exists():
            return
        time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
        delay = min(delay * 2, 0.5)
