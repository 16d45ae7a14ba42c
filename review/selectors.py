"""Reads of the reviewer's workspace: the queue, the task page, trajectories, the dashboard.

Every function takes the user and starts from `visible_tasks`, so what a page can list is what
the user may see. Query counts are fixed per page (no per-row queries): the benchmark in
bench/pages.py holds them to at most 20 whatever the size of the data.
"""

from __future__ import annotations

import base64
import datetime as dt
import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.cache import cache
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce, TruncDate
from django.urls import reverse
from django.utils import timezone

from curation import runtime
from curation.access import is_curator, visible_datasets, visible_tasks
from curation.models import (
    Dataset,
    Finding,
    Release,
    Repository,
    SpecDependency,
    Specification,
    SpecResult,
    Task,
    TestCase,
    Trajectory,
    TrajectoryStep,
)
from curation.selectors.audit import audit_calibration, blind_task_ids, current_findings
from curation.selectors.audit import findings_hidden as blind_findings_hidden
from curation.selectors.evaluations import pass_rates_by_kind
from curation.services.tasks import statement_problem
from review import graph, rendering
from review.models import Adjudication, Comment, Review, ReviewAssignment
from workers import testpatch
from workers.models import Job
from workers.patchcore import PatchParseError

PAGE_SIZE = 50
STEP_PAGE = 20
OBSERVATION_FOLD_CHARS = 1200
OBSERVATION_FOLD_LINES = 18
STEP_TEXT_MAX = 200_000

# --- the queue -------------------------------------------------------------------------------

SORTS = {
    "oldest": ("id", False),
    "newest": ("id", True),
    "updated": ("updated_at", True),
}


@dataclass
class QueueFilters:
    dataset: str = ""
    status: str = ""
    origin: str = ""
    repository: str = ""
    findings: str = ""  # "yes" | "no" | ""
    difficulty: str = ""
    q: str = ""
    sort: str = "oldest"
    cursor: str = ""

    @classmethod
    def from_query(cls, params) -> QueueFilters:
        values = {name: (params.get(name) or "").strip()[:200] for name in cls.__dataclass_fields__}
        filters = cls(**values)
        if filters.sort not in SORTS:
            filters.sort = "oldest"
        if filters.status and filters.status not in Task.Status.values:
            filters.status = ""
        if filters.origin and filters.origin not in Task.Origin.values:
            filters.origin = ""
        if filters.difficulty and filters.difficulty not in [*Task.Difficulty.values, "none"]:
            filters.difficulty = ""
        if filters.findings not in ("", "yes", "no"):
            filters.findings = ""
        return filters

    def query(self, **override) -> str:
        from urllib.parse import urlencode

        values = {k: getattr(self, k) for k in self.__dataclass_fields__}
        values.update(override)
        return urlencode(
            {k: v for k, v in values.items() if v and not (k == "sort" and v == "oldest")}
        )

    @property
    def active(self) -> bool:
        return any(
            getattr(self, k)
            for k in ("dataset", "status", "origin", "repository", "findings", "difficulty", "q")
        )


class BadCursor(ValueError):
    pass


def _encode_cursor(value: Any, pk: int) -> str:
    if isinstance(value, dt.datetime):
        value = value.isoformat()
    raw = json.dumps([value, pk], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(cursor: str, sort: str) -> tuple[Any, int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value, pk = json.loads(raw)
        pk = int(pk)
        if SORTS[sort][0] == "updated_at":
            value = dt.datetime.fromisoformat(value)
        elif SORTS[sort][0] == "id":
            value = int(value)
    except (ValueError, TypeError, json.JSONDecodeError) as exc:
        raise BadCursor("This page link is not valid any more; start from the first page.") from exc
    return value, pk


@dataclass
class QueuePage:
    rows: list[Task]
    next_cursor: str
    filters: QueueFilters


def _counted(model, **filters):
    return Coalesce(
        Subquery(
            model.objects.filter(**filters)
            .order_by()
            .values("task_id")
            .annotate(n=Count("id"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        Value(0),
    )


def queue_page(*, user, filters: QueueFilters, limit: int = PAGE_SIZE) -> QueuePage:
    """One page of tasks the user can see, filtered, sorted, and cut by a keyset cursor."""
    tasks = visible_tasks(user).select_related("repository", "dataset")
    if filters.dataset:
        tasks = tasks.filter(dataset__name=filters.dataset)
    if filters.status:
        tasks = tasks.filter(status=filters.status)
    if filters.origin:
        tasks = tasks.filter(origin=filters.origin)
    if filters.repository:
        tasks = tasks.filter(repository__name=filters.repository)
    if filters.difficulty:
        tasks = tasks.filter(difficulty="" if filters.difficulty == "none" else filters.difficulty)
    if filters.findings:
        has = Exists(Finding.objects.filter(task=OuterRef("pk"), dismissed=False, superseded=False))
        tasks = tasks.filter(has if filters.findings == "yes" else ~has)
        if not is_curator(user):
            # Nor may the filter tell a reviewer whether a blind task has findings.
            tasks = tasks.exclude(pk__in=blind_task_ids(user=user))
    if filters.q:
        term = filters.q
        if term.isascii() and term.isdigit():
            tasks = tasks.filter(Q(pk=int(term)) | Q(instance_id__icontains=term))
        else:
            tasks = tasks.filter(Q(title__icontains=term) | Q(instance_id__icontains=term))
    column, descending = SORTS[filters.sort]
    if filters.cursor:
        value, pk = _decode_cursor(filters.cursor, filters.sort)
        if column == "id":
            tasks = tasks.filter(pk__lt=pk) if descending else tasks.filter(pk__gt=pk)
        else:
            op = "lt" if descending else "gt"
            tasks = tasks.filter(
                Q(**{f"{column}__{op}": value}) | Q(**{column: value, f"pk__{op}": pk})
            )
    order = [f"-{column}", "-id"] if descending else [column, "id"]
    if column == "id":
        order = order[:1]
    tasks = tasks.order_by(*order).annotate(
        # Unverified specs (no FAIL_TO_PASS test verifies them) are never counted.
        spec_count=_counted(Specification, task=OuterRef("pk"), verified=True),
        test_count=_counted(TestCase, task=OuterRef("pk")),
        finding_count=_counted(Finding, task=OuterRef("pk"), dismissed=False, superseded=False),
        review_count=_counted(Review, task=OuterRef("pk"), task_revision=OuterRef("revision")),
    )
    rows = list(tasks[: limit + 1])
    next_cursor = ""
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        next_cursor = _encode_cursor(getattr(last, column), last.pk)
    if not is_curator(user):
        for row in rows:  # the blind review sample: not even how many findings there are
            row.findings_hidden = row.dataset.blind_for(row.instance_id)
    return QueuePage(rows=rows, next_cursor=next_cursor, filters=filters)


def queue_choices(*, user) -> dict[str, Any]:
    return {
        "datasets": list(visible_datasets(user).values_list("name", flat=True)),
        "statuses": Task.Status.choices,
        "origins": Task.Origin.choices,
        "difficulties": Task.Difficulty.choices,
    }


# --- the task page ---------------------------------------------------------------------------


def test_code(*, task: Task, test: TestCase, read_base=None) -> tuple[str, int, bool]:
    """A test's source and first line as the hidden test patch leaves its file (what runs and
    ships), and True; or the stored copy, line 1 and False when the test is not found there."""
    read_base = read_base or runtime.base_reader(task.repository, task.base_commit)
    try:
        source, first = testpatch.source_of_test(task.test_patch, test.nodeid, read_base)
    except PatchParseError:
        source, first = "", 0
    if source:
        return source, first, True
    return test.code, 1, False


@dataclass
class Lease:
    assignment: ReviewAssignment | None
    active_count: int
    required: int

    @property
    def slots_left(self) -> int:
        return max(0, self.required - self.slots_taken)

    slots_taken: int = 0

    @property
    def heartbeat_seconds(self) -> int:
        from django.conf import settings

        return int(getattr(settings, "REVIEW_HEARTBEAT_SECONDS", 30))


@dataclass
class Workspace:
    task: Task
    specs: list[Specification]
    edges: list[dict]
    tests: list[TestCase]
    trajectories: list[Trajectory]
    matrix_models: list[str]
    matrix: dict[tuple[str, str], dict]
    findings: list[Finding]
    reviews: list[Review]
    comments: list[Comment]
    jobs: list[Job]
    lease: Lease
    adjudication: Adjudication | None
    graph_svg: Any
    statement_html: Any
    reference_diff: rendering.Diff
    test_diff: rendering.Diff
    comments_by_line: dict[tuple[str, str, int], list[Comment]] = field(default_factory=dict)
    can_edit: bool = False
    can_decide: bool = False
    can_adjudicate: bool = False
    reviews_current: int = 0
    findings_hidden: bool = False
    statement_problem: str = ""  # why this statement can never be approved, if it cannot
    spec_matrix: list = field(default_factory=list)  # the graph as rows of cells
    graph_dense: bool = False  # too many edges to follow as lines: the matrix comes first

    @property
    def specs_verified(self) -> int:
        """Specs a FAIL_TO_PASS test verifies: the only ones that count."""
        return sum(1 for spec in self.specs if spec.verified)

    @property
    def specs_unverified(self) -> int:
        return len(self.specs) - self.specs_verified

    @property
    def approve_enabled(self) -> bool:
        return (
            self.task.is_validated
            and self.task.status == Task.Status.NEEDS_REVIEW
            and not self.statement_problem
        )

    @property
    def running_jobs(self) -> list[Job]:
        return [j for j in self.jobs if not j.is_finished]


def merged_edges(dependencies) -> list[dict]:
    merged: dict[tuple[str, str], dict] = {}
    for dep in dependencies:
        key = (dep.from_spec.key, dep.to_spec.key)
        edge = merged.setdefault(
            key,
            {"from": key[0], "to": key[1], "declared": False, "observed": False, "detail": ""},
        )
        edge[dep.evidence] = True
        if dep.detail and not edge["detail"]:
            edge["detail"] = dep.detail
        if dep.evidence == "declared":
            edge["relation"] = dep.relation
    return list(merged.values())


def task_jobs(task: Task, limit: int = 5) -> list[Job]:
    return list(Job.objects.filter(Job.target_filter(task)).order_by("-id")[:limit])


def lease_for(task: Task, user) -> Lease:
    active = list(ReviewAssignment.objects.filter(task=task, status=ReviewAssignment.Status.ACTIVE))
    mine = next((a for a in active if a.reviewer_id == user.pk), None)
    return Lease(
        assignment=mine,
        active_count=len(active),
        required=task.dataset.reviews_required,
        slots_taken=task.review_slots_taken,
    )


def task_workspace(*, task: Task, user) -> Workspace:
    """Everything the task page shows, in a fixed number of queries."""
    specs = list(task.specs.order_by("order", "id"))
    by_pk = {s.pk: s for s in specs}
    dependencies = list(
        SpecDependency.objects.filter(task=task).select_related("from_spec", "to_spec")
    )
    edges = merged_edges(dependencies)
    for spec in specs:
        spec.depends_on = [e for e in edges if e["from"] == spec.key]
        spec.used_by = [e for e in edges if e["to"] == spec.key]
        spec.declared_keys = sorted(e["to"] for e in spec.depends_on if e["declared"])
        spec.verified_by = []
        spec.comment_list = []

    tests = list(task.tests.order_by("role", "id"))
    links = TestCase.specs.through.objects.filter(testcase__task=task).values_list(
        "testcase_id", "specification_id"
    )
    spec_keys_of: dict[int, list[str]] = {}
    for test_id, spec_id in links:
        spec = by_pk.get(spec_id)
        if spec is not None:
            spec_keys_of.setdefault(test_id, []).append(spec.key)
    read_base = runtime.base_reader(task.repository, task.base_commit)
    by_key = {s.key: s for s in specs}
    for test in tests:
        test.spec_keys = sorted(spec_keys_of.get(test.pk, []))
        for key in test.spec_keys:
            by_key[key].verified_by.append(test)
        source, first, test.source_from_patch = test_code(task=task, test=test, read_base=read_base)
        test.source = source
        test.source_lines = (
            list(zip(range(first, first + 10_000), rendering.highlight_code(source), strict=False))
            if source
            else []
        )
        test.comment_list = []

    trajectories = list(
        Trajectory.objects.filter(task=task)
        .select_related("evaluation")
        .order_by("model_name", "id")
        .defer("final_patch", "metadata")
    )
    rows = (
        SpecResult.objects.filter(spec__task=task)
        .values("evaluation__trajectory__model_name", "spec_id")
        .annotate(total=Count("id"), satisfied=Count("id", filter=Q(satisfied=True)))
    )
    matrix: dict[tuple[str, str], dict] = {}
    for row in rows:
        spec = by_pk.get(row["spec_id"])
        if spec is None:
            continue
        total, satisfied = row["total"], row["satisfied"]
        matrix[(row["evaluation__trajectory__model_name"], spec.key)] = {
            "total": total,
            "satisfied": satisfied,
            "state": "satisfied"
            if satisfied == total
            else "not-satisfied"
            if not satisfied
            else "partial",
        }
    models = sorted({m for m, _ in matrix} | {t.model_name for t in trajectories})

    findings = current_findings(task=task)
    reviews = list(task.reviews.select_related("reviewer").order_by("-created_at"))
    comments = list(task.comments.select_related("author").order_by("created_at"))
    by_test = {t.pk: t for t in tests}
    comments_by_line: dict[tuple[str, str, int], list[Comment]] = {}
    for comment in comments:
        if comment.spec_id in by_pk:
            by_pk[comment.spec_id].comment_list.append(comment)
            comment.target = by_pk[comment.spec_id].key
        elif comment.test_id in by_test:
            by_test[comment.test_id].comment_list.append(comment)
            comment.target = by_test[comment.test_id].nodeid.rsplit("::", 1)[-1]
        elif comment.anchor == Comment.Anchor.PATCH_LINE:
            comments_by_line.setdefault(
                (comment.patch, comment.file_path, comment.line), []
            ).append(comment)
            comment.target = f"{comment.file_path}:{comment.line}"
        else:
            comment.target = ""
    jobs = task_jobs(task)
    lease = lease_for(task, user)
    adjudication = (
        Adjudication.objects.filter(task=task, resolved_at__isnull=True)
        .order_by("-opened_at")
        .first()
    )
    curator = is_curator(user)
    workspace = Workspace(
        task=task,
        specs=specs,
        edges=edges,
        tests=tests,
        trajectories=trajectories,
        matrix_models=models,
        matrix=matrix,
        findings=findings,
        reviews=reviews,
        comments=comments,
        jobs=jobs,
        lease=lease,
        adjudication=adjudication,
        graph_svg=graph.dependency_svg(specs, edges),
        statement_html=rendering.markdown_html(task.problem_statement),
        reference_diff=rendering.parse_diff(task.reference_patch),
        test_diff=rendering.parse_diff(task.test_patch),
        comments_by_line=comments_by_line,
        reviews_current=sum(
            1 for r in reviews if r.task_revision == task.revision and not r.is_adjudication
        ),
        statement_problem=statement_problem(task.problem_statement),
        spec_matrix=graph.adjacency(specs, edges),
        graph_dense=graph.is_dense(specs, edges),
    )
    editable = task.status in (
        Task.Status.DRAFT,
        Task.Status.VALIDATING,
        Task.Status.NEEDS_REVIEW,
        Task.Status.CHANGES_REQUESTED,
    )
    workspace.can_edit = editable and (curator or lease.assignment is not None)
    workspace.can_decide = lease.assignment is not None
    workspace.can_adjudicate = curator and adjudication is not None
    workspace.findings_hidden = findings_hidden(
        task=task, user=user, reviews=reviews, holds_lease=lease.assignment is not None
    )
    return workspace


def findings_hidden(
    *, task: Task, user, reviews: list[Review] | None = None, holds_lease: bool | None = None
) -> bool:
    """The blind review sample's rule (curation.selectors.audit.findings_hidden), from what
    the task page already loaded when it did."""
    decided = None
    if reviews is not None:
        decided = any(r.reviewer_id == user.pk and not r.is_adjudication for r in reviews)
    return blind_findings_hidden(task=task, user=user, decided=decided, holds_lease=holds_lease)


def can_edit(*, task: Task, user) -> bool:
    editable = task.status in (
        Task.Status.DRAFT,
        Task.Status.VALIDATING,
        Task.Status.NEEDS_REVIEW,
        Task.Status.CHANGES_REQUESTED,
    )
    if not editable:
        return False
    return (
        is_curator(user)
        or ReviewAssignment.objects.filter(
            task=task, reviewer=user, status=ReviewAssignment.Status.ACTIVE
        ).exists()
    )


def neighbours(*, task: Task, user) -> tuple[int | None, int | None]:
    """Previous and next task in the user's queue order (by id), for j/k across tasks."""
    tasks = visible_tasks(user)
    prev_id = tasks.filter(pk__lt=task.pk).order_by("-pk").values_list("pk", flat=True).first()
    next_id = tasks.filter(pk__gt=task.pk).order_by("pk").values_list("pk", flat=True).first()
    return prev_id, next_id


def comment_thread(*, comment: Comment) -> list[Comment]:
    """The comments on the same spot as `comment` (its spec, test, or patch line), oldest first."""
    return list(
        comment.task.comments.filter(
            anchor=comment.anchor,
            spec=comment.spec,
            test=comment.test,
            patch=comment.patch,
            file_path=comment.file_path,
            line=comment.line,
        )
        .select_related("author")
        .order_by("created_at")
    )


def task_history(*, task: Task) -> list[dict]:
    """Revisions (newest first) with their field diffs, interleaved with reviews."""
    events: list[dict] = []
    for rev in task.revisions.select_related("author").order_by("-revision")[:100]:
        changes = []
        for name, change in (rev.changes or {}).items():
            before, after = change.get("before"), change.get("after")
            if isinstance(before, str) and isinstance(after, str):
                changes.append({"name": name, "diff": text_diff(before, after)})
            else:
                changes.append({"name": name, "before": before, "after": after})
        events.append({"kind": "revision", "at": rev.created_at, "rev": rev, "changes": changes})
    for review in task.reviews.select_related("reviewer").order_by("-created_at")[:100]:
        events.append({"kind": "review", "at": review.created_at, "review": review})
    events.append({"kind": "created", "at": task.created_at})
    events.sort(key=lambda e: e["at"], reverse=True)
    return events


def text_diff(before: str, after: str) -> list[tuple[str, str]]:
    """A field's change as (kind, line) pairs of a unified diff, for the small diffs of history."""
    lines = []
    for line in list(
        difflib.unified_diff(before.splitlines(), after.splitlines(), n=2, lineterm="")
    )[2:]:
        kind = (
            "add"
            if line.startswith("+")
            else "del"
            if line.startswith("-")
            else ("hunk" if line.startswith("@@") else "ctx")
        )
        lines.append((kind, line))
    return lines[:400]


# --- trajectories ----------------------------------------------------------------------------


@dataclass
class StepView:
    step: TrajectoryStep
    fields: list[dict]


def _field_view(name: str, text: str) -> dict:
    size = len(text)
    lines = text.count("\n") + 1
    cut = size > STEP_TEXT_MAX
    shown = text[:STEP_TEXT_MAX] if cut else text
    return {
        "name": name,
        "text": shown,
        "size": size,
        "lines": lines,
        "cut": cut,
        "folded": size > OBSERVATION_FOLD_CHARS or lines > OBSERVATION_FOLD_LINES,
        "preview": "\n".join(shown[:OBSERVATION_FOLD_CHARS].split("\n")[:6]),
    }


def trajectory_steps(*, trajectory: Trajectory, after: int = -1, limit: int = STEP_PAGE):
    """One page of steps after index `after` (keyset), and the index to continue from."""
    steps = list(
        TrajectoryStep.objects.filter(trajectory=trajectory, index__gt=after).order_by("index")[
            : limit + 1
        ]
    )
    more = len(steps) > limit
    steps = steps[:limit]
    views = []
    for step in steps:
        fields = [
            _field_view(name, getattr(step, name))
            for name in ("thought", "content", "action", "observation")
            if getattr(step, name)
        ]
        views.append(StepView(step=step, fields=fields))
    return views, (steps[-1].index if more and steps else None)


def trajectory_detail(*, trajectory: Trajectory) -> dict[str, Any]:
    evaluation = getattr(trajectory, "evaluation", None)
    spec_results = []
    if evaluation is not None:
        spec_results = list(
            evaluation.spec_results.select_related("spec").order_by("spec__order", "spec__id")
        )
    return {
        "evaluation": evaluation,
        "spec_results": spec_results,
        "final_diff": rendering.parse_diff(trajectory.final_patch),
        "findings": list(trajectory.findings.filter(dismissed=False, superseded=False)),
    }


def visible_trajectory(*, user, trajectory_id) -> Trajectory:
    from django.http import Http404

    try:
        pk = int(trajectory_id)
    except (TypeError, ValueError):
        raise Http404("No such trajectory.") from None
    trajectory = (
        Trajectory.objects.filter(pk=pk, task__in=visible_tasks(user))
        .select_related("task", "task__dataset", "task__repository", "evaluation")
        .first()
    )
    if trajectory is None:
        raise Http404("No such trajectory.")
    return trajectory


# --- dashboard -------------------------------------------------------------------------------


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


def running_jobs(*, user, limit: int = 8) -> list[Job]:
    """Queued and running jobs the user may know about, each with `subject` (what it works on,
    named) and `subject_url`: tasks and trajectories of visible datasets for everyone,
    synthesis into a visible dataset too; repositories, datasets and releases for curators."""
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
        job.task = None
        job.subject, job.subject_url = "", ""
        if kind is Task and target in tasks:
            job.task = tasks[target]
            job.subject = tasks[target].instance_id
            job.subject_url = reverse("review-task", args=[target])
        elif kind is Trajectory and target in trajectories:
            trajectory = trajectories[target]
            job.subject = f"{trajectory.model_name} on {trajectory.task.instance_id}"
            job.subject_url = reverse("review-trajectory", args=[target])
        elif kind is Repository and target in repositories:
            # Synthesis fills a dataset: its reviewers see the tasks being made and validated.
            into = datasets_seen.get((job.params or {}).get("dataset_id"))
            if not (curator or into):
                continue
            job.subject = repositories[target] + (f" → {into}" if into else "")
        elif kind is Release and target in releases:
            job.subject = f"{releases[target].dataset.name} {releases[target].version}"
        elif kind is Dataset and target in datasets_seen and curator:
            job.subject = datasets_seen[target]
        elif kind is None and curator:
            job.subject = ""
        else:
            continue
        shown.append(job)
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
