"""Reads about releases: who sees which, the datasheet's figures, and the diff of two versions.

Reviews belong to the review app, which nothing here imports (DESIGN.md); they are read through
the port curation owns (`curation.review_port`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.db.models import Count, Q, QuerySet

from curation import access
from curation.exports.records import ExportCounts, ExportOptions
from curation.models import Dataset, Evaluation, Finding, Release, Task, Trajectory
from curation.review_port import TURNED_DOWN, Decision, review_port
from curation.selectors.audit import audit_calibration
from curation.selectors.evaluations import pass_rates_by_kind
from curation.selectors.quality import quality_report

COMMENT_EXCERPTS = 20
COMMENT_CHARS = 300
RUBRIC = ("spec_clarity", "test_validity", "interdependency")
# REVIEW.md: a rubric severity of 2 or more means "do not approve as is".
RUBRIC_BLOCKING = 2


class ReleaseNotComparable(ValueError):
    pass


def releases_visible(user) -> QuerySet[Release]:
    return Release.objects.filter(dataset__in=access.visible_datasets(user)).select_related(
        "dataset"
    )


def releases_listed(user) -> QuerySet[Release]:
    """For lists: the task count without loading manifests (megabytes each for big releases)."""
    return (
        releases_visible(user).defer("manifest", "datasheet").annotate(task_count=Count("entries"))
    )


def get_release_for_user(user, release_id) -> Release:
    from django.http import Http404

    try:
        pk = int(release_id)
    except (TypeError, ValueError):
        raise Http404("No such release.") from None
    release = releases_visible(user).filter(pk=pk).first()
    if release is None:
        raise Http404("No such release.")
    return release


class RecordStats:
    """Counts of the released tasks, taken from the very records written to the files."""

    def __init__(self) -> None:
        self.tasks = 0
        self.by_origin: Counter[str] = Counter()
        self.by_repository: Counter[str] = Counter()
        self.by_difficulty: Counter[str] = Counter()
        self.by_spec_kind: Counter[str] = Counter()
        self.specs_unverified = 0
        self.tests_by_role: Counter[str] = Counter()
        self.dependencies_by_evidence: Counter[str] = Counter()
        self.tasks_with_dependencies = 0

    def add(self, record: dict[str, Any]) -> None:
        self.tasks += 1
        self.by_origin[record["origin"]] += 1
        self.by_repository[record["repo"]] += 1
        self.by_difficulty[record["difficulty"] or "unrated"] += 1
        # A spec no FAIL_TO_PASS test verifies is not a spec of the benchmark: never counted.
        self.by_spec_kind.update(s["kind"] for s in record["specs"] if s.get("verified", True))
        self.specs_unverified += sum(1 for s in record["specs"] if not s.get("verified", True))
        self.tests_by_role.update(test["role"] for test in record["tests"])
        self.dependencies_by_evidence.update(dep["evidence"] for dep in record["dependencies"])
        if record["dependencies"]:
            self.tasks_with_dependencies += 1

    def as_dict(self) -> dict[str, Any]:
        def ordered(counter: Counter) -> dict[str, int]:
            return dict(sorted(counter.items()))

        return {
            "tasks": self.tasks,
            "specs": sum(self.by_spec_kind.values()),
            "specs_unverified_not_counted": self.specs_unverified,
            "tests": sum(self.tests_by_role.values()),
            "dependencies": sum(self.dependencies_by_evidence.values()),
            "tasks_with_dependencies": self.tasks_with_dependencies,
            "by_origin": ordered(self.by_origin),
            "by_repository": ordered(self.by_repository),
            "by_spec_kind": ordered(self.by_spec_kind),
            "by_difficulty": ordered(self.by_difficulty),
            "tests_by_role": ordered(self.tests_by_role),
            "dependencies_by_evidence": ordered(self.dependencies_by_evidence),
        }


def review_outcomes(*, dataset: Dataset) -> dict[str, Any]:
    """How many of the dataset's tasks were rejected or sent back, and the reasons given."""
    blocking = [r for r in review_port().reviews(dataset=dataset) if r.decision in TURNED_DOWN]
    rubric = {
        criterion: sum(1 for r in blocking if getattr(r, criterion) >= RUBRIC_BLOCKING)
        for criterion in RUBRIC
    }
    turned_down = Task.objects.filter(dataset=dataset).filter(
        Q(status=Task.Status.REJECTED)
        | Q(status=Task.Status.CHANGES_REQUESTED)
        | Q(pk__in={r.task_id for r in blocking})
    )
    findings = (
        Finding.objects.filter(task__in=turned_down.values("pk"), dismissed=False, superseded=False)
        .values("kind")
        .annotate(n=Count("id"))
        .order_by("kind")
    )
    newest_first = sorted(blocking, key=lambda r: (r.created_at, r.id), reverse=True)
    comments = [
        {
            "instance_id": r.instance_id,
            "decision": r.decision,
            "comment": r.comment[:COMMENT_CHARS],
        }
        for r in newest_first
        if r.comment
    ][:COMMENT_EXCERPTS]
    statuses = dict(
        Task.objects.filter(dataset=dataset)
        .values_list("status")
        .annotate(n=Count("id"))
        .order_by("status")
    )
    sent_back = [r for r in blocking if r.decision == Decision.REQUEST_CHANGES]
    return {
        "tasks_by_status": statuses,
        "rejected": {
            "tasks": statuses.get(Task.Status.REJECTED, 0),
            "reviews": sum(1 for r in blocking if r.decision == Decision.REJECT),
        },
        "sent_back": {
            "tasks": len({r.task_id for r in sent_back}),
            "still_open": statuses.get(Task.Status.CHANGES_REQUESTED, 0),
            "reviews": len(sent_back),
        },
        "reasons": {
            "rubric_blocking": rubric,
            "findings": {row["kind"]: row["n"] for row in findings},
            "comments": comments,
        },
    }


def reviewer_agreement(*, dataset: Dataset) -> dict[str, Any]:
    """Agreement on the decision between reviewers of the same task revision, computed by the
    review app (the agreement page's units, alpha and rounding). Adjudications are left out:
    they settle a disagreement, they are not a second opinion."""
    return review_port().decision_agreement(dataset=dataset)


def model_pass_rates(*, release: Release) -> list[dict[str, Any]]:
    """Per model, over every trajectory of the released tasks (exported or not)."""
    in_release = Q(trajectory__task__release_entries__release=release)
    per_model: dict[str, dict[str, Any]] = {}
    for row in (
        Trajectory.objects.filter(task__release_entries__release=release)
        .values("model_name")
        .annotate(total=Count("id"), unsafe=Count("id", filter=Q(unsafe=True)))
        .order_by("model_name")
    ):
        per_model[row["model_name"]] = {
            "model": row["model_name"],
            "trajectories": row["total"],
            "unsafe": row["unsafe"],
            "evaluated": 0,
            "resolved": {"full": 0, "partial": 0, "none": 0},
            "resolve_rate": None,
            "spec_pass_rate_by_kind": {},
        }
    for row in (
        Evaluation.objects.filter(in_release)
        .values("trajectory__model_name", "resolved")
        .annotate(n=Count("id"))
        .order_by()
    ):
        entry = per_model.get(row["trajectory__model_name"])
        if entry is not None:
            entry["resolved"][row["resolved"]] = row["n"]
            entry["evaluated"] += row["n"]
    for row in pass_rates_by_kind(release=release):
        entry = per_model.get(row["model"])
        if entry is not None and row["total"]:
            entry["spec_pass_rate_by_kind"][row["kind"]] = row["rate"]
    for entry in per_model.values():
        if entry["evaluated"]:
            entry["resolve_rate"] = round(entry["resolved"]["full"] / entry["evaluated"], 4)
    return list(per_model.values())


def release_datasheet(
    *,
    release: Release,
    stats: RecordStats,
    counts: ExportCounts,
    options: ExportOptions,
) -> dict[str, Any]:
    """The datasheet of a release being cut (its entries are written, it is not ready yet)."""
    dataset = release.dataset
    trajectories = Trajectory.objects.filter(task__release_entries__release=release).aggregate(
        total=Count("id"), unsafe=Count("id", filter=Q(unsafe=True))
    )
    return {
        "dataset": dataset.name,
        "version": release.version,
        **stats.as_dict(),
        "review": review_outcomes(dataset=dataset),
        "agreement": reviewer_agreement(dataset=dataset),
        # The review agent against the dataset's human decisions when the release was cut:
        # the same computation as the calibration page, the dashboard and the API.
        "calibration": audit_calibration(dataset=dataset),
        "models": model_pass_rates(release=release),
        "quality": quality_report(
            tasks=Task.objects.filter(release_entries__release=release), verified_only=False
        ),
        "trajectories": {
            "total": trajectories["total"],
            "unsafe": trajectories["unsafe"],
            "exported": counts.trajectories if options.trajectories else 0,
            "unsafe_left_out": trajectories["unsafe"] if not options.include_unsafe else 0,
        },
        "export_options": {
            "trajectories": options.trajectories,
            "include_unsafe": options.include_unsafe,
        },
    }


def release_diff(*, old: Release, new: Release) -> dict[str, Any]:
    """Tasks added, removed and changed (content digest differs) from `old` to `new`."""
    for release in (old, new):
        if release.status != Release.Status.READY:
            raise ReleaseNotComparable(f"{release} is {release.status}, not ready")

    def entries(release: Release) -> dict[str, tuple[int, str]]:
        return {
            instance_id: (revision, digest)
            for instance_id, revision, digest in release.entries.values_list(
                "instance_id", "revision", "content_sha256"
            )
        }

    before, after = entries(old), entries(new)
    changed = [
        {
            "instance_id": instance_id,
            "from_revision": before[instance_id][0],
            "to_revision": after[instance_id][0],
            "from_sha256": before[instance_id][1],
            "to_sha256": after[instance_id][1],
        }
        for instance_id in sorted(before.keys() & after.keys())
        if before[instance_id][1] != after[instance_id][1]
    ]
    return {
        "from": {"id": old.pk, "dataset": old.dataset.name, "version": old.version},
        "to": {"id": new.pk, "dataset": new.dataset.name, "version": new.version},
        "added": sorted(after.keys() - before.keys()),
        "removed": sorted(before.keys() - after.keys()),
        "changed": changed,
        "unchanged": len(before.keys() & after.keys()) - len(changed),
    }
