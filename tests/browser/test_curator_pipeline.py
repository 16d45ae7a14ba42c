"""A curator's whole pipeline in the browser, with no terminal: upload a repository archive,
watch its import, edit its environment recipe, synthesize tasks with live progress, and (once a
reviewer has approved one) cut a release and download it.

Jobs run in-process (the `job_runner` fixture) as a worker would, in the real sandbox.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
from pathlib import Path

import pytest

from curation.models import EnvironmentRecipe, Release, Repository, Task
from review import services as review
from workers.models import Job

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "screenshots"


def shot(page, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"flow-{name}.png"))


def _ledger_archive(tmp_path: Path) -> Path:
    """The sample ledger project as a download would bring it: one top folder, no .git."""
    source = ROOT / "examples" / "repos" / "ledger"
    archive = tmp_path / "ledger-1.0.tar.gz"

    def skip_junk(info: tarfile.TarInfo):
        return None if "__pycache__" in info.name or ".pytest_cache" in info.name else info

    with tarfile.open(archive, "w:gz") as tar:
        tar.add(source, arcname="ledger-1.0", filter=skip_junk)
    return archive


@pytest.fixture(autouse=True)
def _storage(settings, tmp_path):
    settings.STORAGE_ROOT = tmp_path / "storage"
    settings.SPECLOOM_REPO_ROOT = settings.STORAGE_ROOT / "repos"
    settings.SPECLOOM_RELEASE_ROOT = settings.STORAGE_ROOT / "releases"


def test_a_curator_goes_from_an_archive_to_a_downloaded_release(
    new_page, job_runner, bob, alice, dataset, tmp_path
):
    page = new_page(bob, viewport=(1400, 900))
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)

    # 1. Upload the archive; the import is a job and the page follows it.
    page.goto("/")
    page.click("nav.nav >> text=Pipeline")
    page.wait_for_selector("h1:text('Repositories')")
    page.click("[data-import-tab=archive]")
    page.set_input_files("#import-archive input[type=file]", str(_ledger_archive(tmp_path)))
    page.fill("#import-archive input[name=name]", "ledger-up")
    shot(page, "1-upload")
    page.click("#import-archive button[type=submit]")
    page.wait_for_selector("h1:text('ledger-up')")
    # Done: the fragment answers 286 and reloads the page with what the import found.
    page.wait_for_selector("text=7 test files", timeout=60_000)
    shot(page, "2-imported")
    repository = Repository.objects.get(name="ledger-up")
    assert repository.status == "imported"
    assert repository.source_kind == "archive"

    # 2. Edit the environment recipe in place; the curator's recipe is tried at once.
    page.click("#environment-recipe button:text('Edit')")
    page.fill("#environment-recipe input[name=install]", ".[test]")
    page.fill("#environment-recipe input[name=pytest_options]", "-p no:cacheprovider")
    shot(page, "3-recipe-edit")
    page.click("#environment-recipe button:text('Save and try')")
    page.wait_for_selector("#environment-recipe >> text=Saved as the curator")
    recipe = EnvironmentRecipe.objects.get(repository=repository)
    assert recipe.source == "curator" and recipe.recipe["pytest_options"] == [
        "-p",
        "no:cacheprovider",
    ]

    # 3. Synthesize, watching the job's progress live.
    page.click("a:text('Synthesize tasks')")
    page.wait_for_selector("h1:text('Synthesize tasks')")
    assert page.input_value("select[name=repository]") == "ledger-up"
    page.select_option("select[name=dataset]", "core")
    page.fill("input[name=count]", "2")
    page.fill("input[name=seed]", "1")
    page.click("button:text('Start synthesis')")
    page.wait_for_selector("h1:text('Synthesis job')")
    seen_running = False
    for _ in range(600):
        state = page.inner_text("[data-testid=job-state]")
        if state == "running":
            seen_running = True
            progress = page.get_attribute("#job-status [role=progressbar]", "aria-valuenow")
            if int(progress or 0) > 0:
                shot(page, "4-synthesis-running")
        if state in ("succeeded", "failed"):
            break
        page.wait_for_timeout(500)
    page.wait_for_selector("h2:text('Outcome')", timeout=30_000)
    shot(page, "5-synthesis-done")
    job = Job.objects.get(kind="synthesize")
    assert seen_running, "the page never showed the job running"
    assert job.status == "succeeded", job.error
    assert page.inner_text("[data-testid=job-message]") == job.message
    tasks = list(Task.objects.filter(repository=repository, validation__verified=True))
    assert tasks, job.message

    # 4. A reviewer approves one (the reviewer's workspace is tested elsewhere).
    task = tasks[0]
    review.review_claim(task=task, user=alice)
    task.refresh_from_db()
    review.review_submit(
        task=task,
        user=alice,
        expected_revision=task.revision,
        rubric=review.RubricInput("approve", 0, 0, 1, "15m-1h", "fine"),
    )

    # 5. Cut a release and download it.
    page.click(".pipeline-nav >> text=Releases")
    page.select_option("select[name=dataset]", "core")
    page.fill("input[name=version]", "v1")
    page.click("button:text('Cut release')")
    page.wait_for_selector("h2:text('Datasheet')", timeout=60_000)
    shot(page, "6-release")
    release = Release.objects.get(dataset=dataset, version="v1")
    assert release.status == Release.Status.READY
    with page.expect_download() as download_info:
        page.click("a:text-matches('swebench', 'i')")
    body = download_info.value.path().read_bytes()
    assert hashlib.sha256(body).hexdigest() == release.files["swebench"]["sha256"]
    rows = [json.loads(line) for line in body.decode().splitlines()]
    assert [row["instance_id"] for row in rows] == [task.instance_id]

    # 6. The Jobs page names every job's subject.
    page.click(".pipeline-nav >> text=Jobs")
    page.wait_for_selector("h1:text('Jobs')")
    assert page.locator("td.subject >> text=ledger-up").count() >= 2  # import and synthesis
    shot(page, "7-jobs")
    assert page.errors == []
    assert console_errors == []
