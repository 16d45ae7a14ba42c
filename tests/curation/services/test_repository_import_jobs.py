"""Importing repositories as jobs: queued rows, the job that builds them, idempotency, retries,
the sources a browser or the API may name, and what an unusable repository refuses."""

import os
import stat
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from curation.models import Repository
from curation.services.repositories import (
    NO_TESTS_WARNING,
    RepositoryNotReady,
    repository_check_usable,
    repository_import,
    repository_import_enqueue,
    repository_import_enqueue_batch,
    repository_update_setup,
)
from curation.services.repository_sources import (
    CLI_GIT_PROTOCOLS,
    RepositoryImportError,
    SetupOverrides,
    git_request,
    path_request,
    redact,
    request_from_item,
    upload_request,
)
from curation.services.synthesis import SynthesisInputError, synthesis_enqueue
from tests.curation.repo_sources import git_repo, project_tar, tar, write_project
from tests.factories import DatasetFactory, RepositoryFactory
from workers import gitstore
from workers.models import Job
from workers.services import job_cancel, job_execute, job_retry

pytestmark = pytest.mark.django_db


def _local_git(url: str, **kwargs):
    """A file:// URL, as the command line may clone (the browser may not)."""
    return git_request(url, protocols=CLI_GIT_PROTOCOLS, **kwargs)


def _run(outcome) -> Job:
    assert job_execute(job_id=outcome.job.pk) in ("succeeded", "failed")
    outcome.job.refresh_from_db()
    outcome.repository.refresh_from_db()
    return outcome.job


class TestTheImportJob:
    def test_it_queues_a_row_and_the_job_fills_it_in(self, repo_storage, tmp_path):
        folder, log = git_repo(tmp_path / "lib")
        outcome = repository_import_enqueue(request=_local_git(f"file://{folder}"))
        repository = outcome.repository
        assert outcome.action == "queued"
        assert repository.status == "queued"
        assert not repository.is_imported
        assert outcome.job.kind == "import_repository"
        assert outcome.job.target == repository

        job = _run(outcome)
        assert job.status == "succeeded", job.error
        assert job.message.startswith(f"imported lib at {log[0][:12]}")
        assert repository.status == "imported"
        assert repository.default_commit == log[0]
        assert repository.test_files == 1
        assert repository.status_reason == ""
        assert repository.import_job == job
        repository_check_usable(repository)

    def test_stored_files_are_private_to_the_app(self, repo_storage, tmp_path):
        outcome = repository_import_enqueue(
            request=path_request(str(write_project(tmp_path / "priv")), roots=None)
        )
        _run(outcome)
        git_dir = outcome.repository.git_dir
        for root, _dirs, files in os.walk(git_dir):
            assert stat.S_IMODE(os.stat(root).st_mode) == 0o700, root
            for name in files:
                mode = stat.S_IMODE(os.lstat(os.path.join(root, name)).st_mode)
                assert mode == 0o600, os.path.join(root, name)
        assert stat.S_IMODE(os.stat(repo_storage).st_mode) == 0o700
        # Objects git writes later (synthesis commits patches) keep the same modes.
        assert gitstore.git("config", "core.sharedRepository", git_dir=git_dir).strip() == "0600"

    def test_importing_the_same_source_again_does_not_duplicate(self, repo_storage, tmp_path):
        folder, log = git_repo(tmp_path / "same")
        first = repository_import_enqueue(request=_local_git(f"file://{folder}"))
        again = repository_import_enqueue(request=_local_git(f"file://{folder}/"))
        assert again.action == "in_progress"
        assert again.repository == first.repository
        _run(first)
        third = repository_import_enqueue(request=_local_git(f"file://{folder}.git"))
        assert third.action == "exists"
        assert Repository.objects.count() == 1
        assert Job.objects.filter(kind="import_repository").count() == 1
        # Another commit of the same source is another repository, with a name of its own.
        older = repository_import_enqueue(request=_local_git(f"file://{folder}", commit=log[1]))
        assert older.action == "queued"
        assert older.repository.name == "same-2"
        _run(older)
        assert older.repository.default_commit == log[1]

    def test_a_failed_import_says_why_and_can_be_retried(self, repo_storage, tmp_path):
        folder = tmp_path / "later"
        outcome = repository_import_enqueue(request=_local_git(f"file://{folder}"))
        job = _run(outcome)
        assert job.status == "failed"
        assert job.message.startswith("could not clone")
        assert "Traceback" not in job.error
        repository = outcome.repository
        assert repository.status == "failed"
        assert "could not clone" in repository.status_reason
        with pytest.raises(RepositoryNotReady, match="its import failed: could not clone"):
            repository_check_usable(repository)

        git_repo(folder)  # the source exists now
        retry = repository_import_enqueue(request=_local_git(f"file://{folder}"))
        assert retry.action == "retried"
        assert retry.repository == repository
        assert _run(retry).status == "succeeded"
        assert retry.repository.status == "imported"
        assert Repository.objects.count() == 1

    def test_the_jobs_retry_also_retries_the_import(self, repo_storage, tmp_path):
        folder = tmp_path / "viajob"
        outcome = repository_import_enqueue(request=_local_git(f"file://{folder}"))
        failed = _run(outcome)
        git_repo(folder)
        again = job_retry(job=failed)
        assert again.params["retry_of"] == failed.pk
        assert job_execute(job_id=again.pk) == "succeeded"
        outcome.repository.refresh_from_db()
        assert outcome.repository.status == "imported"
        assert outcome.repository.import_job_id == again.pk

    def test_a_cancelled_import_can_be_started_again(self, repo_storage, tmp_path):
        folder, _ = git_repo(tmp_path / "cancel")
        outcome = repository_import_enqueue(request=_local_git(f"file://{folder}"))
        assert job_cancel(job=outcome.job)
        again = repository_import_enqueue(request=_local_git(f"file://{folder}"))
        assert again.action == "retried"
        assert _run(again).status == "succeeded"

    def test_a_repository_without_tests_is_imported_with_a_warning(self, repo_storage, tmp_path):
        folder = write_project(tmp_path / "notests", tests=False)
        outcome = repository_import_enqueue(request=path_request(str(folder), roots=None))
        job = _run(outcome)
        assert job.status == "succeeded"
        assert outcome.repository.test_files == 0
        assert outcome.repository.status_reason == NO_TESTS_WARNING
        assert "warning: no test files found" in job.message
        cli = repository_import(source=str(write_project(tmp_path / "cli", tests=False)))
        assert cli.status_reason == NO_TESTS_WARNING

    def test_setup_overrides_are_applied(self, repo_storage, tmp_path):
        setup = SetupOverrides.parse(
            {
                "setup_command": "pip install -e .",
                "test_command": "pytest -p no:cacheprovider",
                "requirements": ["pytest-cov", "freezegun==1.5"],
            }
        )
        outcome = repository_import_enqueue(
            request=path_request(str(write_project(tmp_path / "o")), roots=None, setup=setup)
        )
        _run(outcome)
        repository = outcome.repository
        assert repository.setup_command == "pip install -e ."
        assert repository.test_command == "pytest -p no:cacheprovider"
        assert repository.environment["requirements"] == ["pytest-cov", "freezegun==1.5"]

    def test_an_uploaded_archive_is_stored_privately_and_removed_after_import(
        self, repo_storage, tmp_path, settings
    ):
        data = project_tar(tmp_path / "proj-1.0.tar.gz").read_bytes()
        request = upload_request(SimpleUploadedFile("proj-1.0.tar.gz", data))
        stored = Path(settings.STORAGE_ROOT) / request.location
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
        assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
        outcome = repository_import_enqueue(request=request)
        assert outcome.repository.name == "proj-10"
        assert outcome.repository.source == "proj-1.0.tar.gz"
        assert _run(outcome).status == "succeeded"
        assert not stored.exists()
        same = upload_request(SimpleUploadedFile("renamed.tar.gz", data))
        assert repository_import_enqueue(request=same).action == "exists"

    def test_the_batch_reports_each_bad_item_and_queues_the_rest(self, repo_storage, tmp_path):
        good = write_project(tmp_path / "good")
        results = repository_import_enqueue_batch(
            items=[{"path": str(good)}, {"source": "ftp://example.com/x"}, 42],
            parse=lambda item: request_from_item(item, roots=None),
        )
        assert results[0].outcome.action == "queued"
        assert "is not a git URL this server clones" in results[1].error
        assert "must be an object" in results[2].error
        assert Repository.objects.count() == 1


class TestSources:
    @pytest.mark.parametrize(
        "url",
        [
            "file:///etc",
            "ext::sh -c touch% /tmp/pwned",
            "ssh://git@example.com/x.git",
            "git@example.com:owner/x.git",
            "https://-oProxyCommand=x/y",
            "not a url",
            "",
        ],
    )
    def test_the_browser_may_clone_public_protocols_only(self, url):
        with pytest.raises(RepositoryImportError):
            git_request(url)

    def test_a_url_into_the_servers_network_is_never_cloned(self, repo_storage):
        # SSRF: the server would otherwise fetch from the database's or Redis's address.
        outcome = repository_import_enqueue(request=git_request("http://127.0.0.1:6379/x.git"))
        job = _run(outcome)
        assert job.status == "failed"
        assert "inside the server's network" in job.message
        assert outcome.repository.status == "failed"

    def test_git_protocol_urls_are_refused_in_the_browser(self):
        with pytest.raises(RepositoryImportError, match="is not a git URL this server clones"):
            git_request("git://example.org/x.git")

    def test_a_clone_larger_than_the_limit_is_stopped(self, repo_storage, tmp_path, settings):
        settings.SPECLOOM_CLONE_MAX_BYTES = 2000
        folder, _log = git_repo(tmp_path / "big")
        (folder / "blob.bin").write_bytes(os.urandom(200_000))
        gitstore.git("add", "-A", cwd=folder)
        gitstore.git("commit", "-q", "-m", "big", cwd=folder)
        job = _run(repository_import_enqueue(request=_local_git(f"file://{folder}")))
        assert job.status == "failed"
        assert "larger than 2000 bytes" in job.message

    def test_credentials_never_reach_the_row(self, repo_storage):
        request = git_request("https://user:s3cret@example.com/owner/proj.git")
        assert request.label == "https://***@example.com/owner/proj.git"
        assert request.key == "git:https://example.com/owner/proj"
        outcome = repository_import_enqueue(request=request)
        assert "s3cret" not in outcome.repository.source
        assert redact("fatal: https://a:b@h/x failed") == "fatal: https://***@h/x failed"

    def test_server_paths_must_be_inside_the_allowed_roots(self, tmp_path):
        root = tmp_path / "allowed"
        project = write_project(root / "proj")
        outside = write_project(tmp_path / "outside")
        (root / "sneaky").symlink_to(outside)
        roots = [root.resolve()]
        assert path_request(str(project), roots=roots).location == str(project.resolve())
        for path in (outside, root / "sneaky", root / ".." / "outside", root / "missing"):
            with pytest.raises(RepositoryImportError, match="not inside the folders"):
                path_request(str(path), roots=roots)
        with pytest.raises(RepositoryImportError, match="turned off"):
            path_request(str(project), roots=[])
        with pytest.raises(RepositoryImportError, match="absolute path"):
            path_request("relative/path", roots=roots)

    def test_a_folder_whose_git_is_a_file_is_refused(self, tmp_path):
        folder = write_project(tmp_path / "linked")
        (folder / ".git").write_text(f"gitdir: {tmp_path}\n")
        with pytest.raises(RepositoryImportError, match=r"\.git is a file or a link"):
            path_request(str(folder), roots=None)

    def test_an_archive_with_a_git_file_is_refused_not_followed(self, repo_storage, tmp_path):
        host_repo, _ = git_repo(tmp_path / "host-secret")
        archive = tar(
            tmp_path / "evil.tar.gz",
            {"evil/.git": f"gitdir: {host_repo}/.git\n".encode(), "evil/a.py": b"x = 1\n"},
        )
        # Refused at upload already...
        with pytest.raises(RepositoryImportError, match=r"archive rejected: .*git metadata"):
            upload_request(SimpleUploadedFile("evil.tar.gz", archive.read_bytes()))
        assert not any((repo_storage.parent / "uploads").iterdir())
        # ...and by the job, were it handed such an archive some other way.
        request = path_request(str(archive), roots=None)
        outcome = repository_import_enqueue(request=request)
        job = _run(outcome)
        assert job.status == "failed"
        assert "git metadata (.git)" in job.message
        assert outcome.repository.status == "failed"
        assert not outcome.repository.is_imported
        assert not (repo_storage / "evil.git").exists()

    def test_an_archive_with_a_git_folder_is_refused(self, repo_storage, tmp_path):
        archive = tar(tmp_path / "g.tar.gz", {"g/.git/config": b"[core]\n", "g/a.py": b""})
        with pytest.raises(RepositoryImportError, match="git metadata"):
            repository_import(source=str(archive))

    def test_an_upload_over_the_limit_is_refused(self, settings, repo_storage):
        settings.SPECLOOM_UPLOAD_MAX_BYTES = 10
        with pytest.raises(RepositoryImportError, match="the upload limit is 10 bytes"):
            upload_request(SimpleUploadedFile("big.tar.gz", b"x" * 11))

    def test_an_upload_that_is_not_an_archive_is_refused(self, repo_storage):
        with pytest.raises(RepositoryImportError, match="not a supported archive"):
            upload_request(SimpleUploadedFile("notes.txt", b"hello"))

    @pytest.mark.parametrize(
        ("setup", "message"),
        [
            ({"nope": 1}, "unknown keys"),
            ({"setup_command": "a\nb"}, "one line"),
            ({"requirements": ["-e ."]}, "not a package requirement"),
            ({"requirements": "x" * 300}, "not a package requirement"),
            (3, "must be a string"),
        ],
    )
    def test_bad_setup_overrides_are_refused(self, setup, message):
        with pytest.raises(RepositoryImportError, match=message):
            SetupOverrides.parse(setup)

    def test_a_bad_commit_is_refused_before_anything_is_queued(self, tmp_path):
        with pytest.raises(RepositoryImportError, match="is not a commit"):
            path_request(str(write_project(tmp_path / "c")), roots=None, commit="--upload-pack=x")


class TestUsingARepository:
    def test_synthesis_of_a_repository_that_is_not_imported_is_refused(self, repo_storage):
        pending = RepositoryFactory(name="pending", status="queued", git_path="", default_commit="")
        with pytest.raises(SynthesisInputError, match="not imported: its import has not finished"):
            synthesis_enqueue(repository=pending, dataset=DatasetFactory())

    def test_a_synthesis_job_of_an_unusable_repository_fails_with_the_reason(self, repo_storage):
        # A row made some other way (an old admin form): no stored git repository.
        broken = RepositoryFactory(name="broken", default_commit="-", git_path="repos/broken.git")
        job = Job.objects.create(
            kind="synthesize",
            params={
                "repository_id": broken.pk,
                "dataset_id": DatasetFactory().pk,
                "engine": "procedural",
                "count": 1,
                "seed": 0,
            },
        )
        assert job_execute(job_id=job.pk) == "failed"
        job.refresh_from_db()
        assert job.message == (
            "repository 'broken' is not imported: it has no stored git repository "
            "(import it from its source again)"
        )

    def test_the_setup_can_be_changed(self, repo_storage, tmp_path):
        repository = repository_import(source=str(write_project(tmp_path / "s")))
        changed = repository_update_setup(
            repository=repository,
            setup_command="pip install .[test]",
            test_command="",
            requirements=["pytest-cov"],
        )
        assert changed == ["setup_command", "environment"]
        repository.refresh_from_db()
        assert repository.test_command == "pytest"
        assert repository.environment["requirements"] == ["pytest-cov"]
        assert (
            repository_update_setup(
                repository=repository,
                setup_command="pip install .[test]",
                test_command="pytest",
                requirements=["pytest-cov"],
            )
            == []
        )
