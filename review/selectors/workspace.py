"""The task page: everything a reviewer reads about one task, in a fixed number of queries.

What the page computes about a spec, a test or a comment (its edges, its source, where a
comment sits) travels in small dataclasses beside the model rows, never as attributes set on
them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q

from curation import runtime
from curation.access import is_curator, visible_tasks
from curation.models import (
    Finding,
    SpecDependency,
    Specification,
    SpecResult,
    Task,
    TestCase,
    Trajectory,
)
from curation.selectors.audit import current_findings
from curation.selectors.audit import findings_hidden as blind_findings_hidden
from curation.services.tasks import statement_problem
from review import graph, rendering
from review.models import Adjudication, Comment, Review
from review.selectors.leases import Lease, active_assignment, lease_for
from workers import testpatch
from workers.models import Job
from workers.patchcore import PatchParseError


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
class SpecItem:
    """A spec as its card shows it: the edges out of and into it, the tests that verify it."""

    spec: Specification
    depends_on: list[dict] = field(default_factory=list)
    used_by: list[dict] = field(default_factory=list)
    verified_by: list[TestCase] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)


@dataclass
class TestItem:
    """A test as its card shows it: the specs it verifies and its highlighted source."""

    __test__ = False  # not a pytest class, whatever its name

    test: TestCase
    spec_keys: list[str] = field(default_factory=list)
    source_lines: list[tuple[int, Any]] = field(default_factory=list)
    source_from_patch: bool = False
    comments: list[Comment] = field(default_factory=list)


@dataclass
class CommentItem:
    """A comment in the task's list, with what it is on (`S2`, a test's name, `path:line`)."""

    comment: Comment
    target: str = ""


@dataclass
class Workspace:
    task: Task
    specs: list[Specification]
    spec_items: list[SpecItem]
    edges: list[dict]
    tests: list[TestCase]
    test_items: list[TestItem]
    trajectories: list[Trajectory]
    matrix_models: list[str]
    matrix: dict[tuple[str, str], dict]
    findings: list[Finding]
    reviews: list[Review]
    comments: list[Comment]
    comment_items: list[CommentItem]
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


def task_workspace(*, task: Task, user) -> Workspace:
    """Everything the task page shows, in a fixed number of queries."""
    specs = list(task.specs.order_by("order", "id"))
    by_pk = {s.pk: s for s in specs}
    dependencies = list(
        SpecDependency.objects.filter(task=task).select_related("from_spec", "to_spec")
    )
    edges = merged_edges(dependencies)
    spec_items = [
        SpecItem(
            spec=spec,
            depends_on=[e for e in edges if e["from"] == spec.key],
            used_by=[e for e in edges if e["to"] == spec.key],
        )
        for spec in specs
    ]
    item_of_spec = {item.spec.pk: item for item in spec_items}
    item_of_key = {item.spec.key: item for item in spec_items}

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
    test_items = []
    for test in tests:
        spec_keys = sorted(spec_keys_of.get(test.pk, []))
        for key in spec_keys:
            item_of_key[key].verified_by.append(test)
        source, first, from_patch = test_code(task=task, test=test, read_base=read_base)
        test_items.append(
            TestItem(
                test=test,
                spec_keys=spec_keys,
                source_lines=(
                    list(
                        zip(
                            range(first, first + 10_000),
                            rendering.highlight_code(source),
                            strict=False,
                        )
                    )
                    if source
                    else []
                ),
                source_from_patch=from_patch,
            )
        )
    item_of_test = {item.test.pk: item for item in test_items}

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
    comments_by_line: dict[tuple[str, str, int], list[Comment]] = {}
    comment_items = []
    for comment in comments:
        target = ""
        if comment.spec_id in item_of_spec:
            item_of_spec[comment.spec_id].comments.append(comment)
            target = item_of_spec[comment.spec_id].spec.key
        elif comment.test_id in item_of_test:
            item_of_test[comment.test_id].comments.append(comment)
            target = item_of_test[comment.test_id].test.nodeid.rsplit("::", 1)[-1]
        elif comment.anchor == Comment.Anchor.PATCH_LINE:
            comments_by_line.setdefault(
                (comment.patch, comment.file_path, comment.line), []
            ).append(comment)
            target = f"{comment.file_path}:{comment.line}"
        comment_items.append(CommentItem(comment=comment, target=target))
    jobs = task_jobs(task)
    lease = lease_for(task, user)
    adjudication = open_adjudication(task=task)
    curator = is_curator(user)
    workspace = Workspace(
        task=task,
        specs=specs,
        spec_items=spec_items,
        edges=edges,
        tests=tests,
        test_items=test_items,
        trajectories=trajectories,
        matrix_models=models,
        matrix=matrix,
        findings=findings,
        reviews=reviews,
        comments=comments,
        comment_items=comment_items,
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
    workspace.can_edit = task.is_editable and (curator or lease.assignment is not None)
    workspace.can_decide = lease.assignment is not None
    workspace.can_adjudicate = curator and adjudication is not None
    workspace.findings_hidden = findings_hidden(
        task=task, user=user, reviews=reviews, holds_lease=lease.assignment is not None
    )
    return workspace


def open_adjudication(*, task: Task) -> Adjudication | None:
    """The task's disagreement waiting for a curator, if there is one."""
    return (
        Adjudication.objects.filter(task=task, resolved_at__isnull=True)
        .order_by("-opened_at")
        .first()
    )


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
    if not task.is_editable:
        return False
    return is_curator(user) or active_assignment(task=task, user=user) is not None


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
