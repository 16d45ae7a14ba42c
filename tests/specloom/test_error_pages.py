"""Errors as a new user meets them: 404/403/500 pages in the app's style that leak nothing, the
demo without DEBUG, and the API's one JSON error body on every /api/ path (issue 15)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client, override_settings
from django.urls import path

from tests.curation.api.support import error_of

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def _boom(request):
    raise RuntimeError("kaboom")


# A URL configuration with a view that crashes, on top of the real one.
urlpatterns = [path("boom/", _boom), path("api/v1/boom", _boom)]
from specloom import urls as _real  # noqa: E402

urlpatterns += _real.urlpatterns
handler404 = _real.handler404
handler403 = getattr(_real, "handler403", None)
handler500 = _real.handler500


# --- pages ---------------------------------------------------------------------------------------


def test_a_missing_task_shows_the_apps_404_page(client, alice, settings):
    settings.DEBUG = False
    client.force_login(alice)
    response = client.get("/review/tasks/999999/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Not found" in html and "Specloom" in html and 'class="topbar"' in html
    # Not Django's debug page, which lists every URL pattern.
    assert "URLconf" not in html and "&lt;int:task_id&gt;" not in html


def test_an_unknown_page_is_the_apps_404_without_the_url_patterns(client, alice, settings):
    settings.DEBUG = False
    client.force_login(alice)
    html = client.get("/no/such/page").content.decode()
    assert "Not found" in html and "Using the URLconf" not in html


def test_a_reviewer_on_a_curator_page_gets_the_apps_403_page(client, alice, settings):
    settings.DEBUG = False
    client.force_login(alice)
    response = client.get("/review/adjudication/")
    assert response.status_code == 403
    html = response.content.decode()
    assert 'class="topbar"' in html and "curator" in html
    assert "<h1>403 Forbidden</h1>" not in html


@override_settings(ROOT_URLCONF=__name__, DEBUG=False)
def test_a_crash_shows_a_standalone_500_page_that_prints_no_settings(alice):
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    response = client.get("/boom/")
    assert response.status_code == 500
    html = response.content.decode()
    assert "Something went wrong" in html and "Specloom" in html
    for secret in ("DATABASE_URL", "REDIS_URL", "postgres://", "redis://", "kaboom", "Traceback"):
        assert secret not in html


@override_settings(ROOT_URLCONF=__name__, DEBUG=True)
def test_even_the_debug_page_hides_database_and_broker_urls(alice, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://specloom:hunter2@db:5432/specloom")
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    response = client.get("/boom/", HTTP_ACCEPT="text/html")
    html = response.content.decode()
    assert response.status_code == 500
    assert "hunter2" not in html
    from django.views.debug import get_default_exception_reporter_filter

    cleaned = get_default_exception_reporter_filter().get_safe_settings()
    assert cleaned["DATABASES"] != {} and "hunter2" not in str(cleaned)
    assert cleaned.get("REDIS_URL", "") in ("", "********************")


# --- the API -------------------------------------------------------------------------------------


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/api/v1/nowhere", 404),
        ("/api/nowhere/at/all", 404),
        ("/api/", 404),
        ("/api/v1/tasks/abc", 404),
        ("/api/v1/tasks/abc/", 404),
        ("/api/v1/releases/1.5/export", 404),
        ("/api/v1/trajectories/x", 404),
    ],
)
def test_every_api_path_answers_the_json_error_body(client, bob, settings, url, status, debug):
    settings.DEBUG = debug
    client.force_login(bob)
    response = client.get(url)
    assert response.status_code == status, url
    assert response["Content-Type"].startswith("application/json")
    assert error_of(response)["code"] == "not_found"


def test_a_wrong_method_under_the_api_is_405_in_the_error_body(client, bob):
    client.force_login(bob)
    response = client.delete("/api/v1/tasks")
    assert response.status_code == 405
    assert error_of(response)["code"] == "method_not_allowed"


@override_settings(ROOT_URLCONF=__name__, DEBUG=False)
def test_an_api_crash_is_500_in_the_error_body(bob):
    client = Client(raise_request_exception=False)
    client.force_login(bob)
    response = client.get("/api/v1/boom")
    assert response.status_code == 500
    assert error_of(response)["code"] == "server_error"
    assert "kaboom" not in response.content.decode()


def test_the_readmes_trailing_slash_example_works(client, bob, dataset):
    """`curl .../api/v1/tasks/?status=approved`, as the README has it."""
    client.force_login(bob)
    with_slash = client.get("/api/v1/tasks/?status=approved")
    without = client.get("/api/v1/tasks?status=approved")
    assert with_slash.status_code == 200 == without.status_code
    assert with_slash.json() == without.json()
    assert client.get("/api/v1/tasks/export/").status_code == 200


def test_anonymous_api_requests_get_401_or_403_in_the_error_body(client):
    response = client.get("/api/v1/tasks/")
    assert response.status_code in (401, 403)
    error_of(response)


# --- the demo ------------------------------------------------------------------------------------


def _settings_of(env: dict) -> str:
    code = "import django; django.setup(); from django.conf import settings; print(settings.DEBUG)"
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("SPECLOOM_", "PYTEST"))}
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "specloom.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.strip()


def test_debug_is_off_unless_asked_for(tmp_path):
    var = str(tmp_path / "var")
    assert _settings_of({"SPECLOOM_VAR_DIR": var}) == "False"
    assert _settings_of({"SPECLOOM_VAR_DIR": var, "SPECLOOM_DEBUG": "1"}) == "True"


def test_the_demo_collects_static_files_so_they_are_served_without_debug():
    source = (ROOT / "curation" / "management" / "commands" / "run_demo.py").read_text()
    assert "collectstatic" in source


def test_static_files_are_served_without_debug(settings, tmp_path):
    from django.core.management import call_command
    from whitenoise.middleware import WhiteNoiseMiddleware

    settings.DEBUG = False
    settings.STATIC_ROOT = tmp_path / "static"
    call_command("collectstatic", interactive=False, verbosity=0)
    middleware = WhiteNoiseMiddleware(lambda request: None)
    assert middleware.files.get("/static/css/app.css") is not None
    assert middleware.files.get("/static/vendor/htmx/htmx.min.js") is not None


def test_a_post_without_csrf_under_the_api_is_refused_in_the_error_body(bob):
    client = Client(enforce_csrf_checks=True)
    client.force_login(bob)
    for url in ("/api/v1/jobs/0.5/cancel", "/api/v1/nowhere"):
        response = client.post(url)
        assert response.status_code == 404, url  # nothing there, whatever the cookies
        assert error_of(response)["code"] == "not_found"
    response = client.post("/api/v1/releases", {"dataset": "core"})
    assert response.status_code == 403
    assert error_of(response)["code"] == "permission_denied"
