"""Tasks and what they are made of: interdependent specifications, their interaction graph,
the tests that verify them, and each saved revision."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q

from curation.models.datasets import Dataset
from curation.models.repositories import Repository


class TaskStatus(models.TextChoices):
    DRAFT = "draft"
    VALIDATING = "validating"
    NEEDS_REVIEW = "needs_review"
    CHANGES_REQUESTED = "changes_requested"
    APPROVED = "approved"
    REJECTED = "rejected"
    RELEASED = "released"


class TaskOrigin(models.TextChoices):
    PROCEDURAL = "procedural"
    LLM = "llm"
    MANUAL = "manual"
    IMPORTED = "imported"


class TaskDifficulty(models.TextChoices):
    UNDER_15M = "<15m"
    UP_TO_1H = "15m-1h"
    UP_TO_4H = "1-4h"
    OVER_4H = ">4h"


class Task(models.Model):
    Status = TaskStatus
    # Where a task's content can still change (edited, validated again): before a decision
    # closes it. The one list the editor, the review workspace and validation go by.
    EDITABLE_STATUSES = (
        TaskStatus.DRAFT,
        TaskStatus.VALIDATING,
        TaskStatus.NEEDS_REVIEW,
        TaskStatus.CHANGES_REQUESTED,
    )

    Origin = TaskOrigin

    Difficulty = TaskDifficulty

    repository = models.ForeignKey(Repository, on_delete=models.PROTECT, related_name="tasks")
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="tasks")
    number = models.PositiveIntegerField(help_text="Sequence number within the repository.")
    instance_id = models.CharField(max_length=200, unique=True)
    base_commit = models.CharField(max_length=40)
    title = models.CharField(max_length=300)
    problem_statement = models.TextField(blank=True, default="")
    status = models.CharField(max_length=24, choices=Status.choices, default=Status.DRAFT)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.MANUAL)
    difficulty = models.CharField(max_length=8, choices=Difficulty.choices, blank=True, default="")
    difficulty_score = models.FloatField(null=True, blank=True)
    reference_patch = models.TextField(blank=True, default="")
    test_patch = models.TextField(blank=True, default="")
    revision = models.PositiveIntegerField(default=1)
    validated_revision = models.PositiveIntegerField(null=True, blank=True)
    validation = models.JSONField(
        default=dict, blank=True, help_text="Outcome of the last validation: verdict, reasons."
    )
    interaction_score = models.FloatField(null=True, blank=True)
    # A task whose answer is visible next to it (a near-identical sibling body in the same
    # module) is left out of releases unless a curator includes it.
    trivial = models.BooleanField(default=False)
    trivial_included = models.BooleanField(
        default=False, help_text="A curator includes this trivial task in releases anyway."
    )
    # Counts review slots handed out (active and completed leases); claiming is a conditional
    # update on it so that no more reviewers than the policy asks for ever hold the task.
    review_slots_taken = models.PositiveSmallIntegerField(default=0)
    synthesis_job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks"
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["repository", "number"], name="task_repo_number"),
            models.CheckConstraint(
                condition=Q(status__in=TaskStatus.values), name="task_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(origin__in=TaskOrigin.values), name="task_origin_valid"
            ),
            models.CheckConstraint(
                condition=Q(difficulty__in=["", *TaskDifficulty.values]),
                name="task_difficulty_valid",
            ),
            models.CheckConstraint(condition=Q(revision__gte=1), name="task_revision_positive"),
        ]
        indexes = [
            # The review queue filters by dataset and status and pages by id.
            models.Index(fields=["dataset", "status", "id"], name="task_queue"),
            models.Index(fields=["status", "id"], name="task_status_id"),
            models.Index(fields=["repository", "status"], name="task_repo_status"),
            models.Index(fields=["origin", "status"], name="task_origin_status"),
            models.Index(fields=["difficulty", "status"], name="task_difficulty_status"),
        ]

    def __str__(self) -> str:
        return f"{self.instance_id}: {self.title}"

    @property
    def is_validated(self) -> bool:
        return self.validated_revision == self.revision

    @property
    def is_editable(self) -> bool:
        return self.status in self.EDITABLE_STATUSES


class TaskRevision(models.Model):
    """One saved edit of a task's content: what changed, by whom, against which revision."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    summary = models.CharField(max_length=300, blank=True, default="")
    changes = models.JSONField(default=dict, help_text="field -> {before, after}")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "-revision"]
        constraints = [
            models.UniqueConstraint(fields=["task", "revision"], name="task_revision_unique")
        ]

    def __str__(self) -> str:
        return f"{self.task_id} r{self.revision}"


class SpecKind(models.TextChoices):
    FUNCTIONAL = "functional"
    INTERFACE = "interface"
    ERROR_HANDLING = "error-handling"
    SECURITY = "security"
    PERFORMANCE = "performance"
    COMPATIBILITY = "compatibility"


class Specification(models.Model):
    Kind = SpecKind

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="specs")
    key = models.CharField(max_length=16)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    statement = models.TextField()
    rationale = models.TextField(blank=True, default="")
    order = models.PositiveIntegerField(default=0)
    # Where its behaviour lives: the reference part (`path::Qualified.name`) it belongs to, and
    # whether it stands for that part (the function's contract). Empty when it spans parts.
    part = models.CharField(max_length=500, blank=True, default="")
    owns_part = models.BooleanField(default=False)
    # The tests its author says verify it; validation keeps, as `tests`, those its runs bear out.
    claimed_tests = models.JSONField(default=list, blank=True)
    # At least one FAIL_TO_PASS test verifies it (after validation). Unverified specs are shown,
    # never counted.
    verified = models.BooleanField(default=False)
    verification_note = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["task", "order", "id"]
        constraints = [
            models.UniqueConstraint(fields=["task", "key"], name="spec_task_key"),
            models.CheckConstraint(condition=Q(kind__in=SpecKind.values), name="spec_kind_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.kind})"


class SpecDependency(models.Model):
    """An edge of the interaction graph: `from_spec` depends on / constrains `to_spec`."""

    class Evidence(models.TextChoices):
        DECLARED = "declared"
        OBSERVED = "observed"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="dependencies")
    from_spec = models.ForeignKey(
        Specification, on_delete=models.CASCADE, related_name="dependencies_out"
    )
    to_spec = models.ForeignKey(
        Specification, on_delete=models.CASCADE, related_name="dependencies_in"
    )
    relation = models.CharField(max_length=32, default="depends-on")
    evidence = models.CharField(max_length=16, choices=Evidence.choices)
    detail = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["task", "id"]
        verbose_name_plural = "spec dependencies"
        constraints = [
            models.CheckConstraint(condition=~Q(from_spec=F("to_spec")), name="specdep_not_self"),
            models.CheckConstraint(
                condition=Q(evidence__in=["declared", "observed"]), name="specdep_evidence_valid"
            ),
            models.UniqueConstraint(
                fields=["from_spec", "to_spec", "evidence"], name="specdep_unique_edge"
            ),
        ]
        # A database trigger (migration 0003) also refuses edges between specs of other tasks.

    def __str__(self) -> str:
        return f"{self.from_spec_id} -> {self.to_spec_id} ({self.evidence})"

    def clean(self) -> None:
        if self.from_spec_id and self.from_spec_id == self.to_spec_id:
            raise ValidationError("A specification cannot depend on itself.")
        for spec in (self.from_spec, self.to_spec):
            if spec.task_id != self.task_id:
                raise ValidationError("Both specifications must belong to the dependency's task.")


class TestRole(models.TextChoices):
    FAIL_TO_PASS = "FAIL_TO_PASS"
    PASS_TO_PASS = "PASS_TO_PASS"
    FLAKY = "flaky"
    INVALID = "invalid"
    UNVALIDATED = "unvalidated"


class TestCase(models.Model):
    Role = TestRole

    class Intent(models.TextChoices):
        FAIL_TO_PASS = "FAIL_TO_PASS"
        PASS_TO_PASS = "PASS_TO_PASS"

    __test__ = False  # not a pytest test class

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="tests")
    nodeid = models.TextField(help_text="Exact pytest node id, byte for byte.")
    intended_role = models.CharField(max_length=16, choices=Intent.choices)
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.UNVALIDATED)
    specs = models.ManyToManyField(Specification, blank=True, related_name="tests")
    code = models.TextField(blank=True, default="", help_text="Source of the test, for review.")
    runs = models.PositiveIntegerField(default=0)
    passes_base = models.PositiveIntegerField(default=0)
    passes_reference = models.PositiveIntegerField(default=0)
    needs_parts = models.JSONField(
        default=list, blank=True, help_text="Reference parts whose removal makes this test fail."
    )
    last_message = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["task", "id"]
        constraints = [
            models.UniqueConstraint(fields=["task", "nodeid"], name="testcase_task_nodeid"),
            models.CheckConstraint(
                condition=Q(role__in=TestRole.values), name="testcase_role_valid"
            ),
        ]
        indexes = [models.Index(fields=["task", "role"], name="testcase_task_role")]

    def __str__(self) -> str:
        return self.nodeid
