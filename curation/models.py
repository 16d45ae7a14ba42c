"""The domain: repositories, tasks made of interdependent specifications, their tests,
trajectories and evaluations, review-agent findings, datasets and immutable releases."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models
from django.db.models import F, Q


class RepositoryStatus(models.TextChoices):
    """How far a repository got. The first two are its import job's; `failed` says why in
    `status_reason`, whichever stage failed; the later stages are set by whatever checks them
    (environment build and test collection, synthesis)."""

    QUEUED = "queued", "queued"
    IMPORTING = "importing", "importing"
    IMPORTED = "imported", "imported"
    ENVIRONMENT_OK = "environment_ok", "environment ok"
    TESTS_COLLECTED = "tests_collected", "tests collected"
    TASKS_VERIFIED = "tasks_verified", "tasks verified"
    FAILED = "failed", "failed"


class Repository(models.Model):
    Status = RepositoryStatus

    class SourceKind(models.TextChoices):
        GIT = "git"
        PATH = "path"
        ARCHIVE = "archive"

    name = models.SlugField(max_length=100, unique=True)
    source_kind = models.CharField(max_length=16, choices=SourceKind.choices)
    source = models.TextField(help_text="Where it came from: git URL, local path or archive name.")
    # What makes two imports the same: a normalised URL, a resolved path or an archive's
    # sha256, with the commit asked for (blank: the default branch). Blank for old rows.
    source_key = models.CharField(max_length=500, blank=True, default="")
    requested_commit = models.CharField(max_length=200, blank=True, default="")
    git_path = models.CharField(
        max_length=500, blank=True, help_text="Bare repository, relative to storage."
    )
    default_commit = models.CharField(max_length=40, blank=True)
    status = models.CharField(
        max_length=16, choices=RepositoryStatus.choices, default=RepositoryStatus.IMPORTED
    )
    status_reason = models.TextField(
        blank=True, default="", help_text="Why it failed, or a warning (e.g. no test files)."
    )
    status_updated_at = models.DateTimeField(null=True, blank=True)
    import_job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    test_files = models.PositiveIntegerField(null=True, blank=True)
    tests_collected = models.PositiveIntegerField(null=True, blank=True)
    tasks_verified = models.PositiveIntegerField(null=True, blank=True)
    language = models.CharField(max_length=32, default="python")
    setup_command = models.CharField(max_length=500, default="pip install .")
    test_command = models.CharField(max_length=500, default="pytest")
    environment = models.JSONField(default=dict, blank=True)
    upstream = models.CharField(
        max_length=200,
        blank=True,
        default="",
        help_text="owner/name of the upstream project, as SWE-bench's `repo` names it. Taken "
        "from a GitHub/GitLab-like import URL; blank means specloom/<name>.",
    )
    environment_version = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="The `version` its SWE-bench records carry. Blank: a digest of the "
        "environment spec (env-...).",
    )
    layout = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name_plural = "repositories"
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RepositoryStatus.values), name="repository_status_valid"
            ),
            # One repository per source and commit asked for: importing it again finds it.
            models.UniqueConstraint(
                fields=["source_key", "requested_commit"],
                condition=~Q(source_key=""),
                name="repository_source_commit",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def git_dir(self):
        return settings.SPECLOOM_REPO_ROOT.parent / self.git_path

    @property
    def is_imported(self) -> bool:
        """Its files are stored: it has a bare repository and a commit to work from."""
        return bool(self.git_path and self.default_commit)


class Dataset(models.Model):
    class Consensus(models.TextChoices):
        UNANIMOUS = "unanimous"
        MAJORITY = "majority"

    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    reviews_required = models.PositiveSmallIntegerField(default=1)
    consensus = models.CharField(
        max_length=16, choices=Consensus.choices, default=Consensus.UNANIMOUS
    )
    validation_reruns = models.PositiveSmallIntegerField(default=3)
    # The share of tasks (percent) whose reviewers decide without seeing the review agent's
    # findings: their decisions measure the agent against humans it did not anchor.
    blind_review_share = models.PositiveSmallIntegerField(
        default=0,
        help_text="Percent of tasks reviewed blind: findings stay hidden until the reviewer "
        "decides. The sample is a hash of the dataset and the instance id (reproducible).",
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="datasets",
        help_text="Reviewers who can see and review this dataset's tasks.",
    )
    webhook_url = models.URLField(blank=True, default="")
    webhook_secret = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(reviews_required__gte=1), name="dataset_reviews_required_positive"
            ),
            models.CheckConstraint(
                condition=Q(validation_reruns__gte=1), name="dataset_reruns_positive"
            ),
            models.CheckConstraint(
                condition=Q(blind_review_share__lte=100), name="dataset_blind_share_percent"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def blind_for(self, instance_id: str) -> bool:
        """Whether the task is in the blind review sample (see `in_blind_sample`)."""
        return in_blind_sample(
            dataset=self.name, share=self.blind_review_share, instance_id=instance_id
        )


def in_blind_sample(*, dataset: str, share: int, instance_id: str) -> bool:
    """The same answer on every machine and every run: a hash of the dataset's name and the
    task's instance id, in one of 100 buckets, below the share (percent)."""
    if not share:
        return False
    digest = hashlib.sha256(f"{dataset}\n{instance_id}".encode()).hexdigest()
    return int(digest[:8], 16) % 100 < share


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


class Trajectory(models.Model):
    class Resolved(models.TextChoices):
        FULL = "full"
        PARTIAL = "partial"
        NONE = "none"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="trajectories")
    model_name = models.CharField(max_length=200, db_index=True)
    scaffold = models.CharField(max_length=100, blank=True, default="")
    source_format = models.CharField(max_length=32)
    content_sha256 = models.CharField(max_length=64)
    final_patch = models.TextField(blank=True, default="")
    exit_status = models.CharField(max_length=100, blank=True, default="")
    tokens_in = models.BigIntegerField(null=True, blank=True)
    tokens_out = models.BigIntegerField(null=True, blank=True)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, null=True, blank=True)
    step_count = models.PositiveIntegerField(default=0)
    unsafe = models.BooleanField(default=False, help_text="Flagged by the review agent.")
    metadata = models.JSONField(default=dict, blank=True)
    imported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "model_name", "id"]
        verbose_name_plural = "trajectories"
        constraints = [
            # A trajectory is its content and the model said to have run it: the same file
            # imported under another model's name is another trajectory.
            models.UniqueConstraint(
                fields=["task", "model_name", "content_sha256"],
                name="trajectory_task_model_content",
            )
        ]

    def __str__(self) -> str:
        return f"{self.model_name} on {self.task_id}"


class TrajectoryStep(models.Model):
    trajectory = models.ForeignKey(Trajectory, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    role = models.CharField(max_length=16, blank=True, default="")
    kind = models.CharField(max_length=16, blank=True, default="")
    content = models.TextField(blank=True, default="")
    action = models.TextField(blank=True, default="")
    observation = models.TextField(blank=True, default="")
    thought = models.TextField(blank=True, default="")
    tool = models.CharField(max_length=100, blank=True, default="")
    timestamp = models.CharField(max_length=64, blank=True, default="")
    extra = models.JSONField(default=dict, blank=True)

    # What a step says, in the order the importer, the API and the exports list it.
    CONTENT_FIELDS = (
        "index",
        "role",
        "kind",
        "content",
        "action",
        "observation",
        "thought",
        "tool",
        "timestamp",
    )

    class Meta:
        ordering = ["trajectory", "index"]
        constraints = [
            models.UniqueConstraint(fields=["trajectory", "index"], name="step_trajectory_index")
        ]

    def __str__(self) -> str:
        return f"step {self.index} of {self.trajectory_id}"


class Evaluation(models.Model):
    """A trajectory's final patch run against its task's tests (one per trajectory, replaced)."""

    trajectory = models.OneToOneField(
        Trajectory, on_delete=models.CASCADE, related_name="evaluation"
    )
    task_revision = models.PositiveIntegerField()
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    patch_applied = models.BooleanField(default=False)
    patch_error = models.TextField(blank=True, default="")
    resolved = models.CharField(max_length=8, choices=Trajectory.Resolved.choices)
    test_outcomes = models.JSONField(default=dict, blank=True)
    touched_test_files = models.JSONField(default=list, blank=True)
    flaky_tests = models.JSONField(default=list, blank=True)
    run_seconds = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(resolved__in=["full", "partial", "none"]), name="evaluation_resolved"
            )
        ]

    def __str__(self) -> str:
        return f"evaluation of {self.trajectory_id}: {self.resolved}"


class SpecResult(models.Model):
    """Whether one evaluation satisfied one spec (all of its tests passed)."""

    evaluation = models.ForeignKey(
        Evaluation, on_delete=models.CASCADE, related_name="spec_results"
    )
    spec = models.ForeignKey(Specification, on_delete=models.CASCADE, related_name="results")
    satisfied = models.BooleanField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "spec"], name="specresult_unique")
        ]

    def __str__(self) -> str:
        return f"{self.spec_id}: {'satisfied' if self.satisfied else 'not satisfied'}"


class Audit(models.Model):
    """One run of the review agent over one revision of a task and the trajectories it had.

    Its findings are a set: a later audit adds a new set and marks the earlier one superseded,
    so what the agent said about each revision, and when, is kept for calibration.
    """

    class LLMStatus(models.TextChoices):
        NOT_RUN = ""
        OK = "ok"
        FAILED = "failed"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="audits")
    task_revision = models.PositiveIntegerField()
    trajectory_count = models.PositiveIntegerField(default=0)
    trajectory_digest = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="sha256 of the trajectories and their "
        "evaluations the audit saw; empty for audits recorded before digests existed.",
    )
    inputs_digest = models.CharField(
        max_length=64,
        blank=True,
        default="",
        help_text="sha256 of everything the audit read: "
        "an audit with the same digest as the last one has nothing new to say.",
    )
    llm_status = models.CharField(
        max_length=8, choices=LLMStatus.choices, blank=True, default=LLMStatus.NOT_RUN
    )
    llm_model = models.CharField(max_length=200, blank=True, default="")
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "created_at", "id"]
        indexes = [
            models.Index(fields=["task", "task_revision", "created_at"], name="audit_task_revision")
        ]

    def __str__(self) -> str:
        return f"audit {self.pk} of {self.task_id} r{self.task_revision}"


class Finding(models.Model):
    class Kind(models.TextChoices):
        WEAK_TEST = "weak_test"
        TAMPERING = "tampering"
        SPECIAL_CASED_LITERAL = "special_cased_literal"
        ALL_MODELS_FAIL_ONE_TEST = "all_models_fail_one_test"
        UNTESTED_SPEC = "untested_spec"
        UNLINKED_TEST = "unlinked_test"
        FLAKY = "flaky"
        REFERENCE_FAILS = "reference_fails"
        UNSAFE_ACTION = "unsafe_action"
        INVALID_TEST = "invalid_test"
        LEAKED_SOLUTION = "leaked_solution"
        LLM = "llm"

    class Severity(models.TextChoices):
        INFO = "info"
        LOW = "low"
        MEDIUM = "medium"
        HIGH = "high"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="findings")
    trajectory = models.ForeignKey(
        Trajectory, null=True, blank=True, on_delete=models.CASCADE, related_name="findings"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    severity = models.CharField(max_length=8, choices=Severity.choices, default=Severity.MEDIUM)
    message = models.TextField()
    evidence = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=200, default="heuristic")
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    dismissed = models.BooleanField(default=False)
    # The revision the finding was made on, and the audit (set) it belongs to; validation
    # findings have a revision and no audit. A superseded finding is history: a later audit or
    # validation replaced it, and only calibration still reads it.
    task_revision = models.PositiveIntegerField(null=True, blank=True)
    audit = models.ForeignKey(
        Audit, null=True, blank=True, on_delete=models.CASCADE, related_name="findings"
    )
    superseded = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["task", "-severity", "id"]
        indexes = [models.Index(fields=["task", "dismissed"], name="finding_task_open")]

    def __str__(self) -> str:
        return f"{self.kind} ({self.severity}) on {self.task_id}"


class ReleaseImmutable(IntegrityError):
    """Something tried to change or delete a ready release (or its entries).

    An IntegrityError with the database trigger's prefix: callers see the same error whether
    the application refused first or the trigger of migration 0003 did.
    """

    def __init__(self, message: str = "a ready release never changes; cut a new version instead"):
        super().__init__(f"release_immutable: {message}")


class ReleaseQuerySet(models.QuerySet):
    # Bulk writes skip save() and delete(); the database triggers of migration 0003 are the last
    # word, these checks give the same answer earlier, with a clear error, on every database.
    def update(self, **kwargs):
        if self.filter(status="ready").exists():
            raise ReleaseImmutable()
        return super().update(**kwargs)

    def delete(self):
        if self.filter(status="ready").exists():
            raise ReleaseImmutable()
        return super().delete()


class ReleaseTaskQuerySet(models.QuerySet):
    def update(self, **kwargs):
        if self.filter(release__status="ready").exists():
            raise ReleaseImmutable()
        return super().update(**kwargs)

    def delete(self):
        if self.filter(release__status="ready").exists():
            raise ReleaseImmutable()
        return super().delete()


class Release(models.Model):
    """A frozen, checksummed version of a dataset. Never changes once cut."""

    class Status(models.TextChoices):
        BUILDING = "building"
        READY = "ready"
        FAILED = "failed"

    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="releases")
    version = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.BUILDING)
    manifest = models.JSONField(default=list, blank=True)
    datasheet = models.JSONField(default=dict, blank=True)
    files = models.JSONField(default=dict, blank=True, help_text="format -> {path, sha256, bytes}")
    manifest_sha256 = models.CharField(max_length=64, blank=True, default="")
    job = models.ForeignKey(
        "workers.Job", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    cut_at = models.DateTimeField(null=True, blank=True)

    objects = ReleaseQuerySet.as_manager()

    class Meta:
        ordering = ["dataset", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "version"], name="release_dataset_version"),
            models.CheckConstraint(
                condition=Q(status__in=["building", "ready", "failed"]), name="release_status"
            ),
        ]
        # A database trigger (migration 0003) refuses any UPDATE or DELETE of a ready release.

    def __str__(self) -> str:
        return f"{self.dataset.name} {self.version}"

    def save(self, *args, **kwargs):
        if self._stored_status() == self.Status.READY:
            raise ReleaseImmutable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self._stored_status() == self.Status.READY:
            raise ReleaseImmutable()
        return super().delete(*args, **kwargs)

    def _stored_status(self) -> str | None:
        if self.pk is None:
            return None
        return Release.objects.filter(pk=self.pk).values_list("status", flat=True).first()


class ReleaseTask(models.Model):
    release = models.ForeignKey(Release, on_delete=models.PROTECT, related_name="entries")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="release_entries")
    instance_id = models.CharField(max_length=200)
    revision = models.PositiveIntegerField()
    content_sha256 = models.CharField(max_length=64)

    objects = ReleaseTaskQuerySet.as_manager()

    class Meta:
        ordering = ["release", "instance_id"]
        constraints = [
            models.UniqueConstraint(fields=["release", "task"], name="releasetask_unique")
        ]

    def __str__(self) -> str:
        return f"{self.instance_id} r{self.revision}"

    def save(self, *args, **kwargs):
        if self._release_is_ready():
            raise ReleaseImmutable()
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        if self._release_is_ready():
            raise ReleaseImmutable()
        return super().delete(*args, **kwargs)

    def _release_is_ready(self) -> bool:
        return Release.objects.filter(pk=self.release_id, status=Release.Status.READY).exists()


class ApiToken(models.Model):
    class Scope(models.TextChoices):
        READ = "read"
        WRITE = "write"
        RELEASE = "release"
        GRADE = "grade"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, unique=True)
    key_sha256 = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["user", "name"]
        constraints = [models.UniqueConstraint(fields=["user", "name"], name="apitoken_user_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


# Models kept in modules of their own, registered with the app through this module.
from curation.grade_models import Grade, GradeSpecResult, GradeSubmission  # noqa: E402, F401
from curation.recipe_models import EnvironmentRecipe  # noqa: E402, F401
