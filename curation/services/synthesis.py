"""Synthesis runs: a repository becomes tasks, each validated before anyone reviews it.

A run is a Job (kind `synthesize`, synthesis queue). Its handler calls an engine (procedural by
default, llm on request), stores every proposal as a draft task, validates each one in the
sandbox, and ends with a quality report stored on the job. Re-running the job replaces the
tasks it made before that nobody has touched since.
"""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from typing import Any

from django.conf import settings
from django.db import transaction

from curation import runtime
from curation.models import Dataset, EnvironmentRecipe, Repository, SpecDependency, Task, TestCase
from curation.selectors.quality import quality_report
from curation.services.recipes import recipe_prepare
from curation.services.repositories import RepositoryNotReady, repository_check_usable
from curation.services.tasks import TaskInputError, task_create
from curation.services.validation import task_validate_now, task_validation_abandon
from workers.models import Job
from workers.recipes.report import suite_shortfall
from workers.sandbox import SandboxError
from workers.services import JobFailed, job_enqueue
from workers.synthesis.statement import tidy_title
from workers.validation import ReasonCode

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
    try:
        repository_check_usable(repository)
    except RepositoryNotReady as exc:
        raise SynthesisInputError(str(exc)) from None
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
            title=tidy_title(proposal.title),
            problem_statement=proposal.problem_statement,
            base_commit=proposal.base_commit,
            reference_patch=proposal.reference_patch,
            test_patch=proposal.test_patch,
            specs=[
                {
                    "key": s.key,
                    "kind": s.kind,
                    "statement": s.statement,
                    "rationale": s.rationale,
                    "part": s.part,
                    "owns_part": s.owns_part,
                }
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
    return task


def _run_engine(*, job: Job, repository: Repository, runner, progress):
    params = job.params
    snapshot = runtime.snapshot_for(repository)
    environment = runtime.environment_for(repository)
    if params["engine"] == "llm":
        from workers.llm_client import LLMConfig
        from workers.synthesis.llm import synthesize_llm

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
    """The synthesize job: a working recipe first, then the engine's proposals stored as draft
    tasks and validated one by one. A run with no verified task fails with its cause and how
    to fix it; a run cut short leaves no half-made task behind."""
    started = time.monotonic()
    repository = Repository.objects.get(pk=job.params["repository_id"])
    dataset = Dataset.objects.get(pk=job.params["dataset_id"])
    # A re-run (the worker died) replaces what the earlier attempt left unfinished.
    synthesis_discard_unfinished(job)
    ctx.progress(1, f"preparing the environment of {repository.name}")
    recipe = recipe_prepare(repository=repository, log=ctx.log)
    if recipe.status != EnvironmentRecipe.Status.OK:
        raise JobFailed(
            f"0 of {job.params['count']} asked: the repository's environment does not work: "
            f"{recipe.reason}. Fix: {recipe.hint}",
            result={"recipe_id": recipe.pk, "environment": recipe.report},
        )
    if recipe.reason:
        ctx.log(f"environment: {recipe.reason} ({recipe.hint})")
    try:
        report = _synthesize_and_validate(
            job=job, ctx=ctx, repository=repository, dataset=dataset, started=started
        )
    except BaseException:
        synthesis_discard_unfinished(job)
        raise
    report["environment"] = recipe.report.get("summary", "")
    asked, verified = job.params["count"], report["verified"]
    message = f"{verified} of {asked} asked verified ({report['tasks_produced']} produced)"
    if not verified:
        reason, hint = no_task_reason(report)
        if broken := suite_shortfall(recipe.report):
            # What the engine then met (too few failing tests, nothing covered) follows from it.
            reason, hint = f"{broken}; so {reason}", SUITE_SHORTFALL_HINT
        raise JobFailed(f"{message}: {reason}. Fix: {hint}", result={"report": report})
    if verified < asked:
        message += f"; short by {asked - verified}: {no_task_reason(report)[0]}"
    return {"message": message, "report": report}


def synthesis_discard_unfinished(job: Job) -> int:
    """Delete the tasks a synthesis attempt made and did not finish validating (nobody has
    touched them: revision 1), so that a retry or a crash never leaves duplicates or tasks
    stuck in validating."""
    deleted, _ = Task.objects.filter(
        synthesis_job=job, status__in=[Task.Status.DRAFT, Task.Status.VALIDATING], revision=1
    ).delete()
    return deleted


def _synthesize_and_validate(*, job, ctx, repository, dataset, started) -> dict[str, Any]:
    engine = job.params["engine"]
    cache = runtime.coverage_cached_runner()
    outcome = _run_engine(
        job=job,
        repository=repository,
        runner=cache,
        progress=lambda percent, message: ctx.progress(2 + int(percent * 0.38), message),
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
        try:
            validation_outcome, _ = task_validate_now(
                task=task,
                job=job,
                progress=_scaled_progress(ctx, index, len(tasks)),
                log=ctx.log,
            )
        except SandboxError as exc:
            # This task could not be validated: it goes back to draft with the reason.
            task_validation_abandon(task=task, revision=task.revision, reason=str(exc), job=job)
            validation_failures["validation: the sandbox could not run"] += 1
            ctx.log(f"{task.instance_id}: validation could not run: {str(exc)[:300]}")
            continue
        validation_seconds.append(validation_outcome.seconds)
        if not validation_outcome.verified:
            for reason in validation_outcome.problems:
                validation_failures[_reason_category(reason.code)] += 1
    return synthesis_report(
        job=job,
        engine_report=outcome.report,
        rejected=outcome.rejected,
        validation_failures=validation_failures,
        seconds=time.monotonic() - started,
        synthesis_seconds=synthesis_seconds,
        validation_seconds=validation_seconds,
        coverage_cache_hits=cache.hits,
    )


SUITE_SHORTFALL_HINT = (
    "most of its suite does not run in this environment: read the environment report, then add "
    "what the tests need to the recipe (packages, environment variables, setup commands), or "
    "import a source whose tests run (an sdist may leave out the tests' own helpers)"
)

# What to do about the most common reason a run yields nothing.
_HINTS = (
    (
        "no function with a real body is covered",
        "read the environment report: most tests may "
        "fail or not collect; fix the recipe, or pick a repository whose tests cover its code",
    ),
    (
        "are coupled",
        "ask for more tasks or another seed; its code has few functions that call one another",
    ),
    (
        "stub runs at import",
        "its code runs at import time (decorators, registries): another seed picks other functions",
    ),
    (
        "breaks test collection",
        "its tests import what the stubs remove: another seed picks other functions",
    ),
    (
        "no covering test fails",
        "its tests do not check these functions' results: another seed picks other functions",
    ),
    ("patch does not apply", "report it: a synthesized patch should always apply"),
    (
        "reference fails",
        "its tests are flaky or depend on the environment: raise the reruns or fix the recipe",
    ),
    (
        "sandbox could not run",
        "read the job's log for the sandbox's error (bubblewrap, cgroups, a C compiler)",
    ),
    ("no FAIL_TO_PASS", "its tests do not fail without the removed code: another seed"),
    (
        "too few FAIL_TO_PASS",
        "its tests check these functions too little (a verified task needs 3 hidden tests from "
        "2 test functions): another seed picks other functions",
    ),
    (
        "no interaction test",
        "no hidden test needs two of the functions together: another seed picks other functions",
    ),
    ("cluster(s) of coupled", "ask for fewer tasks, or synthesize from a larger repository"),
)


def no_task_reason(report: dict[str, Any]) -> tuple[str, str]:
    """(cause, fix) of a run's shortfall, in one sentence each."""
    if report.get("engine_reason"):
        cause = f"{report['engine_status']}: {report['engine_reason']}"
    elif report.get("rejected_by_reason"):
        top, count = max(report["rejected_by_reason"].items(), key=lambda item: item[1])
        cause = f"{report['rejected_total']} rejected (most often {count}x: {top})"
    elif report.get("tasks_produced", 0) > report.get("verified", 0):
        cause = f"{report['tasks_produced'] - report['verified']} task(s) did not verify"
    elif report.get("clusters") is not None:
        cause = f"the repository offers only {report['clusters']} cluster(s) of coupled functions"
    else:
        cause = "the engine proposed no more tasks"
    hint = next(
        (fix for marker, fix in _HINTS if marker in cause),
        "read the report's rejections and the environment report",
    )
    return cause, hint


def _scaled_progress(ctx, index: int, total: int):
    """Validation of task `index` of `total` fills its share of the job's last 60%."""
    base = 40 + 60 * index / max(1, total)
    span = 60 / max(1, total)

    def report(percent: int, message: str) -> None:
        ctx.progress(
            min(99, int(base + span * percent / 100)), f"validating {index + 1}/{total}: {message}"
        )

    return report


# How a run's report groups the reasons validation gave; any other code is "other".
_REASON_CATEGORIES = {
    ReasonCode.PART_CANNOT_RUN: "a leave-one-out patch does not apply",
    ReasonCode.TOO_FEW_TESTS: "too few FAIL_TO_PASS tests",
    ReasonCode.NO_INTERACTION: "no interaction test",
    ReasonCode.TOO_FEW_PARTS: "no interaction test",
    ReasonCode.PATCH_DOES_NOT_APPLY: "patch does not apply",
    ReasonCode.REFERENCE_FAILS: "reference fails tests",
    ReasonCode.NO_FAIL_TO_PASS: "no FAIL_TO_PASS test survived",
    ReasonCode.TIMED_OUT: "timeout",
    ReasonCode.MEMORY_LIMIT: "memory limit",
}


def _reason_category(code: ReasonCode) -> str:
    return f"validation: {_REASON_CATEGORIES.get(code, 'other')}"


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
    quality = quality_report(tasks=Task.objects.filter(synthesis_job=job))
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
        "with_two_or_more_specs": sum(
            1 for t in verified if sum(s.verified for s in t.specs.all()) >= 2
        ),
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
        # Only verified specs count (a FAIL_TO_PASS test verifies them).
        "mean_specs_per_task": round(
            statistics.mean(sum(s.verified for s in t.specs.all()) for t in tasks), 2
        )
        if tasks
        else 0.0,
        "unverified_specs": sum(1 for t in tasks for s in t.specs.all() if not s.verified),
        "quality": quality,
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
    quality = report.get("quality") or {}
    lines += [
        f"mean specs per task: {report['mean_specs_per_task']} verified "
        f"({report.get('unverified_specs', 0)} unverified, not counted)",
        "quality of the verified tasks: "
        + ", ".join(
            f"{key} {quality.get(key)}"
            for key in (
                "median_tested_specs_per_task",
                "median_f2p_tests_per_task",
                "f2p_linked_share",
                "median_interaction_score",
                "tasks_without_interaction_test",
                "trivial_share",
                "example_coverage",
            )
        ),
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
