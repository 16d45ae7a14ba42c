"""Playwright in Debian's Chromium against pytest-django's live server.

The sync Playwright API runs an event loop in the test's thread; Django refuses ORM calls from
a thread with a running loop unless told it is fine, and here it is (tests, one thread).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
PASSWORD = "correct horse battery staple"
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield instance
        instance.close()


@pytest.fixture
def new_page(browser, live_server):
    """`new_page(user=None)`: a page in its own browser context, logged in as `user` if given."""
    contexts = []

    def make(user=None, viewport=(1600, 1000)):
        context = browser.new_context(
            viewport={"width": viewport[0], "height": viewport[1]}, base_url=live_server.url
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        if user is not None:
            from django.test import Client

            client = Client()
            client.force_login(user)
            context.add_cookies(
                [
                    {
                        "name": "sessionid",
                        "value": client.cookies["sessionid"].value,
                        "url": live_server.url,
                    }
                ]
            )
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        page.on(
            "dialog",
            lambda dialog: (page.errors.append(f"dialog: {dialog.message}"), dialog.dismiss()),
        )
        return page

    yield make
    for context in contexts:
        context.close()


@pytest.fixture
def job_runner(sandbox_root):
    """Runs queued jobs in-process, as a worker would, so the page's progress bars really move."""
    from django.db import connection

    from workers.models import Job
    from workers.services import job_execute

    stop = threading.Event()
    ran: list[int] = []

    def loop():
        try:
            while not stop.is_set():
                for pk in Job.objects.filter(status=Job.Status.QUEUED).values_list("pk", flat=True):
                    job_execute(job_id=pk)
                    ran.append(pk)
                stop.wait(0.3)
        finally:
            connection.close()

    thread = threading.Thread(target=loop, name="test-job-runner", daemon=True)
    thread.start()
    yield ran
    stop.set()
    thread.join(timeout=120)


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path
