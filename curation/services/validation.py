"""Validation of tasks in the sandbox, and recording what it proved.

The job handler loads the task, hands plain values to the validation engine, and writes the
outcome in one transaction that replaces the previous validation's results (idempotent). Its
findings are pinned to the revision validated; those of earlier revisions are kept, superseded.
A task the review agent audited before is audited again when the validation changed its tests.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import transaction
from django.db.models import Q

from curation import runtime
from curation.models import Finding, SpecDependency, Specification, Task, TestCase
from curation.services.audit import task_audit_enqueue
from workers import gitstore
from workers.linkage import Linkage, SpecEvidence, TestEvidence, link_specs
from workers.models import Job
from workers.patchcore import PatchParseError, PatchPart, patched_files, split_by_function
from workers.sandbox import SandboxError
from workers.sandbox.types import RunRequest, RunResult
from workers.services import JobFailed, JobLeaseLost, job_enqueue
from workers.synthesis.proposals import spec_key_order
from workers.synthesis.trivial import TrivialCheck, check_trivial
from workers.validation import ReasonCode, ValidationInput, ValidationOutcome, validate_task

VALIDATION_SOURCE = "validation"
OUTPUT_TAIL_CHARS = 4000
# The sandbox's per-run working folder: a server path, and noise in every message it is in.
# A run folder: <sandbox root>/runs/<worker pid>.<start>-<run id>[/work]/ (see the sandbox).
_RUN_FOLDER = re.compile(r"(?:/[^\s'\"/:]+)*/runs/[0-9.]*-?[0-9a-f]{8,}(?:/work)?(/|\b)")


class ValidationNotAllowed(ValueError):
    pass


def task_validation_enqueue(*, task: Task, user=None, reruns: int | None = None) -> Job:
    """Queue validation of the task's current revision and mark it as validating."""
    if not task.is_editable:
        raise ValidationNotAllowed(f"a {task.get_status_display()} task is not validated again")
    Task.objects.filter(pk=task.pk).update(status=Task.Status.VALIDATING)
    task.status = Task.Status.VALIDATING
    return job_enqueue(
        kind="validate_task",
        target=task,
        params={"task_id": task.pk, "revision": task.revision, "reruns": reruns},
        user=user,
        message=f"validate {task.instance_id} r{task.revision}",
    )


def reference_parts_for(task: Task) -> list[PatchPart]:
    """Parts of the reference, one per changed function, named as synthesis names them
    (`path::Qualified.name`, workers.patchcore), each with its complement."""
    repository = task.repository
    try:
        return split_by_function(
            task.reference_patch,
            lambda path: gitstore.read_file(repository.git_dir, task.base_commit, path),
        )
    except PatchParseError:
        return []


def task_trivial_check(*, task: Task, parts: list[str]) -> TrivialCheck | None:
    """Is the answer visible next to the task (a sibling repeats a body to write)?"""
    functions = [tuple(p.split("::", 1)) for p in parts if "::" in p]
    repository = task.repository
    try:
        files = patched_files(
            task.reference_patch,
            lambda path: gitstore.read_file(repository.git_dir, task.base_commit, path),
        )
    except PatchParseError:
        return None
    return check_trivial(files, functions)


def _scrub(text: str) -> str:
    return _RUN_FOLDER.sub(lambda m: "" if m.group(1) else ".", text or "")


class _OutputCapture:
    """Wraps the sandbox runner to keep the output of the first run that went wrong (patch
    failure, limit, collection error): the one thing a person needs to see why."""

    def __init__(self, runner):
        self.runner = runner
        self.tail = ""

    def __call__(self, request: RunRequest) -> RunResult:
        result = self.runner(request)
        if not self.tail and (not result.ok or result.collection_errors):
            pieces = []
            if result.patch_failure is not None:
                failure = result.patch_failure
                pieces.append(
                    f"patch does not apply: {failure.file} {failure.hunk} {failure.message}"
                )
            pieces += [
                f"collection error in {e.path}:\n{e.message}" for e in result.collection_errors
            ]
            pieces += [result.stdout_tail, result.stderr_tail]
            text = "\n".join(p.strip() for p in pieces if p and p.strip())
            self.tail = _scrub(text)[-OUTPUT_TAIL_CHARS:] or "(the run printed nothing)"
        return result


def _never_collected(verdict) -> bool:
    return bool(verdict.outcomes_reference) and all(
        o == "missing" for o in verdict.outcomes_reference
    )


def validation_could_not_run(outcome: ValidationOutcome) -> str:
    """Why the validation proved nothing about the tests themselves, or "" when it ran.

    Either a run could not happen at all (a patch did not apply, a limit), or none of the
    intended FAIL_TO_PASS tests was ever collected (the test patch breaks collection).
    """
    verdicts = list(outcome.tests.values())
    if not verdicts:
        return ""
    if any(v.code == ReasonCode.COULD_NOT_RUN for v in verdicts):
        return "; ".join(_scrub(r).split("\n", 1)[0] for r in outcome.reasons) or "a run failed"
    intended = [v for v in verdicts if v.intended == "FAIL_TO_PASS"]
    collection = [r.message for r in outcome.problems if r.code == ReasonCode.COLLECTION_ERROR]
    if intended and collection and all(_never_collected(v) for v in intended):
        first = _scrub(collection[0]).split("\n", 1)[0]
        return f"no FAIL_TO_PASS test was collected ({first})"
    return ""


def task_validate_now(
    *, task: Task, job: Job | None, progress=None, log=None, reruns: int | None = None
) -> tuple[ValidationOutcome, bool]:
    """Validate the task's current revision in the sandbox and record the outcome.

    Returns the outcome and whether it was recorded (False when the task changed meanwhile).
    """
    progress = progress or (lambda percent, message: None)
    log = log or (lambda line: None)
    revision = task.revision
    reruns = reruns or task.dataset.validation_reruns
    tests = list(task.tests.all())
    parts = reference_parts_for(task)
    inp = ValidationInput(
        snapshot=runtime.snapshot_for(task.repository, task.base_commit),
        environment=runtime.environment_for(task.repository),
        reference_patch=task.reference_patch,
        test_patch=task.test_patch,
        fail_to_pass=tuple(t.nodeid for t in tests if t.intended_role == "FAIL_TO_PASS"),
        pass_to_pass=tuple(t.nodeid for t in tests if t.intended_role == "PASS_TO_PASS"),
        reruns=int(reruns),
        limits=runtime.sandbox_limits(),
        reference_parts=tuple(parts),
    )
    log(
        f"validating {task.instance_id} r{revision}: {len(tests)} tests, {reruns} reruns, "
        f"{len(parts)} reference parts"
    )
    capture = _OutputCapture(runtime.run_in_sandbox)
    outcome = validate_task(inp, capture, progress=progress)
    for run in outcome.runs:
        log(f"{run.label}: {run.passed} passed, {run.failed} not, {run.seconds}s {run.problem}")
    recorded = task_validation_record(
        task=task,
        revision=revision,
        outcome=outcome,
        parts=[p.name for p in parts],
        job=job,
        output_tail=capture.tail,
        trivial=task_trivial_check(task=task, parts=[p.name for p in parts]),
    )
    return outcome, recorded


def task_validation_run(*, job: Job, ctx) -> dict[str, Any]:
    """The validate_task job: validate the revision the job was queued for."""
    task = Task.objects.select_related("repository", "dataset").get(pk=job.params["task_id"])
    revision = job.params.get("revision", task.revision)
    if task.revision != revision:
        return {"message": f"skipped: task is at r{task.revision}, this job was for r{revision}"}
    try:
        outcome, recorded = task_validate_now(
            task=task,
            job=job,
            progress=lambda p, m: ctx.progress(min(p, 99), m),
            log=ctx.log,
            reruns=job.params.get("reruns"),
        )
    except JobLeaseLost:
        raise  # someone else runs it now
    except SandboxError as exc:
        # The sandbox or the environment failed: the job fails with the cause, and the task
        # does not stay "validating" for good.
        task_validation_abandon(task=task, revision=revision, reason=str(exc), job=job)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise JobFailed(f"validation could not run: {_scrub(first)}", error=str(exc)) from exc
    except Exception as exc:
        # A crash must not leave the task "validating" for ever (pages poll until it ends).
        task_validation_crashed(task=task, revision=revision, job=job, error=exc)
        raise
    verdict = "verified" if outcome.verified else "invalid"
    result = {
        "message": f"{verdict}: {len(outcome.fail_to_pass)} FAIL_TO_PASS, "
        f"{len(outcome.pass_to_pass)} PASS_TO_PASS, {len(outcome.flaky)} flaky"
        + ("" if recorded else " (stale: the task changed meanwhile)"),
        "verified": outcome.verified,
        "reasons": [_scrub(r) for r in outcome.reasons],
        "interaction_score": outcome.interaction_score,
        "seconds": outcome.seconds,
    }
    problem = validation_could_not_run(outcome)
    if problem:
        # The job did not do its work: it says so (failed), with what was recorded kept.
        raise JobFailed(f"validation could not run: {problem}", result=result)
    return result


def task_validation_crashed(*, task: Task, revision: int, job: Job | None, error: Exception):
    """Validation of `revision` broke before it could say anything (a bug, not the sandbox)."""
    task_validation_abandon(
        task=task, revision=revision, reason=f"{type(error).__name__}: {error}", job=job
    )


@transaction.atomic
def task_validation_abandon(*, task: Task, revision: int, reason: str, job: Job | None) -> None:
    """Validation of `revision` could not run (the sandbox or the environment failed, the
    worker was lost, a crash): the task leaves "validating" for draft, not validated, with
    one finding that says why; the findings of earlier runs are kept, superseded."""
    task = Task.objects.select_for_update().get(pk=task.pk)
    if task.revision != revision or not task.is_editable:
        return
    first_line = _scrub(reason.splitlines()[0] if reason.strip() else "no reason given")[:500]
    earlier = task.findings.filter(source=VALIDATION_SOURCE)
    earlier.filter(Q(task_revision=revision) | Q(task_revision__isnull=True)).delete()
    earlier.update(superseded=True)
    Finding.objects.create(
        task=task,
        kind=Finding.Kind.INVALID_TEST,
        severity=Finding.Severity.HIGH,
        message=f"Validation could not run: {first_line}",
        evidence={"output_tail": _scrub(reason)[-4000:]},
        source=VALIDATION_SOURCE,
        job=job,
        task_revision=revision,
    )
    task.validation = {
        "verified": False,
        "reasons": [f"validation could not run: {first_line}"],
        "could_not_run": first_line,
        "revision": revision,
        "job": job.pk if job else None,
    }
    task.validated_revision = None
    task.status = Task.Status.DRAFT
    task.save(update_fields=["validation", "validated_revision", "status", "updated_at"])


def _link(task: Task, outcome: ValidationOutcome, parts: list[str]) -> Linkage:
    """Which claimed tests verify which specs, and the observed edges (workers.linkage)."""
    tests = list(task.tests.prefetch_related("specs"))
    claims: dict[int, list[str]] = {}
    for test in tests:
        for spec in test.specs.all():
            claims.setdefault(spec.pk, []).append(test.nodeid)
    specs = [
        SpecEvidence(
            key=spec.key,
            part=spec.part,
            owns_part=spec.owns_part,
            # What the author claimed; a task made before claims were kept claims its links.
            claimed=tuple(spec.claimed_tests or claims.get(spec.pk, [])),
            kind=spec.kind,
            named_part="" if spec.part else _named_part(spec.statement, parts),
        )
        for spec in task.specs.all()
    ]
    evidence = [
        TestEvidence(nodeid=v.nodeid, role=v.role, needs_parts=tuple(v.needs_parts))
        for v in outcome.tests.values()
    ]
    # Claims are checked against parts only when every part was left out once.
    complete = len(parts) >= 2 and set(outcome.part_failures) == set(parts)
    return link_specs(specs=specs, tests=evidence, parts=parts if complete else [])


def _named_part(statement: str, parts: list[str]) -> str:
    """The one part whose function a spec's statement names first (a spec written by a person
    or a model says which function it is about); "" when it names none."""
    first: tuple[int, str] | None = None
    for part in parts:
        if "::" not in part:
            continue
        qualname = part.split("::", 1)[1]
        for name in {qualname, qualname.rsplit(".", 1)[-1]}:
            found = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", statement)
            if found and (first is None or found.start() < first[0]):
                first = (found.start(), part)
    return first[1] if first else ""


def _record_linkage(task: Task, linkage: Linkage) -> dict[tuple[str, str], str]:
    """Verifiers, verified flags and observed edges; returns the observed edges' details."""
    tests = {t.nodeid: t for t in task.tests.all()}
    specs = {s.key: s for s in task.specs.all()}
    links = TestCase.specs.through
    links.objects.filter(testcase__task=task).delete()
    links.objects.bulk_create(
        links(testcase_id=tests[nodeid].pk, specification_id=spec.pk)
        for key, spec in specs.items()
        for nodeid in linkage.verified_by.get(key, [])
        if nodeid in tests
    )
    for key, spec in specs.items():
        spec.verified = linkage.verified(key)
        spec.verification_note = linkage.notes.get(key, "")
    Specification.objects.bulk_update(specs.values(), ["verified", "verification_note"])
    task.dependencies.filter(evidence=SpecDependency.Evidence.OBSERVED).delete()
    SpecDependency.objects.bulk_create(
        SpecDependency(
            task=task,
            from_spec=specs[edge.from_key],
            to_spec=specs[edge.to_key],
            relation="needs",
            evidence=SpecDependency.Evidence.OBSERVED,
            detail=edge.detail,
        )
        for edge in linkage.observed
    )
    return {(e.from_key, e.to_key): e.detail for e in linkage.observed}


def _keep_claims(task: Task) -> None:
    """Before the first linkage replaces the links, they are the author's claims: keep them."""
    specs = [s for s in task.specs.prefetch_related("tests") if not s.claimed_tests]
    for spec in specs:
        spec.claimed_tests = sorted(t.nodeid for t in spec.tests.all())
    Specification.objects.bulk_update(specs, ["claimed_tests"])


@transaction.atomic
def task_validation_record(
    *,
    task: Task,
    revision: int,
    outcome: ValidationOutcome,
    parts: list[str],
    job: Job | None,
    output_tail: str = "",
    trivial: TrivialCheck | None = None,
) -> bool:
    """Write the outcome, replacing the previous validation's results. False when stale."""
    task = Task.objects.select_for_update().get(pk=task.pk)
    if task.revision != revision:
        return False
    tests = {t.nodeid: t for t in task.tests.all()}
    for nodeid, verdict in outcome.tests.items():
        test = tests.get(nodeid)
        if test is None:
            continue
        test.role = verdict.role
        test.runs = verdict.runs
        test.passes_base = verdict.passes_base
        test.passes_reference = verdict.passes_reference
        test.needs_parts = verdict.needs_parts
        test.last_message = "\n".join(filter(None, [verdict.reason, verdict.message]))[-4000:]
    TestCase.objects.bulk_update(
        tests.values(),
        ["role", "runs", "passes_base", "passes_reference", "needs_parts", "last_message"],
    )

    _keep_claims(task)
    linkage = _link(task, outcome, parts)
    merged = _record_linkage(task, linkage)
    verified_specs = sum(1 for key in linkage.verified_by if linkage.verified(key))
    reasons = list(outcome.reasons)
    verified = outcome.verified
    if verified and not verified_specs:
        verified = False
        reasons.append("no spec is verified by a FAIL_TO_PASS test")
    declared = {
        (d.from_spec.key, d.to_spec.key)
        for d in task.dependencies.filter(evidence="declared").select_related(
            "from_spec", "to_spec"
        )
    }

    earlier = task.findings.filter(source=VALIDATION_SOURCE)
    earlier.filter(Q(task_revision=revision) | Q(task_revision__isnull=True)).delete()
    earlier.update(superseded=True)
    findings = _findings(task, outcome, output_tail)
    for finding in findings:
        finding.source = VALIDATION_SOURCE
        finding.job = job
        finding.task_revision = revision
    Finding.objects.bulk_create(findings)
    reasons = [_scrub(r) for r in reasons]

    task.validation = {
        "verified": verified,
        "reasons": reasons,
        "could_not_run": validation_could_not_run(outcome),
        "revision": revision,
        "fail_to_pass": len(outcome.fail_to_pass),
        "pass_to_pass": len(outcome.pass_to_pass),
        "flaky": outcome.flaky,
        "part_failures": outcome.part_failures,
        "declared_confirmed": sorted(f"{a}->{b}" for a, b in declared if (a, b) in merged),
        "declared_unconfirmed": sorted(f"{a}->{b}" for a, b in declared if (a, b) not in merged),
        "specs_verified": verified_specs,
        "specs_unverified": sorted(linkage.notes, key=spec_key_order),
        "runs": [{**run.__dict__, "problem": _scrub(run.problem)} for run in outcome.runs],
        "seconds": outcome.seconds,
        "environment_key": outcome.environment_key,
        "job": job.pk if job else None,
    }
    task.interaction_score = outcome.interaction_score
    if trivial is not None:
        task.trivial = trivial.trivial
        task.metadata = {**(task.metadata or {}), "trivial": trivial.as_dict()}
    if verified:
        task.validated_revision = revision
        if task.status in (Task.Status.VALIDATING, Task.Status.DRAFT):
            task.status = Task.Status.NEEDS_REVIEW
    else:
        task.validated_revision = None
        if task.is_editable:
            task.status = Task.Status.DRAFT
    task.save(
        update_fields=[
            "validation",
            "interaction_score",
            "trivial",
            "metadata",
            "validated_revision",
            "status",
            "updated_at",
        ]
    )
    if task.audits.exists():
        # The findings on screen are those of the current revision: give it its own audit.
        task_audit_enqueue(task=task, only_if_changed=True)
    return True


def _findings(task: Task, outcome: ValidationOutcome, output_tail: str) -> list[Finding]:
    """What the validation found, one finding per cause: a validation that could not run, or
    tests that were never collected, make one finding with the output, not one per test."""
    problem = validation_could_not_run(outcome)
    if problem:
        return [
            Finding(
                task=task,
                kind=Finding.Kind.INVALID_TEST,
                severity=Finding.Severity.HIGH,
                message=f"Validation could not run: {problem}",
                evidence={
                    "output_tail": output_tail,
                    "tests": sorted(outcome.tests)[:200],
                    "reasons": [_scrub(r)[:2000] for r in outcome.reasons],
                },
            )
        ]
    findings = []
    never_collected = [v.nodeid for v in outcome.tests.values() if _never_collected(v)]
    if never_collected:
        shown = ", ".join(never_collected[:5])
        more = f" and {len(never_collected) - 5} more" if len(never_collected) > 5 else ""
        findings.append(
            Finding(
                task=task,
                kind=Finding.Kind.INVALID_TEST,
                severity=Finding.Severity.MEDIUM,
                message=f"{len(never_collected)} test(s) were never collected: {shown}{more}",
                evidence={"output_tail": output_tail, "tests": never_collected[:200]},
            )
        )
    for verdict in outcome.tests.values():
        if _never_collected(verdict):
            continue
        if verdict.role == "flaky":
            findings.append(
                Finding(
                    task=task,
                    kind=Finding.Kind.FLAKY,
                    severity=Finding.Severity.HIGH,
                    message=f"{verdict.nodeid} is flaky: {verdict.reason}",
                    evidence={
                        "test": verdict.nodeid,
                        "base": verdict.outcomes_base,
                        "reference": verdict.outcomes_reference,
                    },
                )
            )
        elif verdict.role == "invalid" and verdict.code == ReasonCode.REFERENCE_FAILS:
            findings.append(
                Finding(
                    task=task,
                    kind=Finding.Kind.REFERENCE_FAILS,
                    severity=Finding.Severity.HIGH,
                    message=f"{verdict.nodeid}: {verdict.reason}",
                    evidence={"test": verdict.nodeid, "message": verdict.message[-1000:]},
                )
            )
        elif verdict.role == "invalid":
            findings.append(
                Finding(
                    task=task,
                    kind=Finding.Kind.INVALID_TEST,
                    severity=Finding.Severity.MEDIUM,
                    message=f"{verdict.nodeid}: {verdict.reason}",
                    evidence={"test": verdict.nodeid, "base": verdict.outcomes_base},
                )
            )
    return findings
