"""Writes of human review: leases on tasks, decisions, consensus, adjudication and comments.

A review slot is a unit of `Task.review_slots_taken`. Claiming one is a conditional UPDATE
(`slots < reviews_required AND status = needs_review`) followed by the assignment row in the
same transaction; the unique (task, reviewer) constraint means a reviewer never holds two. A
lease that stops being renewed expires and gives its slot back by another conditional update.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from curation.access import is_curator, require_reviewer, visible_tasks
from curation.models import Specification, Task, TestCase
from curation.selectors.audit import findings_hidden
from curation.services.tasks import statement_problem
from curation.services.webhooks import webhook_task_approved
from review.models import Adjudication, Comment, Review, ReviewAssignment
from review.selectors.leases import active_assignment

logger = logging.getLogger(__name__)

FINAL_STATUS = {
    Review.Decision.APPROVE: Task.Status.APPROVED,
    Review.Decision.REQUEST_CHANGES: Task.Status.CHANGES_REQUESTED,
    Review.Decision.REJECT: Task.Status.REJECTED,
}
# Claim next tries this many candidates before saying the queue is empty; every miss means
# someone else took that slot in between, which is rare.
CLAIM_ATTEMPTS = 20


class ReviewError(Exception):
    """A review action that cannot happen; `status` is the HTTP status a view should answer."""

    status = 400


class NoSlotLeft(ReviewError):
    status = 409


class AlreadyReviewed(ReviewError):
    status = 409


class LeaseLost(ReviewError):
    status = 409


class NotValidated(ReviewError):
    status = 409


class ReviewStale(ReviewError):
    status = 409


class NotAdjudicable(ReviewError):
    status = 409


class NotApprovable(ReviewError):
    """The task's content fails a rule every approved task must meet (e.g. its statement)."""

    status = 409


def _approvable(task: Task) -> None:
    problem = statement_problem(task.problem_statement)
    if problem:
        raise NotApprovable(f"This task cannot be approved: {problem}. Edit it, or reject it.")


def lease_seconds() -> int:
    # One default, in settings (SPECLOOM_REVIEW_LEASE_SECONDS), read at call time so tests and
    # deployments that override it are obeyed.
    return settings.REVIEW_LEASE_SECONDS


# --- leases ----------------------------------------------------------------------------------


def _release_slot(task_id: int) -> None:
    Task.objects.filter(pk=task_id, review_slots_taken__gt=0).update(
        review_slots_taken=F("review_slots_taken") - 1
    )


def review_leases_expire(*, now=None, task_ids=None) -> int:
    """Expire leases nobody renewed and give their slots back. Safe to run concurrently."""
    now = now or timezone.now()
    stale = ReviewAssignment.objects.filter(
        status=ReviewAssignment.Status.ACTIVE, expires_at__lt=now
    )
    if task_ids is not None:
        stale = stale.filter(task_id__in=task_ids)
    expired = 0
    for pk, task_id in stale.values_list("pk", "task_id")[:1000]:
        with transaction.atomic():
            if ReviewAssignment.objects.filter(
                pk=pk, status=ReviewAssignment.Status.ACTIVE, expires_at__lt=now
            ).update(status=ReviewAssignment.Status.EXPIRED):
                _release_slot(task_id)
                expired += 1
    if expired:
        logger.info("expired %d review leases", expired)
    return expired


def _grant(task: Task, user, required: int) -> ReviewAssignment:
    """Take one slot of `task` for `user` inside the caller's transaction, or raise."""
    now = timezone.now()
    expires = now + timedelta(seconds=lease_seconds())
    existing = ReviewAssignment.objects.filter(task=task, reviewer=user).first()
    if existing is not None and existing.status == ReviewAssignment.Status.ACTIVE:
        return existing
    if Review.objects.filter(
        task=task, reviewer=user, task_revision=task.revision, is_adjudication=False
    ).exists():
        raise AlreadyReviewed("You already reviewed this revision of the task.")
    taken = Task.objects.filter(
        pk=task.pk, status=Task.Status.NEEDS_REVIEW, review_slots_taken__lt=required
    ).update(review_slots_taken=F("review_slots_taken") + 1)
    if not taken:
        raise NoSlotLeft("No review slot is left on this task.")
    if existing is None:
        try:
            with transaction.atomic():
                return ReviewAssignment.objects.create(task=task, reviewer=user, expires_at=expires)
        except IntegrityError:
            # The same reviewer claimed in another tab a moment ago: never two slots.
            raise NoSlotLeft("You already hold this task.") from None
    # A lease that expired or was given back, or a review of an older revision: renew it.
    if not ReviewAssignment.objects.filter(pk=existing.pk, status=existing.status).update(
        status=ReviewAssignment.Status.ACTIVE,
        claimed_at=now,
        heartbeat_at=now,
        expires_at=expires,
        completed_at=None,
    ):
        raise NoSlotLeft("You already hold this task.")
    existing.refresh_from_db()
    return existing


def review_claim(*, task: Task, user) -> ReviewAssignment:
    """Claim a review slot on this task (or return the lease the user already holds)."""
    require_reviewer(user)
    review_leases_expire(task_ids=[task.pk])
    with transaction.atomic():
        current = Task.objects.select_related("dataset").get(pk=task.pk)
        return _grant(current, user, current.dataset.reviews_required)


def review_claim_next(*, user, dataset=None) -> ReviewAssignment | None:
    """The user's active lease if they have one, else a slot on the oldest claimable task."""
    require_reviewer(user)
    mine = (
        ReviewAssignment.objects.filter(
            reviewer=user, status=ReviewAssignment.Status.ACTIVE, expires_at__gt=timezone.now()
        )
        .select_related("task")
        .order_by("claimed_at")
    )
    if dataset is not None:
        mine = mine.filter(task__dataset=dataset)
    held = mine.first()
    if held is not None:
        return held
    review_leases_expire()
    candidates = (
        visible_tasks(user)
        .filter(
            status=Task.Status.NEEDS_REVIEW,
            review_slots_taken__lt=F("dataset__reviews_required"),
        )
        .filter(
            ~Exists(
                ReviewAssignment.objects.filter(
                    task=OuterRef("pk"), reviewer=user, status=ReviewAssignment.Status.ACTIVE
                )
            ),
            ~Exists(
                Review.objects.filter(
                    task=OuterRef("pk"),
                    reviewer=user,
                    task_revision=OuterRef("revision"),
                    is_adjudication=False,
                )
            ),
        )
        .order_by("id")
        .values_list("pk", "dataset__reviews_required")
    )
    if dataset is not None:
        candidates = candidates.filter(dataset=dataset)
    for pk, required in candidates[:CLAIM_ATTEMPTS]:
        try:
            with transaction.atomic():
                task = Task.objects.get(pk=pk)
                return _grant(task, user, required)
        except (NoSlotLeft, AlreadyReviewed):
            continue
    return None


def review_heartbeat(*, assignment: ReviewAssignment, user) -> bool:
    """Renew the lease while the page is open; False when it is no longer the user's."""
    now = timezone.now()
    return bool(
        ReviewAssignment.objects.filter(
            pk=assignment.pk, reviewer=user, status=ReviewAssignment.Status.ACTIVE
        ).update(heartbeat_at=now, expires_at=now + timedelta(seconds=lease_seconds()))
    )


def review_release(*, assignment: ReviewAssignment, user) -> bool:
    """Give the slot back without a decision."""
    with transaction.atomic():
        if ReviewAssignment.objects.filter(
            pk=assignment.pk, reviewer=user, status=ReviewAssignment.Status.ACTIVE
        ).update(status=ReviewAssignment.Status.RELEASED, completed_at=timezone.now()):
            _release_slot(assignment.task_id)
            return True
    return False


def on_task_content_changed(sender, *, task: Task, revision: int, user=None, **kwargs) -> None:
    """After an edit, only active leases hold slots: older reviews no longer count."""
    active = ReviewAssignment.objects.filter(task=task, status=ReviewAssignment.Status.ACTIVE)
    Task.objects.filter(pk=task.pk).update(review_slots_taken=active.count())
    # A disagreement about content that no longer exists is moot; the new revision is reviewed.
    Adjudication.objects.filter(task=task, resolved_at__isnull=True).update(
        resolved_at=timezone.now()
    )


# --- decisions -------------------------------------------------------------------------------


@dataclass
class RubricInput:
    decision: str
    spec_clarity: int
    test_validity: int
    interdependency: int
    difficulty: str
    comment: str = ""

    def check(self) -> None:
        if self.decision not in Review.Decision.values:
            raise ReviewError("The decision must be approve, request changes or reject.")
        for name in ("spec_clarity", "test_validity", "interdependency"):
            value = getattr(self, name)
            if not isinstance(value, int) or not 0 <= value <= 3:
                raise ReviewError(f"{name.replace('_', ' ')} must be between 0 and 3.")
        if self.difficulty not in Task.Difficulty.values:
            raise ReviewError("Choose a difficulty bucket.")


@dataclass
class DecisionOutcome:
    review: Review
    final_status: str | None  # set when consensus (or an adjudication) decided
    adjudication: Adjudication | None
    waiting_for: int  # reviews still needed for consensus

    @property
    def message(self) -> str:
        if self.final_status:
            return f"Recorded. The task is now {self.final_status.replace('_', ' ')}."
        if self.adjudication:
            return "Recorded. The reviewers disagree: the task goes to a curator to adjudicate."
        return f"Recorded. Waiting for {self.waiting_for} more review(s)."


def consensus_of(decisions: list[str], rule: str) -> str | None:
    """The decision the dataset's rule yields, or None when it needs adjudication."""
    if not decisions:
        return None
    counts = Counter(decisions).most_common()
    if rule == "unanimous":
        return counts[0][0] if len(counts) == 1 else None
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def _notify_task_approved(task: Task) -> None:
    """The dataset's webhook hears about it; the job is sent only if the approval commits."""
    webhook_task_approved(task)


def _finalise(task: Task, decision: str) -> str:
    status = FINAL_STATUS[decision]
    if status == Task.Status.APPROVED:
        _approvable(task)  # whoever's decision tips the consensus, the rule holds
    Task.objects.filter(pk=task.pk).update(status=status, updated_at=timezone.now())
    task.status = status
    if status == Task.Status.APPROVED:
        _notify_task_approved(task)
    return status


def _rubric_review(task, user, rubric: RubricInput, **extra) -> Review:
    return Review.objects.create(
        task=task,
        reviewer=user,
        task_revision=task.revision,
        decision=rubric.decision,
        spec_clarity=rubric.spec_clarity,
        test_validity=rubric.test_validity,
        interdependency=rubric.interdependency,
        difficulty=rubric.difficulty,
        comment=rubric.comment.strip(),
        **extra,
    )


def review_submit(
    *, task: Task, user, rubric: RubricInput, expected_revision: int
) -> DecisionOutcome:
    """Record the user's decision on the revision they saw; apply the consensus rule."""
    rubric.check()
    with transaction.atomic():
        task = Task.objects.select_for_update().select_related("dataset").get(pk=task.pk)
        if task.revision != expected_revision:
            raise ReviewStale(
                f"The task changed while you reviewed it (r{expected_revision} → "
                f"r{task.revision}); look at the new revision before deciding."
            )
        assignment = active_assignment(task=task, user=user)
        if assignment is None:
            mine = (
                task.reviews.filter(reviewer=user, task_revision=task.revision)
                .order_by("-created_at")
                .first()
            )
            if mine is not None:
                # A second click (or a second tab) after the decision went through.
                raise AlreadyReviewed(
                    f"Already decided: your {mine.get_decision_display().lower()} of "
                    f"r{task.revision} is recorded."
                )
            raise LeaseLost("You do not hold this task (your lease expired?). Claim it again.")
        # A task that failed revalidation (draft) can still be rejected or sent back.
        if task.status not in (Task.Status.NEEDS_REVIEW, Task.Status.VALIDATING, Task.Status.DRAFT):
            raise ReviewError(f"The task is {task.get_status_display().lower()}.")
        if rubric.decision == Review.Decision.APPROVE and not task.is_validated:
            raise NotValidated("Approve waits until the latest revision has validated.")
        if rubric.decision == Review.Decision.APPROVE:
            _approvable(task)
        now = timezone.now()
        # Whether the findings panel was hidden from this reviewer, who holds the lease.
        blind = findings_hidden(task=task, user=user, holds_lease=True)
        if not ReviewAssignment.objects.filter(
            pk=assignment.pk, status=ReviewAssignment.Status.ACTIVE
        ).update(status=ReviewAssignment.Status.COMPLETED, completed_at=now):
            raise LeaseLost("Your lease ended a moment ago. Claim the task again.")
        review = _rubric_review(
            task,
            user,
            rubric,
            assignment=assignment,
            seconds_spent=(now - assignment.claimed_at).total_seconds(),
            blind=blind,
        )
        decisions = {
            r.reviewer.get_username(): r.decision
            for r in task.reviews.filter(task_revision=task.revision, is_adjudication=False)
            .select_related("reviewer")
            .order_by("created_at")
        }
        required = task.dataset.reviews_required
        if len(decisions) < required:
            return DecisionOutcome(review, None, None, required - len(decisions))
        agreed = consensus_of(list(decisions.values()), task.dataset.consensus)
        rule = task.dataset.consensus
        tally = ", ".join(f"{d} x{n}" for d, n in Counter(decisions.values()).most_common())
        reason = f"{rule} rule not met: {tally}"
        problem = statement_problem(task.problem_statement)
        if agreed == Review.Decision.APPROVE and problem:
            # The reviewers' approval cannot stand; a curator settles it (reject or send back).
            agreed, reason = None, f"{tally}, but the task cannot be approved: {problem}"
        if agreed is not None:
            return DecisionOutcome(review, _finalise(task, agreed), None, 0)
        adjudication, _ = Adjudication.objects.get_or_create(
            task=task,
            task_revision=task.revision,
            defaults={"reason": reason[:300], "decisions": decisions},
        )
        return DecisionOutcome(review, None, adjudication, 0)


def review_adjudicate(*, adjudication: Adjudication, user, rubric: RubricInput) -> DecisionOutcome:
    """A curator's decision on a disagreement is final."""
    if not is_curator(user):
        raise ReviewError("Only curators adjudicate.")
    rubric.check()
    with transaction.atomic():
        task = Task.objects.select_for_update().get(pk=adjudication.task_id)
        if not Adjudication.objects.filter(pk=adjudication.pk, resolved_at__isnull=True).exists():
            raise NotAdjudicable("This disagreement was already settled.")
        if task.revision != adjudication.task_revision:
            raise NotAdjudicable("The task changed since the reviewers disagreed.")
        if rubric.decision == Review.Decision.APPROVE and not task.is_validated:
            raise NotValidated("Approve waits until the latest revision has validated.")
        if rubric.decision == Review.Decision.APPROVE:
            _approvable(task)
        review = _rubric_review(task, user, rubric, is_adjudication=True)
        Adjudication.objects.filter(pk=adjudication.pk, resolved_at__isnull=True).update(
            resolved_at=timezone.now(), resolved_by=user, review=review
        )
        return DecisionOutcome(review, _finalise(task, rubric.decision), None, 0)


# --- comments --------------------------------------------------------------------------------


def comment_create(
    *,
    task: Task,
    user,
    body: str,
    anchor: str = Comment.Anchor.TASK,
    spec_key: str = "",
    test_id: int | None = None,
    patch: str = "",
    file_path: str = "",
    line: int | None = None,
) -> Comment:
    require_reviewer(user)
    body = (body or "").strip()
    if not body:
        raise ReviewError("The comment is empty.")
    if len(body) > 20_000:
        raise ReviewError("The comment is too long (20,000 characters at most).")
    fields: dict = {"anchor": anchor}
    if anchor == Comment.Anchor.SPEC:
        spec = Specification.objects.filter(task=task, key=spec_key).first()
        if spec is None:
            raise ReviewError("No such spec in this task.")
        fields["spec"] = spec
    elif anchor == Comment.Anchor.TEST:
        test = TestCase.objects.filter(task=task, pk=test_id).first() if test_id else None
        if test is None:
            raise ReviewError("No such test in this task.")
        fields["test"] = test
    elif anchor == Comment.Anchor.PATCH_LINE:
        if patch not in ("reference", "test") or not file_path or not line or line < 1:
            raise ReviewError("A line comment needs the patch, the file and a line number.")
        fields.update(patch=patch, file_path=file_path[:500], line=line)
    elif anchor != Comment.Anchor.TASK:
        raise ReviewError("Unknown comment anchor.")
    return Comment.objects.create(
        task=task, author=user, body=body, task_revision=task.revision, **fields
    )
