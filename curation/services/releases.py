"""Cutting releases: a frozen manifest of approved tasks, export files built once, a datasheet.

`release_cut` records a building release and queues the `cut_release` job; the job
(`release_build_run`) writes every export file in one pass over the tasks into a scratch folder,
records the manifest, checks that no task changed meanwhile (or builds again), moves the files
into place and marks the release ready, all in one transaction. From then on nothing changes it:
the model, these services, the admin and the API refuse, and database triggers back them up.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import stat
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from curation.exports.formats import MEDIA_TYPES, ExportWriter
from curation.exports.records import ExportCounts, ExportOptions, canonical_json, task_records
from curation.models import Dataset, Release, ReleaseImmutable, ReleaseTask, Task
from curation.selectors.releases import RecordStats, release_datasheet
from curation.services.release_environments import ReleaseEnvironments
from curation.services.webhooks import webhook_release_cut
from workers.models import Job
from workers.services import job_enqueue

RELEASABLE = (Task.Status.APPROVED, Task.Status.RELEASED)
VERSION_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,31}$")
_DEFAULT_VERSION = re.compile(r"^v(\d+)$")
# How often a cut starts over because a task was edited while its files were being written.
BUILD_ATTEMPTS = 3
_PROGRESS_EVERY = 200


class ReleaseInputError(ValueError):
    """The release cannot be cut as asked; the message says why."""


class ReleaseBuildError(RuntimeError):
    pass


def releasable_tasks(dataset: Dataset):
    """Approved tasks, less the trivial ones (their answer is visible next to them) that no
    curator chose to include."""
    return Task.objects.filter(dataset=dataset, status__in=RELEASABLE).exclude(
        trivial=True, trivial_included=False
    )


def release_folder(release: Release) -> Path:
    return settings.SPECLOOM_RELEASE_ROOT / release.dataset.name / release.version


def release_file_path(release: Release, fmt: str) -> Path:
    meta = release.files.get(fmt)
    if not meta:
        raise KeyError(fmt)
    return settings.SPECLOOM_RELEASE_ROOT / meta["path"]


def release_environment_file(release: Release, environment: str, name: str) -> tuple[Path, dict]:
    """(path, {sha256, bytes}) of a file of one of the release's environment images; KeyError
    when the release ships no such file."""
    meta = release.datasheet.get("environments", {})[environment]["files"][name]
    return settings.SPECLOOM_RELEASE_ROOT / meta["path"], meta


def next_version(dataset: Dataset) -> str:
    """The next vN of `dataset`: above every version it has, and above every version a cut job
    was ever started for, so a name once handed out (to a release since deleted, say) is never
    handed out again."""
    versions = list(Release.objects.filter(dataset=dataset).values_list("version", flat=True))
    versions += Job.objects.filter(kind="cut_release", params__dataset_id=dataset.pk).values_list(
        "params__version", flat=True
    )
    numbers = [
        int(match.group(1))
        for version in versions
        if isinstance(version, str) and (match := _DEFAULT_VERSION.match(version))
    ]
    return f"v{max(numbers, default=0) + 1}"


def _settle_orphaned_builds(dataset: Dataset) -> None:
    """A building release whose job has ended without finishing it will never finish."""
    for release in Release.objects.filter(dataset=dataset, status=Release.Status.BUILDING):
        job = release.job
        if job is not None and job.is_finished:
            _mark_failed(release, f"its job {job.pk} ended as {job.status}")


def release_cut_check(
    *,
    dataset: Dataset,
    version: str | None,
    trajectories: bool = False,
    include_unsafe: bool = False,
) -> str:
    """The version a cut would get; ReleaseInputError when the cut cannot happen."""
    _settle_orphaned_builds(dataset)
    building = Release.objects.filter(dataset=dataset, status=Release.Status.BUILDING).first()
    if building is not None:
        raise ReleaseInputError(
            f"{dataset.name} {building.version} is still being cut; wait for it to finish"
        )
    version = (version or "").strip() or next_version(dataset)
    if not VERSION_PATTERN.match(version):
        raise ReleaseInputError(
            f"version {version!r} is not valid: use up to 32 letters, digits, '.', '_' or '-'"
        )
    existing = Release.objects.filter(dataset=dataset, version=version).first()
    if existing is not None:
        hint = " (it failed: delete it to reuse the name)" if existing.status == "failed" else ""
        raise ReleaseInputError(f"{dataset.name} already has a release {version}{hint}")
    if include_unsafe and not trajectories:
        raise ReleaseInputError("include_unsafe only makes sense with trajectories")
    return version


@transaction.atomic
def release_cut(
    *,
    dataset: Dataset,
    version: str | None = None,
    user=None,
    trajectories: bool = False,
    include_unsafe: bool = False,
) -> Release:
    """Record a new release of `dataset` and queue the job that builds it."""
    # One cut at a time per dataset: the row lock orders concurrent cuts.
    Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
    version = release_cut_check(
        dataset=dataset,
        version=version,
        trajectories=trajectories,
        include_unsafe=include_unsafe,
    )
    release = Release.objects.create(
        dataset=dataset,
        version=version,
        status=Release.Status.BUILDING,
        created_by=user if getattr(user, "is_authenticated", False) else None,
    )
    job = job_enqueue(
        kind="cut_release",
        target=release,
        params={
            "release_id": release.pk,
            "dataset_id": dataset.pk,
            "version": version,
            "trajectories": bool(trajectories),
            "include_unsafe": bool(include_unsafe),
        },
        user=user,
        message=f"cut {dataset.name} {version}",
    )
    Release.objects.filter(pk=release.pk).update(job=job)
    release.job = job
    return release


def _mark_failed(release: Release, error: str) -> None:
    marked = Release.objects.filter(pk=release.pk, status=Release.Status.BUILDING).update(
        status=Release.Status.FAILED, datasheet={"error": error[-2000:]}
    )
    if marked:
        shutil.rmtree(release_folder(release), ignore_errors=True)


def release_build_run(*, job: Job, ctx) -> dict[str, Any]:
    """The `cut_release` job: build the release, or mark it failed with the reason."""
    from workers.services import JobLeaseLost

    release = Release.objects.select_related("dataset").filter(pk=job.params["release_id"]).first()
    if release is None:
        return {"message": f"nothing to do: release {job.params['release_id']} no longer exists"}
    if release.status != Release.Status.BUILDING:
        return {"message": f"nothing to do: {release} is {release.status}"}
    options = ExportOptions(
        trajectories=bool(job.params.get("trajectories")),
        include_unsafe=bool(job.params.get("include_unsafe")),
    )
    try:
        release = release_build(release=release, options=options, ctx=ctx)
    except JobLeaseLost:
        raise  # another worker owns the job now and will build the release
    except Exception as exc:
        _mark_failed(release, f"{type(exc).__name__}: {exc}")
        raise
    return {
        "message": f"{release} is ready: {len(release.manifest)} tasks",
        "release_id": release.pk,
        "tasks": len(release.manifest),
        "manifest_sha256": release.manifest_sha256,
        "files": {fmt: meta["sha256"] for fmt, meta in release.files.items()},
    }


def _write_files(
    release: Release, scratch: Path, options: ExportOptions, ctx
) -> tuple[list[dict], dict[str, dict], RecordStats, ExportCounts, dict]:
    tasks = releasable_tasks(release.dataset)
    total = tasks.count()
    stem = f"{release.dataset.name}-{release.version}"
    writer = ExportWriter(scratch, stem)
    stats, counts = RecordStats(), ExportCounts()
    manifest: list[dict[str, Any]] = []
    environments = ReleaseEnvironments()
    try:
        for record in task_records(tasks, options=options, counts=counts):
            writer.add(record)
            stats.add(record)
            manifest.append(
                {
                    "instance_id": record["instance_id"],
                    "task_id": record["task_id"],
                    "revision": record["revision"],
                    "content_sha256": record["content_sha256"],
                    # Its environment image (environments/<hash>/ in the release).
                    **environments.add(record),
                }
            )
            if ctx is not None and len(manifest) % _PROGRESS_EVERY == 0:
                ctx.progress(min(90, int(90 * len(manifest) / max(total, 1))), "writing files")
        written = writer.close()
    except BaseException:
        writer.abort()
        raise
    root = settings.SPECLOOM_RELEASE_ROOT
    final = release_folder(release)
    files = {
        item.format: {
            "path": str((final / item.path.name).relative_to(root)),
            "filename": item.path.name,
            "sha256": item.sha256,
            "bytes": item.bytes,
            "media_type": MEDIA_TYPES[item.format],
        }
        for item in written
    }
    environment_sheet = environments.write(scratch, root_path=str(final.relative_to(root)))
    return manifest, files, stats, counts, environment_sheet


def _publish_folder(scratch: Path, final: Path) -> None:
    """Move the built files into place, read-only (nothing should ever write them again)."""
    if final.exists():
        shutil.rmtree(final)  # left by an earlier attempt of this same, still unfinished, release
    for path in sorted(scratch.rglob("*"), reverse=True):
        readable = stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
        searchable = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
        path.chmod(readable | searchable if path.is_dir() else readable)
    scratch.rename(final)


def release_build(*, release: Release, options: ExportOptions, ctx=None) -> Release:
    """Write the files and freeze the release. Raises ReleaseBuildError when tasks keep changing."""
    final = release_folder(release)
    final.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, BUILD_ATTEMPTS + 1):
        scratch = final.parent / f".{release.version}.building-{uuid.uuid4().hex}"
        scratch.mkdir()
        try:
            manifest, files, stats, counts, environments = _write_files(
                release, scratch, options, ctx
            )
            if ctx is not None:
                ctx.progress(92, "recording the manifest")
            if _freeze(
                release, manifest, files, stats, counts, options, scratch, final, environments
            ):
                break
        finally:
            if scratch.exists():
                shutil.rmtree(scratch, ignore_errors=True)
        if ctx is not None:
            ctx.log(f"attempt {attempt}: a task changed while its files were written; again")
    else:
        raise ReleaseBuildError(
            f"tasks of {release.dataset.name} kept changing during {BUILD_ATTEMPTS} attempts"
        )
    return Release.objects.select_related("dataset").get(pk=release.pk)


@transaction.atomic
def _freeze(
    release: Release,
    manifest: list[dict],
    files: dict[str, dict],
    stats: RecordStats,
    counts: ExportCounts,
    options: ExportOptions,
    scratch: Path,
    final: Path,
    environments: dict | None = None,
) -> bool:
    """Record the entries and mark the release ready; False (nothing kept) when stale."""
    locked = Release.objects.select_for_update().filter(pk=release.pk).first()
    if locked is None or locked.status != Release.Status.BUILDING:
        raise ReleaseBuildError(f"{release} stopped building while its files were written")
    ReleaseTask.objects.filter(release=release).delete()
    ReleaseTask.objects.bulk_create(
        (
            ReleaseTask(
                release=release,
                task_id=entry["task_id"],
                instance_id=entry["instance_id"],
                revision=entry["revision"],
                content_sha256=entry["content_sha256"],
            )
            for entry in manifest
        ),
        batch_size=2000,
    )
    # An edit bumps the revision; a review that sends a task back changes its status. Either
    # after the task was read means the files no longer show what the release would claim.
    stale = (
        ReleaseTask.objects.filter(release=release)
        .filter(~Q(revision=F("task__revision")) | ~Q(task__status__in=RELEASABLE))
        .exists()
    )
    if stale:
        transaction.set_rollback(True)
        return False
    Task.objects.filter(release_entries__release=release, status=Task.Status.APPROVED).update(
        status=Task.Status.RELEASED
    )
    datasheet = release_datasheet(release=release, stats=stats, counts=counts, options=options)
    cut_at = timezone.now()
    datasheet["cut_at"] = cut_at.isoformat()
    datasheet["files"] = {
        fmt: {"sha256": m["sha256"], "bytes": m["bytes"]} for fmt, m in files.items()
    }
    # environments/<hash>/: the image, its task count and its files with their SHA-256.
    datasheet["environments"] = environments or {}
    _publish_folder(scratch, final)
    Release.objects.filter(pk=release.pk, status=Release.Status.BUILDING).update(
        status=Release.Status.READY,
        manifest=manifest,
        manifest_sha256=hashlib.sha256(canonical_json(manifest)).hexdigest(),
        files=files,
        datasheet=datasheet,
        cut_at=cut_at,
    )
    ready = Release.objects.select_related("dataset").get(pk=release.pk)
    webhook_release_cut(ready)
    return True


def release_delete(*, release: Release) -> None:
    """Delete a release that failed to build, and its files.

    A ready release is never deleted (ReleaseImmutable). A building one is refused too
    (ReleaseInputError): its job may be freezing it this very moment, and would then find it
    gone. A building release whose job has already ended is marked failed first, and so can go.
    The row is locked while it is checked and deleted, so the worker's own locked freeze comes
    strictly before or after, never in between.
    """
    _settle_orphaned_builds(release.dataset)
    with transaction.atomic():
        locked = (
            Release.objects.select_for_update()
            .select_related("dataset")
            .filter(pk=release.pk)
            .first()
        )
        if locked is None:
            return
        if locked.status == Release.Status.READY:
            raise ReleaseImmutable("a ready release is never deleted; it is part of the record")
        if locked.status == Release.Status.BUILDING:
            raise ReleaseInputError(
                f"{locked} is still being cut (job {locked.job_id}); wait for the job to end, "
                "or cancel it, and delete the release if it failed"
            )
        ReleaseTask.objects.filter(release=locked).delete()
        locked.delete()
        # Inside the transaction: a new release of the same name cannot be recorded (and so
        # cannot publish its folder) until this one's row is gone for good.
        shutil.rmtree(release_folder(locked), ignore_errors=True)
