"""Seeded reviews for the demo: two reviewers on a few tasks, agreeing and disagreeing, so that
agreement, adjudication and the datasheet show real numbers from the first minute.

A job (`demo_reviews`), queued by the demo's seeding job once tasks exist. Reviews go through
the same services as a reviewer's clicks: claim a lease, submit a decision with the rubric.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model

from curation.models import Dataset, Task
from curation.review_port import Decision
from review.services import ReviewError, RubricInput, review_claim, review_submit
from workers.registry import job_handler

# Per task: each reviewer's (decision, spec clarity, test validity, interdependency, bucket).
APPROVE, REJECT = Decision.APPROVE, Decision.REJECT
PLANS = [
    [(APPROVE, 0, 0, 1, "15m-1h"), (APPROVE, 0, 1, 1, "15m-1h")],
    [(APPROVE, 1, 0, 0, "<15m"), (APPROVE, 1, 0, 1, "<15m")],
    [(APPROVE, 1, 1, 1, "1-4h"), (REJECT, 2, 2, 1, "15m-1h")],
    [(REJECT, 2, 3, 2, "15m-1h"), (REJECT, 3, 2, 2, "15m-1h")],
]
COMMENTS = {
    APPROVE: "Clear statement; the hidden tests check what the specs say.",
    REJECT: "A correct solution could fail these tests; the specs do not say enough.",
}


def demo_reviews_run(*, job, ctx) -> dict[str, Any]:
    dataset = Dataset.objects.get(pk=job.params["dataset_id"])
    users = get_user_model().objects.filter(username__in=job.params.get("reviewers", []))
    reviewers = sorted(users, key=lambda u: job.params["reviewers"].index(u.username))
    if len(reviewers) < 2:
        return {"message": "fewer than two reviewers: nothing seeded"}
    tasks = list(
        dataset.tasks.filter(status=Task.Status.NEEDS_REVIEW, reviews__isnull=True)
        .filter(validation__verified=True)
        .order_by("id")[: len(PLANS)]
    )
    done, skipped = 0, []
    for task, plan in zip(tasks, PLANS, strict=False):
        for user, (decision, clarity, validity, coupling, bucket) in zip(
            reviewers, plan, strict=False
        ):
            try:
                review_claim(task=task, user=user)
                task.refresh_from_db()
                review_submit(
                    task=task,
                    user=user,
                    expected_revision=task.revision,
                    rubric=RubricInput(
                        decision, clarity, validity, coupling, bucket, COMMENTS[decision]
                    ),
                )
                done += 1
            except ReviewError as exc:
                skipped.append(f"{task.instance_id} by {user.username}: {exc}")
                ctx.log(skipped[-1])
    return {
        "message": f"{done} reviews by {', '.join(u.username for u in reviewers)} "
        f"on {len(tasks)} tasks" + (f"; {len(skipped)} skipped" if skipped else ""),
        "skipped": skipped,
    }


@job_handler("demo_reviews", queue="default")
def demo_reviews(job, ctx):
    return demo_reviews_run(job=job, ctx=ctx)
