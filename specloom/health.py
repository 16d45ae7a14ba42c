"""/healthz: is the database answering, is the broker reachable, can we write to storage."""

from __future__ import annotations

import time
import uuid

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


def _check_database() -> dict:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return {"vendor": connection.vendor}


def _check_broker() -> dict:
    from specloom.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=2)
        transport = conn.transport_cls
    return {"transport": str(transport)}


def _check_storage() -> dict:
    root = settings.STORAGE_ROOT
    root.mkdir(parents=True, exist_ok=True)
    probe = root / f".healthz-{uuid.uuid4().hex}"
    probe.write_text("ok")
    probe.unlink()
    # Unauthenticated: says that storage is writable, never where it is on the server.
    return {"writable": True}


@never_cache
@require_GET
def healthz(request):
    checks = {}
    healthy = True
    for name, check in (
        ("database", _check_database),
        ("broker", _check_broker),
        ("storage", _check_storage),
    ):
        started = time.perf_counter()
        try:
            detail = check()
            checks[name] = {"ok": True, **detail}
        except Exception as exc:  # any failure is reported, not raised: this page must answer
            healthy = False
            checks[name] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        checks[name]["ms"] = round((time.perf_counter() - started) * 1000, 1)
    return JsonResponse(
        {"status": "ok" if healthy else "degraded", "checks": checks},
        status=200 if healthy else 503,
    )
