"""The review agent's audit of a task: heuristic findings, LLM findings, unsafe trajectories.

An audit runs over one revision of the task and all of its trajectories. It is queued after an
evaluation (and after a revalidation of an audited task) only when something it reads changed
since the last audit — the revision, the validation, the trajectories or their evaluations —
and is coalesced: one queued audit per task at most. Each audit is an `Audit` row with its own
set of findings, pinned to the revision: the new set supersedes the previous one (kept as
history for calibration, never deleted), and a finding a human dismissed stays dismissed when
the next audit finds it again. The LLM auditor runs when an endpoint is configured
(SPECLOOM_LLM_BASE_URL and SPECLOOM_LLM_MODEL); when it fails, the failure is recorded and the
previous LLM set stays current.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from curation.models import Audit, Evaluation, Finding, Task, TestCase, Trajectory, TrajectoryStep
from curation.selectors.evaluations import evaluated_role
from workers import gitstore
from workers.audit import heuristic
from workers.audit.facts import (
    HIGH,
    MEDIUM,
    ActionFacts,
    AuditResult,
    EvaluationFacts,
    FindingDraft,
    SpecFacts,
    TaskFacts,
    TestFacts,
    TrajectoryFacts,
)
from workers.audit.llm import DO_NOT_APPROVE, OK, LLMAudit, audit_config, audit_with_llm
from workers.llm_client import LLMConfig
from workers.models import Job
from workers.services import job_enqueue

AUDIT_KIND = "audit_task"
HEURISTIC_SOURCE = "heuristic"
LLM_SOURCE_PREFIX = "llm:"
# An action's text beyond this is not scanned: commands are short, file contents are not.
_ACTION_SCAN_CHARS = 20_000


def llm_config() -> LLMConfig | None:
    """The LLM auditor's endpoint from settings, or None when none is configured."""
    if not (settings.LLM_BASE_URL and settings.LLM_MODEL):
        return None
    return audit_config(
        base_url=settings.LLM_BASE_URL,
        model=settings.LLM_MODEL,
        api_key=settings.LLM_API_KEY,
        timeout_seconds=float(settings.LLM_TIMEOUT_SECONDS),
    )


@dataclass(frozen=True)
class AuditInputs:
    """What an audit of the task would read, as digests: equal digests, nothing new to say."""

    revision: int
    trajectory_count: int
    trajectory_digest: str
    digest: str


def _sha256(value: Any) -> str:
    return hashlib.sha256(
        json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode()
    ).hexdigest()


def audit_inputs(*, task: Task) -> AuditInputs:
    """The task's revision, its validation, and its trajectories with their evaluations' content
    (not their timestamps: re-running an evaluation to the same outcome changes nothing)."""
    evaluations = {
        row["trajectory_id"]: row
        for row in Evaluation.objects.filter(trajectory__task=task).values(
            "trajectory_id",
            "task_revision",
            "patch_applied",
            "patch_error",
            "resolved",
            "test_outcomes",
            "touched_test_files",
            "flaky_tests",
        )
    }
    trajectories = [
        [pk, sha, evaluations.get(pk)]
        for pk, sha in task.trajectories.order_by("id").values_list("pk", "content_sha256")
    ]
    trajectory_digest = _sha256(trajectories)
    config = llm_config()
    digest = _sha256(
        {
            "revision": task.revision,
            "validated_revision": task.validated_revision,
            "validation_job": (task.validation or {}).get("job"),
            "trajectories": trajectory_digest,
            "llm": config.model if config else "",
        }
    )
    return AuditInputs(task.revision, len(trajectories), trajectory_digest, digest)


def audit_is_current(*, task: Task) -> bool:
    """The last audit read exactly what an audit now would (and its LLM part, if an LLM is
    configured, succeeded): a new one would say the same."""
    last = task.audits.order_by("-created_at", "-id").first()
    if last is None or last.inputs_digest != audit_inputs(task=task).digest:
        return False
    return llm_config() is None or last.llm_status == Audit.LLMStatus.OK


def task_audit_enqueue(
    *, task: Task, user=None, llm: bool | None = None, only_if_changed: bool = False
) -> Job | None:
    """Queue an audit of the task, unless one is already waiting (it will see everything).

    `only_if_changed` (what automatic triggers ask): None, and no job, when the last audit read
    exactly what this one would. A curator's explicit request always runs.
    """
    waiting = (
        Job.objects.filter(Job.target_filter(task), kind=AUDIT_KIND, status=Job.Status.QUEUED)
        .order_by("id")
        .first()
    )
    if waiting is not None:
        return waiting
    # Read afresh: the caller's copy may predate an edit made while it worked.
    if only_if_changed and audit_is_current(task=Task.objects.get(pk=task.pk)):
        return None
    return job_enqueue(
        kind=AUDIT_KIND,
        target=task,
        params={"task_id": task.pk, "llm": llm},
        user=user,
        message=f"audit {task.instance_id}",
    )


def _test_facts(task: Task) -> tuple[TestFacts, ...]:
    facts = []
    for test in task.tests.prefetch_related("specs").order_by("id"):
        role = evaluated_role(test) or test.role
        facts.append(
            TestFacts(
                nodeid=test.nodeid,
                role=role,
                specs=tuple(spec.key for spec in test.specs.all()),
                reason=test.last_message[:300]
                if role in (TestCase.Role.FLAKY, TestCase.Role.INVALID)
                else "",
            )
        )
    return tuple(facts)


def task_facts(task: Task) -> TaskFacts:
    return TaskFacts(
        instance_id=task.instance_id,
        title=task.title,
        problem_statement=task.problem_statement,
        reference_patch=task.reference_patch,
        test_patch=task.test_patch,
        specs=tuple(
            SpecFacts(key=s.key, kind=s.kind, statement=s.statement)
            for s in task.specs.order_by("order", "id")
        ),
        tests=_test_facts(task),
    )


def trajectory_facts(task: Task) -> list[TrajectoryFacts]:
    """Every trajectory of the task with its evaluation and its actions (not observations)."""
    actions: dict[int, list[ActionFacts]] = {}
    steps = (
        TrajectoryStep.objects.filter(trajectory__task=task, kind="action")
        .order_by("trajectory_id", "index")
        .values_list("trajectory_id", "index", "tool", "action", "content")
    )
    for trajectory_id, index, tool, action, content in steps.iterator(chunk_size=2000):
        text = (action or content)[:_ACTION_SCAN_CHARS]
        actions.setdefault(trajectory_id, []).append(ActionFacts(index, tool, text))
    trajectories = []
    for trajectory in (
        task.trajectories.select_related("evaluation")
        .prefetch_related("evaluation__spec_results__spec")
        .order_by("id")
    ):
        evaluation = getattr(trajectory, "evaluation", None)
        facts = None
        if evaluation is not None:
            facts = EvaluationFacts(
                patch_applied=evaluation.patch_applied and not evaluation.patch_error,
                resolved=evaluation.resolved,
                tests=dict(evaluation.test_outcomes),
                flaky=tuple(evaluation.flaky_tests),
                touched_test_files=tuple(evaluation.touched_test_files),
                spec_satisfied={r.spec.key: r.satisfied for r in evaluation.spec_results.all()},
                patch_error=evaluation.patch_error,
            )
        trajectories.append(
            TrajectoryFacts(
                id=trajectory.pk,
                model=trajectory.model_name,
                patch=trajectory.final_patch,
                evaluation=facts,
                actions=tuple(actions.get(trajectory.pk, ())),
                exit_status=trajectory.exit_status,
            )
        )
    return trajectories


def _llm_drafts(audit: LLMAudit) -> list[FindingDraft]:
    """The LLM's findings as stored: its kind kept when it is one of ours, else `llm`; a
    do-not-approve verdict without a finding that says so becomes one."""
    ours = set(Finding.Kind.values)
    drafts = []
    for draft in audit.findings:
        kind = draft.kind if draft.kind in ours else Finding.Kind.LLM
        drafts.append(
            FindingDraft(
                kind=kind,
                severity=draft.severity,
                message=draft.message,
                key=draft.key,
                trajectory=draft.trajectory,
                evidence=draft.evidence,
            )
        )
    serious = any(d.severity in (MEDIUM, HIGH) for d in drafts)
    if audit.verdict == DO_NOT_APPROVE and not serious:
        drafts.append(
            FindingDraft(
                kind=Finding.Kind.LLM,
                severity=MEDIUM,
                message=f"The LLM auditor advises against approving: "
                f"{audit.summary or 'no reason given'}",
                key="llm:verdict",
                evidence={"verdict": audit.verdict},
            )
        )
    return drafts


def _add_finding_set(
    *, audit: Audit, drafts: list[FindingDraft], source_filter: dict, source: str
) -> list[Finding]:
    """The audit's findings of one source; they supersede that source's current set."""
    task = audit.task
    previous = task.findings.filter(superseded=False, **source_filter)
    dismissed = {(finding.evidence or {}).get("key") for finding in previous.filter(dismissed=True)}
    previous.update(superseded=True)
    valid_trajectories = set(task.trajectories.values_list("pk", flat=True))
    rows = []
    for draft in drafts:
        trajectory = draft.trajectory if draft.trajectory in valid_trajectories else None
        rows.append(
            Finding(
                task=task,
                trajectory_id=trajectory,
                kind=draft.kind,
                severity=draft.severity,
                message=draft.message,
                evidence={**draft.evidence, "key": draft.key},
                source=source,
                job=audit.job,
                audit=audit,
                task_revision=audit.task_revision,
                dismissed=draft.key in dismissed,
            )
        )
    return Finding.objects.bulk_create(rows)


@transaction.atomic
def audit_record(
    *,
    task: Task,
    result: AuditResult,
    llm: LLMAudit | None,
    job: Job | None,
    inputs: AuditInputs | None = None,
) -> dict[str, Any]:
    """Write the audit as a new set pinned to the revision it read (`inputs`, taken before the
    audit read the task): heuristic findings supersede the current heuristic set; LLM findings
    supersede the current LLM set only when the LLM audit succeeded; unsafe flags follow."""
    Task.objects.select_for_update().filter(pk=task.pk).first()
    inputs = inputs or audit_inputs(task=task)
    llm_ok = llm is not None and llm.status == OK
    audit = Audit.objects.create(
        task=task,
        task_revision=inputs.revision,
        trajectory_count=inputs.trajectory_count,
        trajectory_digest=inputs.trajectory_digest,
        inputs_digest=inputs.digest,
        llm_status=llm.status if llm else Audit.LLMStatus.NOT_RUN,
        llm_model=(llm.model if llm else "")[:200],
        job=job,
    )
    heuristic_rows = _add_finding_set(
        audit=audit,
        drafts=result.findings,
        source_filter={"source": HEURISTIC_SOURCE},
        source=HEURISTIC_SOURCE,
    )
    llm_rows: list[Finding] = []
    if llm_ok:
        llm_rows = _add_finding_set(
            audit=audit,
            drafts=_llm_drafts(llm),
            source_filter={"source__startswith": LLM_SOURCE_PREFIX},
            source=f"{LLM_SOURCE_PREFIX}{llm.model}"[:200],
        )
    unsafe = set(result.unsafe)
    unsafe.update(
        row.trajectory_id
        for row in llm_rows
        if row.kind == Finding.Kind.UNSAFE_ACTION
        and row.trajectory_id
        and row.severity in heuristic.UNSAFE_SEVERITIES
    )
    Trajectory.objects.filter(task=task, unsafe=True).exclude(pk__in=unsafe).update(unsafe=False)
    Trajectory.objects.filter(task=task, pk__in=unsafe).update(unsafe=True)
    return {
        "heuristic": len(heuristic_rows),
        "llm": len(llm_rows),
        "unsafe": sorted(unsafe),
        "audit": audit.pk,
        "revision": audit.task_revision,
    }


def task_audit_now(
    *, task: Task, job: Job | None = None, llm: bool | None = None, log=None
) -> dict[str, Any]:
    """Audit the task now (the job handler's body); returns a summary for the job's result.

    `llm`: True runs the LLM auditor (it fails, recorded, when none is configured), False skips
    it, None runs it when an endpoint is configured.
    """
    log = log or (lambda line: None)
    repository = task.repository

    @functools.cache
    def read_base(path: str) -> str | None:
        return gitstore.read_file(repository.git_dir, task.base_commit, path)

    inputs = audit_inputs(task=task)
    facts = task_facts(task)
    trajectories = trajectory_facts(task)
    result = heuristic.audit_task(facts, trajectories, read_base)
    log(
        f"heuristic audit of {task.instance_id}: {len(trajectories)} trajectories, "
        f"{len(result.findings)} findings, {len(result.unsafe)} unsafe"
    )
    llm_audit = None
    config = llm_config()
    if llm or (llm is None and config is not None):
        if config is None:
            llm_audit = LLMAudit(
                status="failed",
                model="",
                error="no LLM endpoint is configured (SPECLOOM_LLM_BASE_URL, SPECLOOM_LLM_MODEL)",
            )
        else:
            llm_audit = audit_with_llm(config, facts, trajectories, result.findings)
        log(f"LLM audit ({llm_audit.model}): {llm_audit.status} {llm_audit.error[:300]}")
    counts = audit_record(task=task, result=result, llm=llm_audit, job=job, inputs=inputs)
    summary = {
        "message": (
            f"{counts['heuristic']} heuristic findings"
            + (f", LLM audit {llm_audit.status}" if llm_audit else "")
            + (f", {len(counts['unsafe'])} unsafe trajectories" if counts["unsafe"] else "")
        ),
        "trajectories": len(trajectories),
        "findings": {key: counts[key] for key in ("heuristic", "llm", "unsafe")},
        "audit": counts["audit"],
        "revision": counts["revision"],
        "unsafe": counts["unsafe"],
        "llm": llm_audit.as_dict() if llm_audit else None,
    }
    return summary


def task_audit_run(*, job: Job, ctx) -> dict[str, Any]:
    task = Task.objects.select_related("repository").filter(pk=job.params["task_id"]).first()
    if task is None:
        return {"message": "skipped: the task no longer exists"}
    ctx.progress(10, "auditing")
    return task_audit_now(task=task, job=job, llm=job.params.get("llm"), log=ctx.log)
