"""Screenshots of every pipeline page, in the states a curator meets (importing, failed with a
reason, bad input, an import report with refused lines), at 1400x900 and 1024x768, into
screenshots/ (not committed) for a person to look at. They also prove the pages run without a
script error under the Content-Security-Policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from curation.models import Repository
from tests.browser.test_curator_pipeline import SHOTS
from tests.factories import RepositoryFactory, TaskFactory
from workers.models import Job
from workers.services import job_enqueue

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
SIZES = [(1400, 900), (1024, 768)]


@pytest.fixture
def pipeline_states(dataset, bob):
    """A repository importing, one imported with tasks, one whose import failed, and jobs."""
    importing = RepositoryFactory(
        name="httpx-importing", status="importing", git_path="", default_commit="",
        source_kind="git", source="https://github.com/encode/httpx.git",
    )  # fmt: skip
    job = job_enqueue(kind="import_repository", target=importing, params={}, user=bob)
    Job.objects.filter(pk=job.pk).update(status="running", progress=35, message="cloning")
    Repository.objects.filter(pk=importing.pk).update(import_job=job)
    ready = RepositoryFactory(
        name="attrs", status="tests_collected", tests_collected=1287, test_files=38,
        source_kind="archive", source="attrs-25.1.0.tar.gz",
        layout={"packages": ["src/attrs"], "test_dirs": ["tests"], "test_framework": "pytest",
                "src_layout": True},
    )  # fmt: skip
    for status in ("needs_review", "needs_review", "approved", "draft"):
        TaskFactory(repository=ready, dataset=dataset, status=status, validation={"verified": True})
    failed = RepositoryFactory(
        name="no-such-project", status="failed", git_path="", default_commit="",
        source_kind="git", source="https://example.com/nobody/no-such-project.git",
        status_reason="could not clone 'https://example.com/nobody/no-such-project.git': "
        "fatal: repository 'https://example.com/nobody/no-such-project.git/' not found",
    )  # fmt: skip
    failed_job = job_enqueue(kind="import_repository", target=failed, params={}, user=bob)
    Job.objects.filter(pk=failed_job.pk).update(
        status="failed", progress=10, message="failed: " + failed.status_reason
    )
    Repository.objects.filter(pk=failed.pk).update(import_job=failed_job)
    RepositoryFactory(
        name="tiny-lib", status="imported", test_files=0,
        status_reason="no test files found (test_*.py, *_test.py or a tests/ folder): "
        "synthesis needs a test suite to verify tasks",
    )  # fmt: skip
    synth = job_enqueue(
        kind="synthesize",
        target=ready,
        params={"repository_id": ready.pk, "dataset_id": dataset.pk, "count": 3, "seed": 0,
                "engine": "procedural"},
        user=bob,
    )  # fmt: skip
    Job.objects.filter(pk=synth.pk).update(
        status="failed", progress=100,
        message="failed: 2 of 3 asked, none verified: pytest addopts needs pytest-cov; "
        "add it to the recipe's packages",
    )  # fmt: skip
    return {"importing": importing, "ready": ready, "failed": failed, "synth": synth}


def test_it_shows_every_pipeline_page(new_page, bob, alice, pipeline_states, dataset, tmp_path):
    for width, height in SIZES:
        size = f"{width}x{height}"
        page = new_page(bob, viewport=(width, height))
        page.goto("/repositories/")
        page.wait_for_selector("#repositories-table")
        page.screenshot(path=str(SHOTS / f"repositories-states-{size}.png"))
        page.fill("#import-git input[name=url]", "file:///etc/shadow")
        page.click("#import-git button[type=submit]")
        page.wait_for_selector(".form-error")
        page.screenshot(path=str(SHOTS / f"repositories-bad-url-{size}.png"))
        page.goto(f"/repositories/{pipeline_states['importing'].pk}/")
        page.screenshot(path=str(SHOTS / f"repository-importing-{size}.png"))
        page.goto(f"/repositories/{pipeline_states['failed'].pk}/")
        page.screenshot(path=str(SHOTS / f"repository-failed-{size}.png"))
        page.goto(f"/repositories/{pipeline_states['ready'].pk}/")
        page.click("#environment-recipe button:text('Edit')")
        page.fill("#environment-recipe textarea[name=packages]", "-e .")
        page.click("#environment-recipe button:text('Save and try')")
        page.wait_for_selector("#environment-recipe .form-error")
        page.screenshot(path=str(SHOTS / f"repository-recipe-error-{size}.png"))
        page.goto(f"/jobs/{pipeline_states['synth'].pk}/")
        page.screenshot(path=str(SHOTS / f"job-failed-{size}.png"))
        page.goto("/jobs/")
        page.screenshot(path=str(SHOTS / f"jobs-states-{size}.png"))
        page.goto("/synthesize/?repository=attrs")
        page.screenshot(path=str(SHOTS / f"synthesize-runs-{size}.png"))
        page.goto("/trajectories/")
        page.set_input_files(
            "input[type=file]",
            str(FORMATS / "variants" / "predictions" / "mixed-good-and-bad.jsonl"),
        )
        page.click("button:text('Import')")
        page.wait_for_selector("[data-testid=import-report]")
        page.screenshot(path=str(SHOTS / f"trajectories-report-{size}.png"), full_page=True)
        page.goto(f"/datasets/{dataset.pk}/")
        page.fill("input[name=username]", "nobody")
        page.click("button:text('Add member')")
        page.wait_for_selector(".form-error")
        page.screenshot(path=str(SHOTS / f"dataset-member-error-{size}.png"))
        assert page.errors == []
    reviewer = new_page(alice, viewport=SIZES[0])
    response = reviewer.goto("/repositories/")
    assert response.status == 403
    reviewer.screenshot(path=str(SHOTS / "repositories-as-reviewer-1400x900.png"))
