"""Reads of jobs for the curator's Jobs page: each job with the thing it works on, named.

A job's target is a generic relation; subjects are loaded in one query per kind of target
(never one per row), and a synthesis job also names the dataset its tasks go to.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet
from django.urls import reverse

from curation.models import Dataset, Release, Repository, Task, Trajectory
from workers.models import Job

KIND_LABELS = {
    "import_repository": "import",
    "synthesize": "synthesis",
    "validate_task": "validation",
    "evaluate_trajectory": "evaluation",
    "audit_task": "audit",
    "cut_release": "release",
    "deliver_webhook": "webhook",
    "demo_seed": "demo data",
}
RETRYABLE = (Job.Status.FAILED, Job.Status.CANCELLED)
CANCELLABLE = (Job.Status.QUEUED, Job.Status.RUNNING)


@dataclass(frozen=True)
class Subject:
    kind: str  # repository | task | dataset | release | trajectory
    name: str
    url: str


def _subject(obj) -> Subject | None:
    if isinstance(obj, Repository):
        return Subject("repository", obj.name, reverse("repository-detail", args=[obj.pk]))
    if isinstance(obj, Task):
        return Subject("task", obj.instance_id, reverse("review-task", args=[obj.pk]))
    if isinstance(obj, Dataset):
        return Subject("dataset", obj.name, reverse("dataset-detail", args=[obj.pk]))
    if isinstance(obj, Release):
        return Subject(
            "release", f"{obj.dataset.name} {obj.version}", reverse("release-detail", args=[obj.pk])
        )
    if isinstance(obj, Trajectory):
        return Subject(
            "trajectory",
            f"{obj.model_name} on {obj.task.instance_id}",
            reverse("review-trajectory", args=[obj.pk]),
        )
    return None


_LOADERS = {
    Repository: lambda ids: Repository.objects.filter(pk__in=ids).only("id", "name"),
    Task: lambda ids: Task.objects.filter(pk__in=ids).only("id", "instance_id"),
    Dataset: lambda ids: Dataset.objects.filter(pk__in=ids).only("id", "name"),
    Release: lambda ids: (
        Release.objects.filter(pk__in=ids)
        .select_related("dataset")
        .only("id", "version", "dataset__name")
    ),
    Trajectory: lambda ids: (
        Trajectory.objects.filter(pk__in=ids)
        .select_related("task")
        .only("id", "model_name", "task__instance_id")
    ),
}


def attach_subjects(jobs: list[Job]) -> list[Job]:
    """Set `job.subject` (and `job.dataset_subject` for synthesis) on every job, in bulk."""
    wanted: dict[int, set[int]] = {}
    for job in jobs:
        if job.target_type_id and job.target_id.isdigit():
            wanted.setdefault(job.target_type_id, set()).add(int(job.target_id))
    dataset_ids = {
        job.params.get("dataset_id")
        for job in jobs
        if job.kind == "synthesize" and isinstance(job.params.get("dataset_id"), int)
    }
    found: dict[tuple[int, int], object] = {}
    for type_id, ids in wanted.items():
        model = ContentType.objects.get_for_id(type_id).model_class()
        loader = _LOADERS.get(model)
        if loader is not None:
            for obj in loader(ids):
                found[(type_id, obj.pk)] = obj
    datasets = {d.pk: d for d in Dataset.objects.filter(pk__in=dataset_ids).only("id", "name")}
    for job in jobs:
        target = (
            found.get((job.target_type_id, int(job.target_id)))
            if job.target_type_id and job.target_id.isdigit()
            else None
        )
        job.subject = _subject(target) if target is not None else None
        dataset = datasets.get(job.params.get("dataset_id")) if job.kind == "synthesize" else None
        job.dataset_subject = _subject(dataset) if dataset is not None else None
        job.kind_label = KIND_LABELS.get(job.kind, job.kind.replace("_", " "))
        job.can_retry = job.status in RETRYABLE
        job.can_cancel = job.status in CANCELLABLE
    return jobs


def jobs_filtered(*, kind: str = "", status: str = "") -> QuerySet[Job]:
    jobs = Job.objects.select_related("created_by").order_by("-id")
    if kind:
        jobs = jobs.filter(kind=kind)
    if status:
        jobs = jobs.filter(status=status)
    return jobs.defer("log_tail")


def job_kinds() -> list[str]:
    return list(Job.objects.order_by("kind").values_list("kind", flat=True).distinct())


def get_job(job_id) -> Job:
    from django.http import Http404

    try:
        pk = int(job_id)
    except (TypeError, ValueError):
        raise Http404("No such job.") from None
    job = Job.objects.select_related("created_by", "target_type").filter(pk=pk).first()
    if job is None:
        raise Http404("No such job.")
    return attach_subjects([job])[0]
