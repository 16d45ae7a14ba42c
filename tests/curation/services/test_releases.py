"""Cutting releases: what goes in, what the files hold, and that a release never changes."""

import hashlib
import json
from pathlib import Path

import pytest
from django.db import DatabaseError, connection, transaction

from curation.exports.records import content_sha256, task_records
from curation.models import Release, ReleaseImmutable, ReleaseTask, Task
from curation.services import releases as release_services
from curation.services.releases import (
    ReleaseInputError,
    release_build,
    release_cut,
    release_delete,
    release_file_path,
)
from tests.conftest import requires_postgres
from tests.curation.release_helpers import ODD_NODEID, cut, reviewed_task
from tests.factories import DatasetFactory, RepositoryFactory
from workers.models import Job
from workers.services import job_execute

pytestmark = pytest.mark.django_db


@pytest.fixture
def release_root(settings, tmp_path):
    settings.SPECLOOM_RELEASE_ROOT = tmp_path / "releases"
    return settings.SPECLOOM_RELEASE_ROOT


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_it_cuts_a_release_of_the_approved_tasks_only(release_root, dataset):
    approved = [reviewed_task(dataset=dataset) for _ in range(3)]
    for status in ("draft", "needs_review", "changes_requested", "rejected"):
        reviewed_task(dataset=dataset, status=status)
    reviewed_task(dataset=DatasetFactory(name="other"))

    release = cut(dataset)

    assert release.status == Release.Status.READY
    assert release.version == "v1"
    assert release.cut_at is not None
    assert [entry["task_id"] for entry in release.manifest] == [t.pk for t in approved]
    assert set(release.entries.values_list("task_id", flat=True)) == {t.pk for t in approved}
    assert set(Task.objects.filter(status="released").values_list("pk", flat=True)) == {
        t.pk for t in approved
    }
    assert release.datasheet["tasks"] == 3
    job = Job.objects.get(pk=release.job_id)
    assert job.status == "succeeded" and job.result["tasks"] == 3


def test_it_stores_each_file_with_its_checksum_read_only(release_root, dataset):
    reviewed_task(dataset=dataset)
    release = cut(dataset)

    assert set(release.files) == {"specloom", "swebench", "parquet"}
    for fmt, meta in release.files.items():
        path = release_file_path(release, fmt)
        assert path.is_relative_to(release_root / "core" / "v1")
        assert _sha256(path) == meta["sha256"]
        assert path.stat().st_size == meta["bytes"]
        assert not path.stat().st_mode & 0o222, f"{fmt} file is writable"
    expected = hashlib.sha256(
        json.dumps(release.manifest, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()
    assert release.manifest_sha256 == expected


def test_it_freezes_the_content_digest_of_each_task(release_root, dataset):
    task = reviewed_task(dataset=dataset)
    release = cut(dataset)

    entry = release.entries.get()
    (record,) = task_records(Task.objects.filter(pk=task.pk))
    assert entry.revision == task.revision
    assert entry.content_sha256 == record["content_sha256"] == content_sha256(record)
    line = json.loads(release_file_path(release, "specloom").read_text().splitlines()[0])
    assert line["content_sha256"] == entry.content_sha256
    assert line["tests"][0]["nodeid"] == ODD_NODEID


def test_it_keeps_released_tasks_in_the_next_release(release_root, dataset):
    first = reviewed_task(dataset=dataset)
    cut(dataset)
    second = reviewed_task(dataset=dataset)

    release = cut(dataset)

    assert release.version == "v2"
    assert {e["task_id"] for e in release.manifest} == {first.pk, second.pk}


def test_it_refuses_bad_versions_and_a_second_concurrent_cut(release_root, dataset):
    reviewed_task(dataset=dataset)
    with pytest.raises(ReleaseInputError, match="not valid"):
        release_cut(dataset=dataset, version="../etc")
    release_cut(dataset=dataset, version="2026.1")
    with pytest.raises(ReleaseInputError, match="still being cut"):
        release_cut(dataset=dataset, version="2026.2")


def test_it_refuses_a_version_that_exists(release_root, dataset):
    reviewed_task(dataset=dataset)
    cut(dataset, version="2026.1")
    with pytest.raises(ReleaseInputError, match=r"already has a release 2026\.1"):
        release_cut(dataset=dataset, version="2026.1")


def test_it_marks_a_release_failed_when_its_job_ended_without_it(release_root, dataset):
    release = release_cut(dataset=dataset)
    Job.objects.filter(pk=release.job_id).update(status="failed")

    again = release_cut(dataset=dataset, version="v2")

    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert again.status == Release.Status.BUILDING


def test_it_marks_the_release_failed_when_the_build_fails(release_root, dataset, monkeypatch):
    reviewed_task(dataset=dataset)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(release_services, "_write_files", broken)
    release = release_cut(dataset=dataset)
    assert job_execute(job_id=release.job_id) == "failed"

    release.refresh_from_db()
    assert release.status == Release.Status.FAILED
    assert "disk full" in release.datasheet["error"]
    assert not (release_root / "core" / release.version).exists()
    release_delete(release=release)
    assert not Release.objects.filter(pk=release.pk).exists()


def test_it_builds_again_when_a_task_changes_while_files_are_written(
    release_root, dataset, monkeypatch
):
    task = reviewed_task(dataset=dataset)
    original = release_services._write_files
    calls = []

    def edit_during_first_build(*args, **kwargs):
        result = original(*args, **kwargs)
        if not calls:
            Task.objects.filter(pk=task.pk).update(revision=task.revision + 1)
        calls.append(1)
        return result

    monkeypatch.setattr(release_services, "_write_files", edit_during_first_build)
    release = cut(dataset)

    assert len(calls) == 2
    assert release.entries.get().revision == task.revision + 1


def test_it_gives_up_when_tasks_keep_changing(release_root, dataset, monkeypatch):
    task = reviewed_task(dataset=dataset)
    original = release_services._write_files

    def always_edit(*args, **kwargs):
        result = original(*args, **kwargs)
        Task.objects.filter(pk=task.pk).update(revision=Task.objects.get(pk=task.pk).revision + 1)
        return result

    monkeypatch.setattr(release_services, "_write_files", always_edit)
    release = release_cut(dataset=dataset)
    assert job_execute(job_id=release.job_id) == "failed"
    release.refresh_from_db()
    assert release.status == "failed"
    assert "kept changing" in release.datasheet["error"]


def test_it_leaves_out_a_task_sent_back_while_the_release_was_cut(
    release_root, dataset, monkeypatch
):
    kept = reviewed_task(dataset=dataset)
    sent_back = reviewed_task(dataset=dataset)
    original = release_services._write_files
    calls = []

    def send_back_once(*args, **kwargs):
        result = original(*args, **kwargs)
        if not calls:
            Task.objects.filter(pk=sent_back.pk).update(status="changes_requested")
        calls.append(1)
        return result

    monkeypatch.setattr(release_services, "_write_files", send_back_once)
    release = cut(dataset)
    assert [e["task_id"] for e in release.manifest] == [kept.pk]


# --- A release never changes -----------------------------------------------------------------


@pytest.fixture
def ready_release(release_root, dataset):
    reviewed_task(dataset=dataset)
    reviewed_task(dataset=dataset)
    return cut(dataset)


def test_it_refuses_to_save_or_delete_a_ready_release(ready_release):
    ready_release.version = "v9"
    with pytest.raises(ReleaseImmutable):
        ready_release.save()
    with pytest.raises(ReleaseImmutable):
        ready_release.delete()
    with pytest.raises(ReleaseImmutable):
        Release.objects.filter(pk=ready_release.pk).update(manifest=[])
    with pytest.raises(ReleaseImmutable):
        Release.objects.filter(pk=ready_release.pk).delete()
    with pytest.raises(ReleaseImmutable):
        release_delete(release=ready_release)
    fresh = Release.objects.get(pk=ready_release.pk)
    assert fresh.version == "v1" and len(fresh.manifest) == 2


def test_it_refuses_to_change_the_entries_of_a_ready_release(ready_release):
    entry = ready_release.entries.first()
    entry.content_sha256 = "0" * 64
    with pytest.raises(ReleaseImmutable):
        entry.save()
    with pytest.raises(ReleaseImmutable):
        entry.delete()
    with pytest.raises(ReleaseImmutable):
        ReleaseTask.objects.filter(release=ready_release).update(revision=99)
    with pytest.raises(ReleaseImmutable):
        ReleaseTask.objects.filter(release=ready_release).delete()
    extra = reviewed_task(dataset=ready_release.dataset)
    with pytest.raises(ReleaseImmutable):
        ReleaseTask(
            release=ready_release,
            task=extra,
            instance_id=extra.instance_id,
            revision=1,
            content_sha256="0" * 64,
        ).save()
    assert ready_release.entries.count() == 2


def test_the_database_refuses_to_change_a_ready_release(ready_release):
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE curation_release SET version = 'v9' WHERE id = %s", [ready_release.pk]
        )
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "UPDATE curation_releasetask SET revision = 99 WHERE release_id = %s",
            [ready_release.pk],
        )
    assert Release.objects.get(pk=ready_release.pk).version == "v1"


@requires_postgres
def test_postgresql_refuses_to_delete_a_ready_release_or_its_entries(ready_release):
    for statement in (
        "DELETE FROM curation_releasetask WHERE release_id = %s",
        "DELETE FROM curation_release WHERE id = %s",
    ):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, [ready_release.pk])
    assert ready_release.entries.count() == 2


def test_it_does_not_build_a_ready_release_again(ready_release):
    files = dict(ready_release.files)
    from curation.exports.records import ExportOptions

    with pytest.raises(release_services.ReleaseBuildError, match="stopped building"):
        release_build(release=ready_release, options=ExportOptions())
    assert Release.objects.get(pk=ready_release.pk).files == files
    for fmt, meta in files.items():
        assert _sha256(release_file_path(ready_release, fmt)) == meta["sha256"]


def test_a_released_task_cannot_be_deleted(ready_release):
    from django.db.models import ProtectedError

    task = Task.objects.get(pk=ready_release.manifest[0]["task_id"])
    with pytest.raises(ProtectedError):
        task.delete()


def test_it_exports_byte_identical_files_when_built_again(release_root, dataset, tmp_path):
    reviewed_task(dataset=dataset, repository=RepositoryFactory(name="alpha"))
    reviewed_task(dataset=dataset, repository=RepositoryFactory(name="beta"))
    release = cut(dataset)

    # Build the same release again into another folder, from the same (unchanged) tasks.
    from curation.exports.formats import ExportWriter

    again = tmp_path / "again"
    again.mkdir()
    writer = ExportWriter(again, f"core-{release.version}")
    released = Task.objects.filter(pk__in=[e["task_id"] for e in release.manifest])
    for record in task_records(released):
        writer.add(record)
    rebuilt = {item.format: item for item in writer.close()}
    for fmt, meta in release.files.items():
        assert rebuilt[fmt].sha256 == meta["sha256"], fmt
        assert rebuilt[fmt].path.read_bytes() == release_file_path(release, fmt).read_bytes()
