"""A curator cuts a release in the browser, reads its datasheet, downloads a file and pulls the
same file over the API with a token made on the tokens page."""

import hashlib
import json

import pytest

from curation.models import Release
from tests.browser.conftest import screenshot
from tests.curation.release_helpers import review, reviewed_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"


def test_a_curator_cuts_a_release_and_a_pipeline_pulls_it(
    new_page, job_runner, alice, bob, dataset
):
    tasks = [reviewed_task(dataset=dataset) for _ in range(3)]
    for task in tasks:
        review(task, alice, "approve")
    reviewed_task(dataset=dataset, status="rejected")
    page = new_page(bob)

    page.goto("/releases/")
    page.select_option("select[name=dataset]", "core")
    page.fill("input[name=version]", "v1")
    page.click("button:text('Cut release')")
    # The detail page polls while the job builds the files, then reloads with the datasheet.
    page.wait_for_selector("h2:text('Datasheet')")
    page.wait_for_selector("text=specloom", timeout=60_000)
    page.wait_for_function("!document.body.innerText.includes('building')", timeout=60_000)
    screenshot(page, "release-detail")
    release = Release.objects.get(dataset=dataset, version="v1")
    assert release.status == Release.Status.READY
    assert release.entries.count() == 3  # the rejected task stays out

    with page.expect_download() as download_info:
        page.click("a:text-matches('swebench', 'i')")
    downloaded = download_info.value.path().read_bytes()
    assert hashlib.sha256(downloaded).hexdigest() == release.files["swebench"]["sha256"]
    rows = [json.loads(line) for line in downloaded.decode().splitlines()]
    assert sorted(row["instance_id"] for row in rows) == sorted(t.instance_id for t in tasks)

    page.goto("/tokens/")
    page.fill("input[name=name]", "training-pipeline")
    page.click("button:text('Create token')")
    key = page.inner_text("[data-testid=new-key]").strip()
    screenshot(page, "tokens")
    pipeline = page.context.browser.new_context(base_url=page.url.split("/tokens")[0])
    response = pipeline.request.get(
        f"/api/v1/releases/{release.pk}/export?format=swebench",
        headers={"Authorization": f"Bearer {key}"},
    )
    assert response.status == 200
    assert response.body() == downloaded
    assert response.headers["x-checksum-sha256"] == release.files["swebench"]["sha256"]
    refused = pipeline.request.post(
        "/api/v1/releases",
        headers={"Authorization": f"Bearer {key}"},
        data={"dataset": "core", "version": "v2"},
    )
    assert refused.status == 403  # a read token cannot cut a release
    pipeline.close()
    assert page.errors == []
