"""Synthesis runs: a repository becomes tasks, each validated before anyone reviews it.

A run is a Job (kind `synthesize`, synthesis queue). Its handler calls an engine (procedural by
default, llm on request), stores every proposal as a draft task, validates each one in the
sandbox, and ends with a quality report stored on the job. Re-running the job replaces the
tasks it made before that nobody has touched since.
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from curation import runtime
from curation.models import Dataset, Repository, SpecDependency, Task, TestCase
from curation.services.tasks import TaskInputError, task_create
from curation.services.validation import task_validate_now
from workers import gitstore
from workers.models import Job
from workers.patchparts import PatchParseError, split_by_function
from workers.sandbox.serialize import run_result_from_dict, run_result_to_dict
from workers.sandbox.types import RunRequest, RunResult
from workers.services import JobFailed, job_enqueue

ENGINES = ("procedural", "llm")


class SynthesisInputError(ValueError):
    pass


def synthesis_enqueue(
    *,
    repository: Repository,
    dataset: Dataset,
    engine: str = "procedural",
    count: int = 10,
    seed: int = 0,
    user=None,
    llm: dict[str, Any] | None = None,
) -> Job:
    if engine not in ENGINES:
        raise SynthesisInputError(f"unknown engine {engine!r}; choose {' or '.join(ENGINES)}")
    if count < 1:
        raise SynthesisInputError("count must be at least 1")
    params = {
        "repository_id": repository.pk,
        "dataset_id": dataset.pk,
        "engine": engine,
        "count": count,
        "seed": seed,
    }
    if engine == "llm":
        llm = {k: v for k, v in (llm or {}).items() if v}
        # The key never goes into the job row: it stays in the settings/environment.
        llm.pop("api_key", None)
        if not (llm.get("base_url") or settings.LLM_BASE_URL):
            raise SynthesisInputError(
                "the llm engine needs a base URL (SPECLOOM_LLM_BASE_URL or --llm-base-url)"
            )
        params["llm"] = llm
    return job_enqueue(
        kind="synthesize",
        target=repository,
        params=params,
        user=user,
        message=f"synthesize {count} task(s) from {repository.name} ({engine}, seed {seed})",
    )


class CoverageCache:
    """Wrap a sandbox runner so the coverage run of a snapshot happens once.

    The coverage map depends only on the commit and the environment, so it is kept in storage
    keyed by both and reused by every later synthesis run on that commit.
    """

    def __init__(self, runner, folder: Path):
        self.runner = runner
        self.folder = folder
        self.hits = 0

    def _key(self, request: RunRequest) -> str:
        spec = request.environment
        material = json.dumps(
            [
                str(request.snapshot.git_dir),
                request.snapshot.commit,
                spec.setup_command,
                list(spec.extra_requirements),
                spec.python,
            ]
        )
        return hashlib.sha256(material.encode()).hexdigest()[:32]

    def __call__(self, request: RunRequest) -> RunResult:
        cacheable = request.coverage and not request.patches and request.tests is None
        if not cacheable:
            return self.runner(request)
        path = self.folder / f"{self._key(request)}.json"
        if path.exists():
            self.hits += 1
            return run_result_from_dict(json.loads(path.read_text()))
        result = self.runner(request)
        if result.ok and result.tests and result.coverage:
            self.folder.mkdir(parents=True, exist_ok=True)
            scratch = path.with_suffix(".tmp")
            scratch.write_text(json.dumps(run_result_to_dict(result)))
            scratch.replace(path)
        return result


def _part_specs(task: Task, proposal) -> dict[str, list[str]]:
    """The engine names parts `path::function`; validation names them `path::Class.method`."""
    by_short = {}
    for part in proposal.reference_parts:
        path, _, function = part.name.partition("::")
        by_short[(path, function.rsplit(".", 1)[-1])] = part.spec_keys
    try:
        parts = split_by_function(
            task.reference_patch,
            lambda path: gitstore.read_file(task.repository.git_dir, task.base_commit, path),
        )
    except PatchParseError:
        return {}
    mapping = {}
    for part in parts:
        path, _, qualified = part.name.partition("::")
        keys = by_short.get((path, qualified.rsplit(".", 1)[-1]))
        if keys is not None:
            mapping[part.name] = keys
    return mapping


def _store_proposal(*, proposal, repository: Repository, dataset: Dataset, job: Job, origin: str):
    verified_by: dict[str, list[str]] = {}
    for spec in proposal.specs:
        for nodeid in spec.verified_by:
            verified_by.setdefault(nodeid, []).append(spec.key)
    tests = [
        {"nodeid": n, "intended_role": "FAIL_TO_PASS", "specs": verified_by.get(n, [])}
        for n in proposal.fail_to_pass
    ] + [
        {"nodeid": n, "intended_role": "PASS_TO_PASS", "specs": verified_by.get(n, [])}
        for n in proposal.pass_to_pass
        if n not in set(proposal.fail_to_pass)
    ]
    with transaction.atomic():
        task = task_create(
            repository=repository,
            dataset=dataset,
            title=proposal.title,
            problem_statement=proposal.problem_statement,
            base_commit=proposal.base_commit,
            reference_patch=proposal.reference_patch,
            test_patch=proposal.test_patch,
            specs=[
                {"key": s.key, "kind": s.kind, "statement": s.statement, "rationale": s.rationale}
                for s in proposal.specs
            ],
            tests=tests,
            dependencies=[
                {"from": d.from_key, "to": d.to_key, "relation": d.relation}
                for d in proposal.dependencies
                if d.from_key != d.to_key
            ],
            origin=origin,
            difficulty=proposal.difficulty.bucket,
            difficulty_score=proposal.difficulty.score,
            metadata={
                "synthesis": proposal.metadata,
                "difficulty_factors": proposal.difficulty.factors,
            },
            synthesis_job=job,
        )
        task.metadata["part_specs"] = _part_specs(task, proposal)
        task.save(update_fields=["metadata"])
    return task


def _run_engine(*, job: Job, repository: Repository, runner, progress):
    params = job.params
    snapshot = runtime.snapshot_for(repository)
    environment = runtime.environment_for(repository)
    if params["engine"] == "llm":
        from workers.synthesis.llm import LLMConfig, synthesize_llm

        llm = params.get("llm") or {}
        config = LLMConfig(
            base_url=llm.get("base_url") or settings.LLM_BASE_URL,
            model=llm.get("model") or settings.LLM_MODEL,
            api_key=settings.LLM_API_KEY or "not-needed",
            timeout_seconds=float(llm.get("timeout_seconds") or settings.LLM_TIMEOUT_SECONDS),
        )
        return synthesize_llm(
            snapshot=snapshot,
            environment=environment,
            runner=runner,
            config=config,
            count=params["count"],
            seed=params["seed"],
            rounds=int(llm.get("rounds", 3)),
            progress=progress,
        )
    from workers.synthesis import synthesize_procedural

    return synthesize_procedural(
        snapshot=snapshot,
        environment=environment,
        runner=runner,
        count=params["count"],
        seed=params["seed"],
        commit_base=repository.git_dir,
        progress=progress,
        limits=runtime.sandbox_limits(),
    )


def synthesis_run(*, job: Job, ctx) -> dict[str, Any]:
    started = time.monotonic()
    repository = Repository.objects.get(pk=job.params["repository_id"])
    dataset = Dataset.objects.get(pk=job.params["dataset_id"])
    engine = job.params["engine"]
    # A re-run (the worker died) replaces what the earlier attempt left untouched.
    Task.objects.filter(
        synthesis_job=job, status__in=[Task.Status.DRAFT, Task.Status.VALIDATING], revision=1
    ).delete()

    cache = CoverageCache(runtime.run_in_sandbox, settings.STORAGE_ROOT / "coverage")
    outcome = _run_engine(
        job=job,
        repository=repository,
        runner=cache,
        progress=lambda percent, message: ctx.progress(int(percent * 0.4), message),
    )
    ctx.log(
        f"engine {engine}: {len(outcome.proposals)} proposals, {len(outcome.rejected)} rejected"
    )
    synthesis_seconds = time.monotonic() - started

    origin = Task.Origin.LLM if engine == "llm" else Task.Origin.PROCEDURAL
    tasks = []
    for proposal in outcome.proposals:
        try:
            stored = _store_proposal(
                proposal=proposal, repository=repository, dataset=dataset, job=job, origin=origin
            )
        except TaskInputError as exc:
            # A proposal the save-time gates refuse (empty statement, a patch that does not
            # compile) is dropped with its reason; the other proposals are still stored.
            ctx.log(f"proposal {proposal.title!r} not stored: {exc}")
            continue
        tasks.append(stored)

    validation_failures: Counter[str] = Counter()
    validation_seconds = []
    for index, task in enumerate(tasks):
        Task.objects.filter(pk=task.pk).update(status=Task.Status.VALIDATING)
        task.status = Task.Status.VALIDATING
        validation_outcome, _ = task_validate_now(
            task=task,
            job=job,
            progress=_scaled_progress(ctx, index, len(tasks)),
            log=ctx.log,
        )
        validation_seconds.append(validation_outcome.seconds)
        if not validation_outcome.verified:
            for reason in validation_outcome.reasons:
                validation_failures[_reason_category(reason)] += 1

    report = synthesis_report(
        job=job,
        engine_report=outcome.report,
        rejected=outcome.rejected,
        validation_failures=validation_failures,
        seconds=time.monotonic() - started,
        synthesis_seconds=synthesis_seconds,
        validation_seconds=validation_seconds,
        coverage_cache_hits=cache.hits,
    )
    result = {
        "message": (
            f"{report['tasks_produced']} task(s), {report['verified']} verified, "
            f"{report['rejected_total']} rejected"
            + (
                f" ({report['engine_status']}: {report['engine_reason']})"
                if report.get("engine_reason")
                else ""
            )
        ),
        "report": report,
    }
    if not report["tasks_produced"]:
        # Nothing came out: the job failed, whatever ran without crashing (the report says why).
        raise JobFailed(f"failed: {result['message']}"[:500], result=result)
    return result


def _scaled_progress(ctx, index: int, total: int):
    """Validation of task `index` of `total` fills its share of the job's last 60%."""
    base = 40 + 60 * index / max(1, total)
    span = 60 / max(1, total)

    def report(percent: int, message: str) -> None:
        ctx.progress(
            min(99, int(base + span * percent / 100)), f"validating {index + 1}/{total}: {message}"
        )

    return report


def _reason_category(reason: str) -> str:
    for marker, category in (
        ("does not apply", "patch does not apply"),
        ("reference solution fails", "reference fails tests"),
        ("no FAIL_TO_PASS", "no FAIL_TO_PASS test survived"),
        ("wall-clock", "timeout"),
        ("memory", "memory limit"),
    ):
        if marker in reason:
            return f"validation: {category}"
    return "validation: other"


def synthesis_report(
    *,
    job: Job,
    engine_report: dict[str, Any],
    rejected,
    validation_failures: Counter,
    seconds: float,
    synthesis_seconds: float,
    validation_seconds: list[float],
    coverage_cache_hits: int,
) -> dict[str, Any]:
    """The run's quality report: what was tried, what survived, and how coupled it is."""
    tasks = list(Task.objects.filter(synthesis_job=job).prefetch_related("specs"))
    verified = [t for t in tasks if t.validation.get("verified")]
    roles = Counter(
        TestCase.objects.filter(task__in=tasks).values_list("role", flat=True).iterator()
    )
    edges = Counter(
        SpecDependency.objects.filter(task__in=tasks).values_list("evidence", flat=True).iterator()
    )
    by_reason: Counter[str] = Counter(f"synthesis: {r.reason}" for r in rejected)
    by_reason.update(validation_failures)
    scores = [t.interaction_score for t in verified if t.interaction_score is not None]
    verified_quality = {
        "with_two_or_more_specs": sum(1 for t in verified if len(t.specs.all()) >= 2),
        "with_observed_edge": sum(
            1 for t in verified if t.dependencies.filter(evidence="observed").exists()
        ),
        "with_multi_part_fail_to_pass": sum(1 for t in verified if (t.interaction_score or 0) > 0),
        "with_flaky_test": sum(1 for t in verified if t.tests.filter(role="flaky").exists()),
    }
    return {
        "engine": job.params.get("engine"),
        "engine_status": engine_report.get("status", "ok"),
        "engine_reason": engine_report.get("reason", ""),
        "candidates": engine_report.get("candidates"),
        "clusters": engine_report.get("clusters"),
        "tasks_produced": len(tasks),
        "verified": len(verified),
        "verified_share": round(len(verified) / len(tasks), 4) if tasks else 0.0,
        "rejected_total": sum(by_reason.values()),
        "rejected_by_reason": dict(sorted(by_reason.items())),
        "mean_specs_per_task": round(statistics.mean(len(t.specs.all()) for t in tasks), 2)
        if tasks
        else 0.0,
        "dependency_edges": {
            "declared": edges.get("declared", 0),
            "observed": edges.get("observed", 0),
        },
        "fail_to_pass": roles.get("FAIL_TO_PASS", 0),
        "pass_to_pass": roles.get("PASS_TO_PASS", 0),
        "flaky": roles.get("flaky", 0),
        "invalid": roles.get("invalid", 0),
        "interaction_score_mean": round(statistics.mean(scores), 4) if scores else None,
        "verified_quality": verified_quality,
        "seconds_total": round(seconds, 1),
        "seconds_synthesis": round(synthesis_seconds, 1),
        "seconds_per_task": round(seconds / len(tasks), 1) if tasks else None,
        "seconds_validation_per_task": round(statistics.mean(validation_seconds), 1)
        if validation_seconds
        else None,
        "coverage_cache_hits": coverage_cache_hits,
        "task_ids": [t.pk for t in tasks],
    }


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"engine: {report['engine']} ({report['engine_status']}"
        + (f": {report['engine_reason']}" if report.get("engine_reason") else "")
        + ")",
        f"candidates: {report['candidates']}   clusters: {report['clusters']}",
        f"tasks produced: {report['tasks_produced']}   verified: {report['verified']} "
        f"({100 * report['verified_share']:.0f}%)",
        f"rejected: {report['rejected_total']}",
    ]
    lines += [f"  {count:4d}  {reason}" for reason, count in report["rejected_by_reason"].items()]
    edges = report["dependency_edges"]
    lines += [
        f"mean specs per task: {report['mean_specs_per_task']}",
        f"dependency edges: {edges['declared']} declared, {edges['observed']} observed",
        f"tests: {report['fail_to_pass']} FAIL_TO_PASS, {report['pass_to_pass']} PASS_TO_PASS, "
        f"{report['flaky']} flaky, {report['invalid']} invalid",
        f"interaction score (mean over verified): {report['interaction_score_mean']}",
        f"verified tasks: {json.dumps(report['verified_quality'])}",
        f"time: {report['seconds_total']}s total, {report['seconds_per_task']}s per task "
        f"(synthesis {report['seconds_synthesis']}s, validation "
        f"{report['seconds_validation_per_task']}s per task)",
    ]
    return "\n".join(lines)
