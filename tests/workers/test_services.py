from datetime import timedelta

import pytest
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone

from workers.models import Job
from workers.registry import job_handler
from workers.services import (
    JobContext,
    JobFailed,
    JobLeaseLost,
    JobRequest,
    fit_message,
    job_cancel,
    job_claim,
    job_enqueue,
    job_enqueue_many,
    job_execute,
    job_heartbeat,
    job_reap,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """Messages the services send, captured instead of going to the broker."""
    messages = []
    monkeypatch.setattr(
        "workers.services.current_app.send_task",
        lambda name, args, queue: messages.append((name, args, queue)),
    )
    return messages


def test_it_sends_the_message_only_after_commit(django_capture_on_commit_callbacks, sent):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = job_enqueue(kind="echo", params={"x": 1})
    assert sent == []
    for callback in callbacks:
        callback()
    assert sent == [("workers.run_job", [job.pk], "default")]
    assert job.status == Job.Status.QUEUED


def test_a_batch_is_one_insert_and_each_job_is_sent_after_commit(
    django_capture_on_commit_callbacks, django_assert_num_queries, sent
):
    targets = [Job.objects.create(kind="echo") for _ in range(3)]
    ContentType.objects.get_for_model(Job)  # cached from here on, as in a running worker
    with (
        django_capture_on_commit_callbacks(execute=False) as callbacks,
        django_assert_num_queries(1),
    ):
        jobs = job_enqueue_many(
            kind="echo",
            requests=[JobRequest(target=t, params={"n": t.pk}, message="x" * 600) for t in targets],
        )
    assert sent == []
    for callback in callbacks:
        callback()
    assert sent == [("workers.run_job", [job.pk], "default") for job in jobs]
    rows = list(Job.objects.filter(pk__in=[j.pk for j in jobs]).order_by("pk"))
    assert [(r.target_id, r.params, r.status) for r in rows] == [
        (str(t.pk), {"n": t.pk}, Job.Status.QUEUED) for t in targets
    ]
    assert all(len(r.message) == 500 and r.target_type.model == "job" for r in rows)
    single = job_enqueue(kind="echo", target=targets[0])
    assert (single.target_id, single.message, single.max_attempts) == (
        str(targets[0].pk),
        "queued",
        rows[0].max_attempts,
    )


def test_it_refuses_an_unknown_kind():
    with pytest.raises(LookupError, match="no handler is registered for job kind 'nope'"):
        job_enqueue(kind="nope")


def test_claiming_is_granted_once():
    job = Job.objects.create(kind="echo")
    assert job_claim(job_id=job.pk, worker="w1") is not None
    assert job_claim(job_id=job.pk, worker="w2") is None
    job.refresh_from_db()
    assert (job.status, job.worker, job.attempts) == ("running", "w1", 1)
    assert job.lease_expires_at > timezone.now()


def test_a_heartbeat_from_a_worker_that_lost_the_job_is_refused():
    job = Job.objects.create(kind="echo")
    mine = job_claim(job_id=job.pk, worker="w1")
    assert job_heartbeat(job=mine)
    Job.objects.filter(pk=job.pk).update(worker="w2")
    assert not job_heartbeat(job=mine)


def test_progress_after_losing_the_lease_stops_the_handler():
    job = Job.objects.create(kind="echo")
    ctx = JobContext(job=job_claim(job_id=job.pk, worker="w1"))
    ctx.progress(10, "starting")
    job_cancel(job=job)
    with pytest.raises(JobLeaseLost):
        ctx.progress(20)


def test_execute_runs_the_handler_and_records_the_result():
    job = Job.objects.create(kind="echo", params={"hello": "world"})
    assert job_execute(job_id=job.pk) == "succeeded"
    job.refresh_from_db()
    assert job.status == "succeeded"
    assert job.progress == 100
    assert job.result["echo"] == {"hello": "world"}
    assert "echo" in job.log_tail
    assert job_execute(job_id=job.pk) == "not-claimed"


@job_handler("test-explode")
def _explode(job, ctx):
    raise ValueError("boom at step 3")


def test_a_failing_handler_fails_the_job_with_its_reason():
    job = Job.objects.create(kind="test-explode")
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.status == "failed"
    assert "ValueError: boom at step 3" in job.error
    assert job.message == "failed: ValueError: boom at step 3"


@job_handler("test-honest-failure")
def _honest(job, ctx):
    raise JobFailed("0 tasks: nothing could be verified", result={"tasks": 0})


def test_a_handler_that_says_it_did_not_work_ends_failed_with_its_message_and_result():
    job = Job.objects.create(kind="test-honest-failure")
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.message == "0 tasks: nothing could be verified"
    assert job.result == {"tasks": 0}
    assert "Traceback" not in job.error


LONG_REASON = "5 of 6 test files fail to collect; " + "add what the tests need, " * 30 + "the end"


@job_handler("test-long-failure")
def _long_failure(job, ctx):
    raise JobFailed(LONG_REASON, result={"message": LONG_REASON})


def test_a_reason_longer_than_the_message_field_ends_at_a_word_and_is_kept_whole_in_the_result():
    job = Job.objects.create(kind="test-long-failure")
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert len(job.message) <= Job._meta.get_field("message").max_length
    assert job.message.endswith("…")
    # What is left is whole words of the reason: no word is cut into another word.
    assert LONG_REASON.startswith(job.message.removesuffix("…"))
    assert LONG_REASON[len(job.message) - 1] in " ,"
    assert job.result["message"] == LONG_REASON


def test_a_short_message_is_kept_as_it_is():
    assert fit_message("2 of 2 asked verified") == "2 of 2 asked verified"
    assert fit_message("x" * 600).endswith("…") and len(fit_message("x" * 600)) == 500


def test_a_job_of_an_unregistered_kind_fails_clearly():
    job = Job.objects.create(kind="gone-away")
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert "no handler is registered for job kind 'gone-away'" in job.error


def test_the_reaper_requeues_an_expired_lease_and_resends_its_message(sent):
    job = Job.objects.create(kind="echo", max_attempts=3)
    job_claim(job_id=job.pk, worker="dead-worker")
    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert job_reap() == {"requeued": 1, "failed": 0, "redispatched": 0}
    job.refresh_from_db()
    assert job.status == "queued"
    assert "dead-worker" in job.message
    assert sent == [("workers.run_job", [job.pk], "default")]


def test_the_reaper_fails_a_job_that_ran_out_of_attempts(sent):
    job = Job.objects.create(kind="echo", max_attempts=1)
    job_claim(job_id=job.pk, worker="dead-worker")
    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    assert job_reap()["failed"] == 1
    job.refresh_from_db()
    assert job.status == "failed"
    assert "lease expired on attempt 1 of 1" in job.error
    assert sent == []


def test_the_reaper_resends_the_message_of_a_job_nobody_picked_up(sent, settings):
    long_ago = timezone.now() - timedelta(seconds=settings.JOB_REQUEUE_STALE_SECONDS + 5)
    job = Job.objects.create(kind="echo", enqueued_at=long_ago)
    fresh = Job.objects.create(kind="echo", enqueued_at=timezone.now())
    assert job_reap()["redispatched"] == 1
    assert sent == [("workers.run_job", [job.pk], "default")]
    assert fresh.pk not in [args[0] for _, args, _ in sent]


def test_a_cancelled_job_is_not_run():
    job = Job.objects.create(kind="echo")
    assert job_cancel(job=job)
    assert job_execute(job_id=job.pk) == "not-claimed"
