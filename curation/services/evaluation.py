"""Evaluating trajectories in the sandbox and recording, per test and per spec, what they did.

The job handler loads the trajectory and its task, hands plain values to the evaluation engine
(`workers.evaluation`), and writes the outcome in one transaction that replaces the previous
evaluation of that trajectory (idempotent). Each evaluation then queues an audit of the task,
unless nothing an audit reads changed (an evaluation re-run to the same outcome).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from curation import runtime
from curation.models import Evaluation, SpecResult, Task, TestCase, Trajectory
from curation.selectors.evaluations import evaluated_role
from curation.services.audit import task_audit_enqueue
from workers.evaluation import EvaluationInput, EvaluationOutcome, evaluate_patch
from workers.models import Job
from workers.services import JobRequest, job_enqueue, job_enqueue_many

EVALUATE_KIND = "evaluate_trajectory"


def trajectory_evaluation_enqueue(
    *, trajectory: Trajectory, task: Task | None = None, user=None
) -> Job:
    """Queue the evaluation of a trajectory (sent once the surrounding transaction commits)."""
    return job_enqueue(
        kind=EVALUATE_KIND,
        target=trajectory,
        params={"trajectory_id": trajectory.pk},
        user=user,
        message=_evaluate_message(trajectory),
    )


def trajectories_evaluation_enqueue(*, trajectories: list[Trajectory], user=None) -> list[Job]:
    """Queue the evaluations of many trajectories with one INSERT (an import's batch)."""
    return job_enqueue_many(
        kind=EVALUATE_KIND,
        requests=[
            JobRequest(
                target=trajectory,
                params={"trajectory_id": trajectory.pk},
                message=_evaluate_message(trajectory),
            )
            for trajectory in trajectories
        ],
        user=user,
    )


def _evaluate_message(trajectory: Trajectory) -> str:
    return f"evaluate trajectory {trajectory.pk} ({trajectory.model_name})"


def evaluation_plan(*, task: Task) -> dict[str, Any]:
    """The tests an evaluation of `task` runs, and which of them verify which spec."""
    fail_to_pass: list[str] = []
    pass_to_pass: list[str] = []
    spec_tests: dict[str, list[str]] = {spec.key: [] for spec in task.specs.all()}
    for test in task.tests.prefetch_related("specs").order_by("id"):
        role = evaluated_role(test)
        if role is None:
            continue
        (fail_to_pass if role == TestCase.Role.FAIL_TO_PASS else pass_to_pass).append(test.nodeid)
        for spec in test.specs.all():
            spec_tests.setdefault(spec.key, []).append(test.nodeid)
    return {
        "fail_to_pass": tuple(fail_to_pass),
        "pass_to_pass": tuple(pass_to_pass),
        "spec_tests": tuple((key, tuple(tests)) for key, tests in spec_tests.items()),
    }


def trajectory_evaluate_now(
    *, trajectory: Trajectory, job: Job | None = None, progress=None, log=None
) -> tuple[Evaluation, EvaluationOutcome]:
    """Evaluate in the sandbox now and record the outcome (the job handler's body)."""
    log = log or (lambda line: None)
    task = trajectory.task
    plan = evaluation_plan(task=task)
    revision = task.revision
    inp = EvaluationInput(
        snapshot=runtime.snapshot_for(task.repository, task.base_commit),
        environment=runtime.environment_for(task.repository),
        patch=trajectory.final_patch,
        test_patch=task.test_patch,
        limits=runtime.sandbox_limits(),
        **plan,
    )
    log(
        f"evaluating trajectory {trajectory.pk} ({trajectory.model_name}) on "
        f"{task.instance_id} r{revision}: {len(inp.fail_to_pass)} FAIL_TO_PASS, "
        f"{len(inp.pass_to_pass)} PASS_TO_PASS"
    )
    outcome = evaluate_patch(inp, runtime.run_in_sandbox, progress=progress)
    for problem in outcome.problems:
        log(problem)
    if outcome.patch_error:
        log(outcome.patch_error[:2000])
    evaluation = evaluation_record(
        trajectory=trajectory, task_revision=revision, outcome=outcome, job=job
    )
    return evaluation, outcome


def trajectory_evaluation_run(*, job: Job, ctx) -> dict[str, Any]:
    """The evaluate_trajectory job: evaluate, record, then queue an audit of the task."""
    trajectory = (
        Trajectory.objects.select_related("task__repository", "task__dataset")
        .filter(pk=job.params["trajectory_id"])
        .first()
    )
    if trajectory is None:
        return {"message": "skipped: the trajectory no longer exists"}
    evaluation, outcome = trajectory_evaluate_now(
        trajectory=trajectory,
        job=job,
        progress=lambda percent, message: ctx.progress(min(percent, 99), message),
        log=ctx.log,
    )
    task_audit_enqueue(task=trajectory.task, only_if_changed=True)
    passed = len(outcome.passed)
    message = (
        f"{evaluation.resolved}: {passed}/{len(outcome.tests)} tests passed"
        if evaluation.patch_applied and not outcome.patch_error
        else f"patch did not apply: {outcome.patch_error[:300]}"
    )
    return {
        "message": message,
        "evaluation": evaluation.pk,
        "resolved": evaluation.resolved,
        "patch_applied": evaluation.patch_applied,
        "patch_error": outcome.patch_error[:2000],
        "flaky": sorted(outcome.flaky),
        "problems": outcome.problems,
        "runs": outcome.runs,
        "seconds": outcome.seconds,
    }


@transaction.atomic
def evaluation_record(
    *, trajectory: Trajectory, task_revision: int, outcome: EvaluationOutcome, job: Job | None
) -> Evaluation:
    """Write the outcome, replacing the trajectory's previous evaluation and spec results."""
    # The row lock serialises two workers that were handed the same evaluation.
    Trajectory.objects.select_for_update().filter(pk=trajectory.pk).first()
    evaluation, _ = Evaluation.objects.update_or_create(
        trajectory=trajectory,
        defaults={
            "task_revision": task_revision,
            "job": job,
            "patch_applied": outcome.patch_applied,
            "patch_error": outcome.patch_error,
            "resolved": outcome.resolved,
            "test_outcomes": outcome.tests,
            "touched_test_files": outcome.touched_test_files,
            "flaky_tests": sorted(outcome.flaky),
            "run_seconds": outcome.seconds,
        },
    )
    evaluation.spec_results.all().delete()
    specs = {spec.key: spec for spec in trajectory.task.specs.all()}
    SpecResult.objects.bulk_create(
        SpecResult(evaluation=evaluation, spec=specs[key], satisfied=satisfied)
        for key, satisfied in outcome.spec_satisfied.items()
        if key in specs
    )
    return evaluation
