"""Webhooks of a dataset: `release.cut` and `task.approved`, HMAC-signed, delivered by a job.

The payload is fixed when the event happens and stored in the job, so every retry sends the same
bytes under the same delivery id, and the receiver can drop duplicates. The signature is
HMAC-SHA256 over the raw body with the dataset's secret, in `X-Specloom-Signature-256` as
`sha256=<hex>` (GitHub's convention, so existing verifiers work).
"""

from __future__ import annotations

import hashlib
import hmac
import random
import time
import urllib.error
import urllib.request
import uuid
from typing import Any

import orjson
from django.conf import settings
from django.utils import timezone

from curation.models import Dataset, Release, Task
from workers.models import Job
from workers.services import job_enqueue

RELEASE_CUT = "release.cut"
TASK_APPROVED = "task.approved"
EVENTS = (RELEASE_CUT, TASK_APPROVED)
SIGNATURE_HEADER = "X-Specloom-Signature-256"
USER_AGENT = "Specloom-Webhook/1"


class WebhookDeliveryFailed(RuntimeError):
    pass


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # A redirect would re-send the signed body to an address nobody configured.
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, signature: str) -> bool:
    return hmac.compare_digest(sign(secret, body), signature or "")


def _enqueue(*, dataset: Dataset, event: str, data: dict[str, Any], target) -> Job | None:
    if not dataset.webhook_url:
        return None
    payload = {
        "event": event,
        "delivery": str(uuid.uuid4()),
        "created_at": timezone.now().isoformat(),
        "dataset": {"id": dataset.pk, "name": dataset.name},
        "data": data,
    }
    return job_enqueue(
        kind="deliver_webhook",
        target=target,
        params={"dataset_id": dataset.pk, "payload": payload},
        message=f"{event} to {dataset.name}'s webhook",
    )


def webhook_release_cut(release: Release) -> Job | None:
    """Queue the `release.cut` event of a ready release (nothing when no webhook is set)."""
    files = {
        fmt: {"sha256": meta["sha256"], "bytes": meta["bytes"], "filename": meta["filename"]}
        for fmt, meta in release.files.items()
    }
    return _enqueue(
        dataset=release.dataset,
        event=RELEASE_CUT,
        target=release,
        data={
            "release": {
                "id": release.pk,
                "version": release.version,
                "tasks": len(release.manifest),
                "manifest_sha256": release.manifest_sha256,
                "cut_at": release.cut_at.isoformat() if release.cut_at else None,
                "files": files,
            }
        },
    )


def webhook_task_approved(task: Task) -> Job | None:
    """Queue the `task.approved` event. The review workspace calls this when a task becomes
    approved; the job is sent only if the surrounding transaction commits."""
    dataset = Dataset.objects.get(pk=task.dataset_id)
    return _enqueue(
        dataset=dataset,
        event=TASK_APPROVED,
        target=task,
        data={
            "task": {
                "id": task.pk,
                "instance_id": task.instance_id,
                "revision": task.revision,
                "title": task.title,
                "status": task.status,
            }
        },
    )


def _backoff(attempt: int) -> float:
    """Exponential backoff with full jitter: a crowd of failed deliveries does not retry in step."""
    base = settings.SPECLOOM_WEBHOOK_BACKOFF_SECONDS
    ceiling = min(settings.SPECLOOM_WEBHOOK_BACKOFF_MAX_SECONDS, base * (2 ** (attempt - 1)))
    return random.uniform(ceiling / 2, ceiling)  # noqa: S311 - jitter, not a secret


def _post(url: str, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")  # noqa: S310
    opener = urllib.request.build_opener(_NoRedirects)
    try:
        with opener.open(request, timeout=settings.SPECLOOM_WEBHOOK_TIMEOUT_SECONDS) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def webhook_deliver(*, job: Job, ctx) -> dict[str, Any]:
    """POST the job's payload; retry failures (network, 5xx, 429) with backoff, a few times."""
    dataset = Dataset.objects.get(pk=job.params["dataset_id"])
    if not dataset.webhook_url:
        return {"message": "skipped: the dataset has no webhook any more", "attempts": []}
    if not dataset.webhook_url.startswith(("http://", "https://")):
        raise WebhookDeliveryFailed(f"webhook URL {dataset.webhook_url!r} is not http(s)")
    body = orjson.dumps(job.params["payload"], option=orjson.OPT_SORT_KEYS)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Specloom-Event": job.params["payload"]["event"],
        "X-Specloom-Delivery": job.params["payload"]["delivery"],
    }
    if dataset.webhook_secret:
        headers[SIGNATURE_HEADER] = sign(dataset.webhook_secret, body)
    attempts: list[dict[str, Any]] = []
    limit = settings.SPECLOOM_WEBHOOK_MAX_ATTEMPTS
    for attempt in range(1, limit + 1):
        started = time.monotonic()
        try:
            status = _post(dataset.webhook_url, body, headers)
            error = "" if 200 <= status < 300 else f"HTTP {status}"
        except (urllib.error.URLError, OSError, ValueError) as exc:
            status, error = None, f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
        took = round(time.monotonic() - started, 3)
        attempts.append({"attempt": attempt, "status": status, "error": error, "seconds": took})
        ctx.log(f"attempt {attempt}/{limit}: {status or '-'} {error}".rstrip())
        if not error:
            return {
                "message": f"delivered on attempt {attempt} (HTTP {status})",
                "attempts": attempts,
            }
        # A 4xx other than 408/429 means the receiver refuses this payload; retrying is futile.
        if status is not None and 400 <= status < 500 and status not in (408, 429):
            break
        if attempt < limit:
            ctx.progress(int(100 * attempt / limit), f"retrying after: {error}")
            time.sleep(_backoff(attempt))
    raise WebhookDeliveryFailed(
        f"{job.params['payload']['event']} not delivered to {dataset.webhook_url} after "
        f"{len(attempts)} attempt(s): " + "; ".join(a["error"] for a in attempts)
    )
