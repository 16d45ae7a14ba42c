"""Dataset webhooks, delivered to a real HTTP server on loopback."""

import hashlib
import hmac
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from curation.services.webhooks import (
    SIGNATURE_HEADER,
    verify,
    webhook_release_cut,
    webhook_task_approved,
)
from tests.curation.release_helpers import cut, reviewed_task
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db

SECRET = "s3cret-for-tests"


class Receiver:
    """A loopback server that answers with the given statuses in turn, then 200."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.requests: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(
                    {"path": self.path, "headers": dict(self.headers), "body": body}
                )
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(autouse=True)
def fast_retries(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"
    settings.SPECLOOM_WEBHOOK_BACKOFF_SECONDS = 0.01
    settings.SPECLOOM_WEBHOOK_BACKOFF_MAX_SECONDS = 0.05
    settings.SPECLOOM_WEBHOOK_MAX_ATTEMPTS = 3
    settings.SPECLOOM_WEBHOOK_TIMEOUT_SECONDS = 5


def _configure(dataset, url: str) -> None:
    dataset.webhook_url = url
    dataset.webhook_secret = SECRET
    dataset.save()


def _webhook_jobs():
    return Job.objects.filter(kind="deliver_webhook").order_by("id")


def test_it_posts_a_signed_release_cut_event(dataset):
    reviewed_task(dataset=dataset)
    with Receiver() as receiver:
        _configure(dataset, receiver.url)
        release = cut(dataset)
        (job,) = _webhook_jobs()
        assert job_execute(job_id=job.pk) == "succeeded"

    (request,) = receiver.requests
    body = request["body"]
    expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert request["headers"][SIGNATURE_HEADER] == expected
    assert verify(SECRET, body, request["headers"][SIGNATURE_HEADER])
    assert request["headers"]["X-Specloom-Event"] == "release.cut"
    payload = json.loads(body)
    assert payload["event"] == "release.cut"
    assert payload["delivery"] == request["headers"]["X-Specloom-Delivery"]
    assert payload["dataset"] == {"id": dataset.pk, "name": "core"}
    assert payload["data"]["release"]["version"] == release.version
    assert (
        payload["data"]["release"]["files"]["parquet"]["sha256"]
        == (release.files["parquet"]["sha256"])
    )


def test_it_posts_task_approved_for_the_review_workspace(dataset):
    task = reviewed_task(dataset=dataset)
    with Receiver() as receiver:
        _configure(dataset, receiver.url)
        job = webhook_task_approved(task)
        assert job_execute(job_id=job.pk) == "succeeded"
    payload = json.loads(receiver.requests[0]["body"])
    assert payload["event"] == "task.approved"
    assert payload["data"]["task"]["instance_id"] == task.instance_id


def test_it_retries_server_errors_with_the_same_delivery_and_records_attempts(dataset):
    task = reviewed_task(dataset=dataset)
    with Receiver(statuses=[503, 500]) as receiver:
        _configure(dataset, receiver.url)
        job = webhook_task_approved(task)
        assert job_execute(job_id=job.pk) == "succeeded"
    job.refresh_from_db()
    assert [a["status"] for a in job.result["attempts"]] == [503, 500, 200]
    assert "delivered on attempt 3" in job.message
    bodies = {r["body"] for r in receiver.requests}
    deliveries = {r["headers"]["X-Specloom-Delivery"] for r in receiver.requests}
    assert len(receiver.requests) == 3 and len(bodies) == 1 and len(deliveries) == 1


def test_it_gives_up_after_the_last_attempt(dataset):
    task = reviewed_task(dataset=dataset)
    with Receiver(statuses=[500, 502, 503, 504]) as receiver:
        _configure(dataset, receiver.url)
        job = webhook_task_approved(task)
        assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert len(receiver.requests) == 3
    assert "after 3 attempt(s)" in job.error
    assert "attempt 3/3: 503 HTTP 503" in job.log_tail


def test_it_does_not_retry_a_refusal(dataset):
    task = reviewed_task(dataset=dataset)
    with Receiver(statuses=[410]) as receiver:
        _configure(dataset, receiver.url)
        job = webhook_task_approved(task)
        assert job_execute(job_id=job.pk) == "failed"
    assert len(receiver.requests) == 1


def test_it_retries_when_nobody_listens(dataset):
    task = reviewed_task(dataset=dataset)
    receiver = Receiver()
    url = receiver.url
    receiver.server.server_close()  # the port is free again: connections are refused
    _configure(dataset, url)
    job = webhook_task_approved(task)
    assert job_execute(job_id=job.pk) == "failed"
    job.refresh_from_db()
    assert job.error.count("Connection refused") == 3


def test_it_sends_nothing_without_a_webhook(dataset):
    task = reviewed_task(dataset=dataset)
    assert webhook_task_approved(task) is None
    release = cut(dataset)
    assert webhook_release_cut(release) is None
    assert not _webhook_jobs().exists()
