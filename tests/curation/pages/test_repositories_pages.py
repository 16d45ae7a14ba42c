"""The Repositories pages: the status table, the four ways to import, a repository's page and
its environment recipe."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.models import EnvironmentRecipe, Repository
from curation.services.repositories import repository_import
from tests.curation.repo_sources import project_tar, project_zip, tar, write_project
from tests.factories import RepositoryFactory
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _import(client, kind, **data):
    return client.post("/repositories/import", {"kind": kind, **data})


def test_the_table_shows_each_repository_with_its_status(curator, repo_storage, tmp_path):
    repository_import(source=str(write_project(tmp_path / "fine")))
    RepositoryFactory(
        name="broken",
        status="failed",
        status_reason="could not clone 'https://example.com/x': not found",
        git_path="",
        default_commit="",
    )
    RepositoryFactory(name="ready", status="tests_collected", tests_collected=42)
    page = curator.get("/repositories/").content.decode()
    assert "fine" in page and "imported" in page
    assert "could not clone" in page and 'badge repo-failed">failed' in page
    assert 'badge repo-environment_ok">ok' in page
    assert ">42<" in page


def test_a_git_url_import_is_queued_and_the_page_follows_it(curator, repo_storage):
    response = _import(curator, "git", url="https://example.com/owner/lib.git", commit="v1.0")
    repository = Repository.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/repositories/{repository.pk}/"
    assert repository.status == "queued"
    assert repository.requested_commit == "v1.0"
    job = Job.objects.get(kind="import_repository")
    page = curator.get(response["Location"]).content.decode()
    assert "Import queued" in page
    assert f"/repositories/{repository.pk}/import-progress?refresh=1" in page
    # The fragment polls while the job runs and stops (286, page refresh) when it is over.
    fragment = curator.get(f"/repositories/{repository.pk}/import-progress?refresh=1", **HTMX)
    assert fragment.status_code == 200
    Job.objects.filter(pk=job.pk).update(status="failed", message="failed: could not clone")
    repository.status, repository.status_reason = "failed", "could not clone it"
    repository.save()
    done = curator.get(f"/repositories/{repository.pk}/import-progress?refresh=1", **HTMX)
    assert done.status_code == 286
    assert done["HX-Refresh"] == "true"
    assert b"could not clone it" in done.content
    # The same source again is not a second repository.
    again = _import(curator, "git", url="https://example.com/owner/lib", commit="v1.0")
    assert again.status_code == 302
    assert Repository.objects.count() == 1


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "This field is required"),
        ("file:///etc", "is not a git URL this server clones"),
        ("git@github.com:owner/x.git", "is not a git URL this server clones"),
        ("https://exa mple.com/x", "one word without spaces"),
    ],
)
def test_a_bad_git_url_gets_a_clear_error(curator, repo_storage, url, message):
    response = _import(curator, "git", url=url)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Repository.objects.exists()


def test_a_server_path_must_be_inside_the_allowed_roots(curator, repo_storage, tmp_path, settings):
    allowed = tmp_path / "corpora"
    inside = write_project(allowed / "inside")
    outside = write_project(tmp_path / "outside")
    settings.SPECLOOM_IMPORT_ROOTS = [allowed.resolve()]
    response = _import(curator, "path", path=str(outside))
    assert response.status_code == 400
    assert "is not inside the folders imports may come from" in response.content.decode()
    response = _import(curator, "path", path=str(allowed / ".." / "outside"))
    assert response.status_code == 400
    assert _import(curator, "path", path=str(inside)).status_code == 302
    repository = Repository.objects.get()
    assert repository.source_kind == "path"
    assert job_execute(job_id=repository.import_job_id) == "succeeded"


def test_server_paths_can_be_turned_off(curator, repo_storage, tmp_path, settings):
    settings.SPECLOOM_IMPORT_ROOTS = []
    assert b"Imports from server folders are turned off" in curator.get("/repositories/").content
    response = _import(curator, "path", path=str(write_project(tmp_path / "p")))
    assert response.status_code == 400
    assert b"turned off here" in response.content


def test_an_uploaded_archive_is_imported_by_its_job(curator, repo_storage, tmp_path):
    archive = project_tar(tmp_path / "proj-2.0.tar.gz")
    with archive.open("rb") as handle:
        response = curator.post(
            "/repositories/import", {"kind": "archive", "archive": handle, "name": "proj"}
        )
    assert response.status_code == 302
    repository = Repository.objects.get(name="proj")
    assert job_execute(job_id=repository.import_job_id) == "succeeded"
    page = curator.get(response["Location"]).content.decode()
    assert "1 test file" in page
    assert "Synthesize tasks" in page


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda tmp: tar(tmp / "evil.tar.gz", {"e/.git": b"gitdir: /srv/secret/.git\n"}),
            "is git metadata (.git)",
        ),
        (
            lambda tmp: project_zip(tmp / "z.zip", {"z/.git/HEAD": "ref: refs/heads/main\n"}),
            "is git metadata (.git)",
        ),
        (lambda tmp: tar(tmp / "up.tar.gz", {"../up.py": b"x"}), "would escape the archive"),
    ],
    ids=["git file", "git folder in a zip", "dot-dot"],
)
def test_an_unsafe_archive_is_refused_at_upload(curator, repo_storage, tmp_path, make, message):
    archive = make(tmp_path)
    with archive.open("rb") as handle:
        response = curator.post("/repositories/import", {"kind": "archive", "archive": handle})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Repository.objects.exists()
    assert not Job.objects.exists()


def test_an_upload_that_is_not_an_archive_is_refused(curator, repo_storage):
    upload = SimpleUploadedFile("notes.txt", b"hello")
    response = curator.post("/repositories/import", {"kind": "archive", "archive": upload})
    assert response.status_code == 400
    assert b"is not a supported archive" in response.content


def test_an_oversized_upload_is_refused_before_it_is_read(curator, repo_storage, settings):
    settings.SPECLOOM_UPLOAD_MAX_BYTES = 1000
    upload = SimpleUploadedFile("big.tar.gz", b"x" * 200_000)
    response = curator.post("/repositories/import", {"kind": "archive", "archive": upload})
    assert response.status_code == 413
    assert b"The upload is too large" in response.content
    assert not Repository.objects.exists()


def test_many_at_once_reports_each_refused_line(curator, repo_storage, tmp_path):
    good = write_project(tmp_path / "good")
    lines = f"{good}\nhttps://example.com/a.git v2\n# a comment\nftp://nope\n"
    response = _import(curator, "batch", lines=lines)
    assert response.status_code == 302
    page = curator.get("/repositories/").content.decode()
    assert "3 repositories: 2 queued." in page
    assert "line 3: " in page and "is not a git URL" in page
    assert Repository.objects.count() == 2
    assert Repository.objects.get(name="a").requested_commit == "v2"
    response = _import(curator, "batch", lines="ftp://nope\n")
    assert response.status_code == 400


def test_an_unknown_kind_of_import_is_refused(curator, repo_storage):
    response = _import(curator, "carrier-pigeon", url="x")
    assert response.status_code == 302
    assert b"Choose how to import" in curator.get("/repositories/").content


def test_the_table_fragment_polls_only_while_something_imports(curator, repo_storage):
    RepositoryFactory(name="done")
    assert curator.get("/repositories/?part=table", **HTMX).status_code == 286
    pending = RepositoryFactory(name="pending", status="queued", git_path="", default_commit="")
    pending.import_job = Job.objects.create(kind="import_repository", status="queued")
    pending.save()
    response = curator.get("/repositories/?part=table", **HTMX)
    assert response.status_code == 200
    assert b'hx-trigger="every 2s"' in response.content


def test_a_failed_import_can_be_retried_from_its_page(curator, repo_storage, tmp_path):
    folder = tmp_path / "later"
    _import(curator, "path", path=str(write_project(folder)))
    repository = Repository.objects.get()
    Job.objects.filter(pk=repository.import_job_id).update(status="failed", message="failed: x")
    Repository.objects.filter(pk=repository.pk).update(status="failed", status_reason="x")
    response = curator.post(f"/repositories/{repository.pk}/retry")
    assert response.status_code == 302
    repository.refresh_from_db()
    assert repository.status == "queued"
    assert job_execute(job_id=repository.import_job_id) == "succeeded"
    response = curator.post(f"/repositories/{repository.pk}/retry")
    assert b"Only a failed import can be retried" in curator.get(response["Location"]).content


class TestTheRecipe:
    @pytest.fixture
    def repository(self, repo_storage, tmp_path):
        return repository_import(source=str(write_project(tmp_path / "rec")))

    def test_it_is_shown_and_edited_in_place(self, curator, repository):
        page = curator.get(f"/repositories/{repository.pk}/").content.decode()
        assert "Environment recipe" in page and "not tried yet" in page
        form = curator.get(f"/repositories/{repository.pk}/recipe?edit=1", **HTMX)
        assert b'name="packages"' in form.content and b'name="revision"' in form.content
        saved = curator.post(
            f"/repositories/{repository.pk}/recipe",
            {
                "install": ".[test]",
                "packages": "freezegun\n\npytest-mock>=3\n",
                "environment": "SETUPTOOLS_SCM_PRETEND_VERSION=1.0",
                "setup_commands": "",
                "pytest_addopts": "-ra",
                "pytest_options": "-p no:randomly",
                "revision": "1",
            },
            **HTMX,
        )
        assert saved.status_code == 200, saved.content
        assert b"Saved as the curator" in saved.content
        row = EnvironmentRecipe.objects.get(repository=repository)
        assert row.source == "curator" and row.revision == 2
        assert row.recipe["packages"] == ["freezegun", "pytest-mock>=3"]
        assert row.recipe["environment"] == {"SETUPTOOLS_SCM_PRETEND_VERSION": "1.0"}
        assert row.recipe["pytest_addopts"] == "-ra"
        assert row.recipe["pytest_options"] == ["-p", "no:randomly"]
        assert Job.objects.filter(kind="prepare_environment").count() == 1
        # While the try is queued the section polls its job.
        assert b'hx-trigger="every 2s"' in saved.content

    def test_bad_input_gets_a_clear_error_and_a_stale_edit_a_409(self, curator, repository):
        base = {
            "install": ".",
            "packages": "",
            "environment": "",
            "setup_commands": "",
            "pytest_addopts": "",
            "pytest_options": "",
            "revision": "1",
        }
        refused = curator.post(
            f"/repositories/{repository.pk}/recipe",
            {**base, "packages": "evil @ file:///etc/shadow"},
            **HTMX,
        )
        assert refused.status_code == 400
        assert b"requirements by URL or path are not fetched" in refused.content
        not_a_variable = curator.post(
            f"/repositories/{repository.pk}/recipe", {**base, "environment": "JUST TEXT"}
        )
        assert not_a_variable.status_code == 400
        assert b"is not NAME=value" in not_a_variable.content
        stale = curator.post(
            f"/repositories/{repository.pk}/recipe", {**base, "revision": "7"}, **HTMX
        )
        assert stale.status_code == 409
        assert b"changed meanwhile" in stale.content
        assert EnvironmentRecipe.objects.get(repository=repository).source == "inferred"

    def test_try_again_queues_a_preparation(self, curator, repository):
        response = curator.post(f"/repositories/{repository.pk}/recipe/prepare", **HTMX)
        assert response.status_code == 200
        assert Job.objects.filter(kind="prepare_environment").count() == 1
        assert curator.get(f"/repositories/{repository.pk}/recipe/prepare").status_code == 405
