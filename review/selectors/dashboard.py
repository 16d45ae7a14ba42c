"""The dashboard: status counts, the user's leases, running jobs, throughput, pass rates."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db.models import Count, F
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone

from curation.access import is_curator, visible_datasets, visible_tasks
from curation.models import Dataset, Release, Repository, Task, Trajectory
from curation.selectors.audit import audit_calibration
from curation.selectors.evaluations import pass_rates_by_kind
from review import rendering
from review.models import Adjudication, Review, ReviewAssignment
from workers.models import Job


def status_counts(*, user) -> list[dict]:
    """Per visible dataset, how many tasks are in each status."""
    rows = visible_tasks(user).order_by().values("dataset__name", "status").annotate(n=Count("id"))
    table: dict[str, dict[str, int]] = {}
    for row in rows:
        table.setdefault(row["dataset__name"], {})[row["status"]] = row["n"]
    for name in visible_datasets(user).values_list("name", flat=True):
        table.setdefault(name, {})
    return [
        {
            "dataset": name,
            "counts": [(s, counts.get(s, 0)) for s in Task.Status.values],
            "total": sum(counts.values()),
        }
        for name, counts in sorted(table.items())
    ]


def my_queue(*, user) -> dict[str, Any]:
    now = timezone.now()
    leases = list(
        ReviewAssignment.objects.filter(
            reviewer=user, status=ReviewAssignment.Status.ACTIVE, expires_at__gt=now
        )
        .select_related("task", "task__dataset")
        .order_by("claimed_at")[:20]
    )
    waiting = (
        visible_tasks(user)
        .filter(
            status=Task.Status.NEEDS_REVIEW,
            review_slots_taken__lt=F("dataset__reviews_required"),
        )
        .count()
    )
    week = now - dt.timedelta(days=7)
    mine_week = Review.objects.filter(reviewer=user, created_at__gte=week).count()
    return {"leases": leases, "waiting": waiting, "reviewed_this_week": mine_week}


@dataclass
class JobItem:
    """A running job as the dashboard names it: what it works on, and where that is shown."""

    job: Job
    subject: str = ""
    subject_url: str = ""


def running_jobs(*, user, limit: int = 8) -> list[JobItem]:
    """Queued and running jobs the user may know about, named by what they work on: tasks and
    trajectories of visible datasets for everyone, synthesis into a visible dataset too;
    repositories, datasets and releases for curators."""
    jobs = list(
        Job.objects.filter(status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("-id")[:50]
    )
    curator = is_curator(user)
    types = ContentType.objects.get_for_models(Task, Trajectory, Repository, Dataset, Release)
    by_type: dict[int, set[int]] = {}
    for job in jobs:
        if job.target_type_id and str(job.target_id).isdigit():
            by_type.setdefault(job.target_type_id, set()).add(int(job.target_id))

    def ids(model) -> set[int]:
        return by_type.get(types[model].pk, set())

    tasks = (
        {t.pk: t for t in visible_tasks(user).filter(pk__in=ids(Task)).only("id", "instance_id")}
        if ids(Task)
        else {}
    )
    trajectories = (
        {
            t.pk: t
            for t in Trajectory.objects.filter(pk__in=ids(Trajectory), task__in=visible_tasks(user))
            .select_related("task")
            .only("id", "model_name", "task__instance_id")
        }
        if ids(Trajectory)
        else {}
    )
    repositories = (
        dict(Repository.objects.filter(pk__in=ids(Repository)).values_list("pk", "name"))
        if ids(Repository)
        else {}
    )
    datasets_seen = dict(visible_datasets(user).values_list("pk", "name"))
    releases = (
        {
            r.pk: r
            for r in Release.objects.filter(pk__in=ids(Release)).select_related("dataset")
            if r.dataset_id in datasets_seen
        }
        if ids(Release)
        else {}
    )
    shown = []
    for job in jobs:
        target = int(job.target_id) if str(job.target_id).isdigit() else None
        kind = next((m for m, ct in types.items() if ct.pk == job.target_type_id), None)
        item = JobItem(job=job)
        if kind is Task and target in tasks:
            item.subject = tasks[target].instance_id
            item.subject_url = reverse("review-task", args=[target])
        elif kind is Trajectory and target in trajectories:
            trajectory = trajectories[target]
            item.subject = f"{trajectory.model_name} on {trajectory.task.instance_id}"
            item.subject_url = reverse("review-trajectory", args=[target])
        elif kind is Repository and target in repositories:
            # Synthesis fills a dataset: its reviewers see the tasks being made and validated.
            into = datasets_seen.get((job.params or {}).get("dataset_id"))
            if not (curator or into):
                continue
            item.subject = repositories[target] + (f" → {into}" if into else "")
        elif kind is Release and target in releases:
            item.subject = f"{releases[target].dataset.name} {releases[target].version}"
        elif kind is Dataset and target in datasets_seen and curator:
            item.subject = datasets_seen[target]
        elif not (kind is None and curator):
            continue
        shown.append(item)
    return shown[:limit]


def validating_count(*, user) -> int:
    """Tasks the user can see that are being validated (possibly inside a synthesis job)."""
    return visible_tasks(user).filter(status=Task.Status.VALIDATING).count()


def throughput(*, user, days: int = 14) -> dict[str, Any]:
    since = (timezone.now() - dt.timedelta(days=days - 1)).replace(
        hour=0, minute=0, second=0, microsecond=0
    )
    reviews = Review.objects.filter(created_at__gte=since, task__in=visible_tasks(user))
    per_day = dict(
        reviews.annotate(day=TruncDate("created_at"))
        .order_by()
        .values_list("day")
        .annotate(n=Count("id"))
        .values_list("day", "n")
    )
    series = []
    for i in range(days):
        day = (since + dt.timedelta(days=i)).date()
        series.append(per_day.get(day, 0))
    decisions = dict(
        reviews.order_by()
        .values_list("decision")
        .annotate(n=Count("id"))
        .values_list("decision", "n")
    )
    return {
        "series": series,
        "total": sum(series),
        "svg": rendering.sparkline_svg(series),
        "decisions": decisions,
    }


PASS_RATES_CACHE_SECONDS = 120


def pass_rates(*, user, dataset=None) -> list[dict]:
    """Per model and spec kind, satisfied / all spec results over the datasets the user sees.

    One grouped query over every evaluation of those datasets; cached for two minutes because
    it is the dashboard's most expensive figure and changes only when evaluations land.
    """
    ids = sorted(visible_datasets(user).values_list("pk", flat=True))
    if dataset is not None:
        ids = [dataset.pk] if dataset.pk in ids else []
    key = "review:pass-rates:" + ",".join(map(str, ids))

    def compute() -> list[dict]:
        return pass_rates_by_kind(dataset_ids=ids)

    return cache.get_or_set(key, compute, PASS_RATES_CACHE_SECONDS) if ids else []


def open_adjudication_count() -> int:
    """Disagreements waiting for a curator (the dashboard shows curators the count)."""
    return Adjudication.objects.filter(resolved_at__isnull=True).count()


def adjudication_queue(*, user) -> list[Adjudication]:
    return list(
        Adjudication.objects.filter(resolved_at__isnull=True, task__in=visible_tasks(user))
        .select_related("task", "task__dataset")
        .order_by("opened_at")[:200]
    )


# Datasets on the dashboard's calibration card when none is chosen; the page has them all.
CALIBRATION_CARD_DATASETS = 6


def calibration_card(*, user, dataset=None) -> list[dict[str, Any]] | None:
    """The review agent's calibration per dataset for the dashboard (curators, like the page);
    None for everyone else. The same computation as the page, the API and the datasheets."""
    if not is_curator(user):
        return None
    datasets = [dataset] if dataset else list(visible_datasets(user).order_by("name"))
    return [audit_calibration(dataset=d) for d in datasets[:CALIBRATION_CARD_DATASETS]]
