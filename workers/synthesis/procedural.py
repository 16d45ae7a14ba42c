"""The procedural synthesis engine: tasks from a repository without any model.

One coverage run of the whole suite maps tests to functions; clusters of coupled functions are
chosen from that map; each cluster costs one more sandbox run (its bodies stubbed, only the
tests that matter selected) to learn which tests fail without it. Everything else is text work
on the snapshot's files.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from workers.gitstore import commit_patch
from workers.sandbox.types import (
    EnvironmentSpec,
    Limits,
    Outcome,
    RunRequest,
    RunResult,
    Snapshot,
    run_despite_load,
)
from workers.synthesis.callgraph import CallGraph, build_call_graph
from workers.synthesis.candidates import CandidatePolicy, select_candidates
from workers.synthesis.clusters import Cluster, form_clusters
from workers.synthesis.coverage_map import CoverageMap, build_coverage_map, normalise_context
from workers.synthesis.edits import (
    LineEdit,
    apply_edits,
    creation_patch,
    deletion_patch,
    file_patch,
    invert_edits,
    split_lines,
)
from workers.synthesis.example_tests import enough_tests, hold_out_example_tests
from workers.synthesis.examples import TestSources
from workers.synthesis.functions import FunctionInfo, FunctionTable, build_function_table
from workers.synthesis.hidden_tests import plan_test_removal, split_nodeid
from workers.synthesis.procedural_proposal import cluster_proposal, group_by_file
from workers.synthesis.proposals import (
    Rejection,
    SynthesisOutcome,
    TaskProposal,
)
from workers.synthesis.reporting import synthesis_report, unusable_outcome
from workers.synthesis.source import SourceTree, is_test_path, read_snapshot
from workers.synthesis.statement import task_title
from workers.synthesis.stubs import stub_edits
from workers.synthesis.trivial import near_copies

Runner = Callable[[RunRequest], RunResult]
# (parent commit, patch, message) -> new commit id
CommitBase = Callable[[str, str, str], str]
Progress = Callable[[int, str], None]

_FAILING = (Outcome.FAILED, Outcome.ERROR)


@dataclass(frozen=True)
class ProceduralSettings:
    max_pass_to_pass: int = 30
    # Tests of callers outside the cluster, and neighbours (tests of the functions the cluster
    # uses, other tests of the same test files): enough to notice a broken neighbour and to
    # give PASS_TO_PASS tests, few enough to keep the stub run short.
    max_caller_tests: int = 40
    max_neighbour_tests: int = 30
    parallel_runs: int = 2
    candidates: CandidatePolicy = field(default_factory=CandidatePolicy)


class RepositoryUnusable(Exception):
    """The snapshot cannot give tasks; the message says why, for the report."""


def synthesize_procedural(
    *,
    snapshot: Snapshot,
    environment: EnvironmentSpec,
    runner: Runner,
    count: int,
    seed: int,
    commit_base: CommitBase | Path | None = None,
    progress: Progress | None = None,
    limits: Limits | None = None,
    settings: ProceduralSettings | None = None,
    tree: SourceTree | None = None,
) -> SynthesisOutcome:
    """Up to `count` tasks from `snapshot`; the same inputs and seed give the same tasks.

    `commit_base` makes the base commits: a callable (parent, patch, message) -> commit id, or
    the bare repository to commit into (default: the snapshot's own). `tree` lets a caller that
    already read the snapshot's files pass them in.
    """
    started = time.monotonic()
    settings = settings or ProceduralSettings()
    limits = limits or Limits()
    report_progress = progress or (lambda _percent, _message: None)
    committer = _committer(commit_base, snapshot)
    try:
        report_progress(1, "Reading the snapshot")
        tree = tree if tree is not None else _read(snapshot)
        table = build_function_table(tree)
        if not table.functions:
            raise RepositoryUnusable("no Python functions outside test code")
        report_progress(5, "Running the test suite with coverage")
        baseline = _baseline(runner, snapshot, environment, limits)
    except RepositoryUnusable as unusable:
        return unusable_outcome(str(unusable), started)

    # The map is made of the tests in test files only: a doctest lives in the docstring of the
    # code it checks and could never be hidden, so it covers nothing a task could be made of.
    test_file_results = {
        nodeid: result
        for nodeid, result in baseline.tests.items()
        if is_test_path(split_nodeid(nodeid)[0])
    }
    coverage = {
        context: files
        for context, files in (baseline.coverage or {}).items()
        if normalise_context(context) not in baseline.tests
        or normalise_context(context) in test_file_results
    }
    cmap = build_coverage_map(table, coverage, test_file_results)
    graph = build_call_graph(table)
    copies = {
        f"{path}::{name}"
        for path in {f.path for f in table.functions.values()}
        for name in near_copies(tree.files[path])
    }
    candidates, skipped = select_candidates(table, cmap, settings.candidates, copies)
    clusters = form_clusters(candidates, graph, cmap, table, seed=seed, wanted=count)
    report_progress(25, f"{len(candidates)} candidate functions, {len(clusters)} clusters")

    context = _Context(
        snapshot=snapshot,
        environment=environment,
        runner=runner,
        limits=limits,
        settings=settings,
        seed=seed,
        tree=tree,
        table=table,
        graph=graph,
        cmap=cmap,
        tests=TestSources({p: tree.files[p] for p in tree.test_paths}),
        all_tests=set(baseline.tests),
        baseline_errors={e.path for e in baseline.collection_errors},
        passing_by_file=_by_file(cmap.passing),
        committer=committer,
    )
    proposals: list[TaskProposal] = []
    rejected: list[Rejection] = []
    tried = 0
    width = max(1, settings.parallel_runs)
    with ThreadPoolExecutor(max_workers=width) as pool:
        for wave_start in range(0, len(clusters), width):
            if len(proposals) >= count:
                break
            wave = clusters[wave_start : wave_start + width]
            # Only the sandbox runs go in parallel; the text work before and after them runs
            # in cluster order, one cluster at a time, so that threads cannot change what a
            # seed yields whatever the machine's load.
            prepared = [context.prepare(cluster) for cluster in wave]
            runs = list(pool.map(context.run_stub, prepared))
            for cluster, plan, run in zip(wave, prepared, runs, strict=True):
                if len(proposals) >= count:
                    break
                tried += 1
                result = context.finish(cluster, plan, run)
                if isinstance(result, Rejection):
                    rejected.append(result)
                else:
                    proposals.append(result)
                    report_progress(
                        25 + int(70 * len(proposals) / max(count, 1)),
                        f"{len(proposals)} of {count} tasks ({cluster.functions[0]})",
                    )
    elapsed = time.monotonic() - started
    report = synthesis_report(
        proposals=proposals,
        rejected=rejected,
        candidates=candidates,
        skipped=skipped,
        clusters=clusters,
        tried=tried,
        baseline=baseline,
        elapsed=elapsed,
    )
    report_progress(100, f"{len(proposals)} tasks, {len(rejected)} clusters rejected")
    return SynthesisOutcome(proposals=proposals, rejected=rejected, report=report)


def _committer(commit_base: CommitBase | Path | None, snapshot: Snapshot) -> CommitBase:
    if callable(commit_base):
        return commit_base
    git_dir = Path(commit_base) if commit_base is not None else Path(snapshot.git_dir)

    def commit(parent: str, patch: str, message: str) -> str:
        return commit_patch(git_dir, parent, patch, message)

    return commit


def _read(snapshot: Snapshot) -> SourceTree:
    try:
        return read_snapshot(snapshot)
    except Exception as error:
        raise RepositoryUnusable(f"the snapshot could not be read: {error}") from error


def _baseline(runner: Runner, snapshot, environment, limits) -> RunResult:
    try:
        result = runner(
            RunRequest(snapshot=snapshot, environment=environment, coverage=True, limits=limits)
        )
    except Exception as error:  # the sandbox's own failures (environment build) end up here
        raise RepositoryUnusable(f"the sandbox could not run the tests: {error}") from error
    if result.timed_out:
        raise RepositoryUnusable("the test suite timed out at the snapshot")
    if result.memory_exceeded:
        raise RepositoryUnusable("the test suite ran out of memory at the snapshot")
    if not result.tests:
        if result.collection_errors:
            first = result.collection_errors[0]
            raise RepositoryUnusable(
                f"no test could be collected at the snapshot ({len(result.collection_errors)} "
                f"collection errors; first in {first.path}: {first.message.strip()[-300:]})"
            )
        tail = (result.stderr_tail or result.stdout_tail).strip()[-500:]
        raise RepositoryUnusable(
            f"no tests found at the snapshot (exit code {result.exit_code})"
            + (f": {tail}" if tail else "")
        )
    if not any(r.outcome == Outcome.PASSED for r in result.tests.values()):
        raise RepositoryUnusable(f"none of the {len(result.tests)} tests passes at the snapshot")
    if not result.coverage:
        raise RepositoryUnusable("the coverage run returned no coverage data")
    return result


@dataclass
class _StubPlan:
    """A cluster's stub run, planned: the stubbed files and the request, before it runs."""

    functions: list[FunctionInfo]
    rng: random.Random
    by_file: dict[str, list[FunctionInfo]]
    originals: dict[str, str]
    edits: dict[str, list[LineEdit]]
    stubbed: dict[str, str]
    stub_patch: str
    selected: list[str]
    request: RunRequest
    started: float


@dataclass
class _Context:
    """What every cluster attempt shares; attempts only read it, so threads may share it."""

    snapshot: Snapshot
    environment: EnvironmentSpec
    runner: Runner
    limits: Limits
    settings: ProceduralSettings
    seed: int
    tree: SourceTree
    table: FunctionTable
    graph: CallGraph
    cmap: CoverageMap
    tests: TestSources
    all_tests: set[str]
    baseline_errors: set[str]
    passing_by_file: dict[str, set[str]]
    committer: CommitBase

    def prepare(self, cluster: Cluster) -> _StubPlan | Rejection:
        try:
            return self._prepare(cluster)
        except Exception as error:  # one broken cluster must not end the whole job
            return Rejection(cluster.functions, f"internal error: {type(error).__name__}")

    def run_stub(self, plan: _StubPlan | Rejection) -> RunResult | None:
        if isinstance(plan, Rejection):
            return None
        return self._stub_run(plan.request)

    def finish(
        self, cluster: Cluster, plan: _StubPlan | Rejection, run: RunResult | None
    ) -> TaskProposal | Rejection:
        if isinstance(plan, Rejection) or run is None:
            return plan if isinstance(plan, Rejection) else Rejection(cluster.functions, "no run")
        try:
            return self._finish(cluster, plan, run)
        except Exception as error:  # one broken cluster must not end the whole job
            return Rejection(cluster.functions, f"internal error: {type(error).__name__}")

    def _prepare(self, cluster: Cluster) -> _StubPlan:
        started = time.monotonic()
        functions = [self.table.functions[fid] for fid in cluster.functions]
        rng = random.Random(f"{self.seed}:{'|'.join(cluster.functions)}")  # noqa: S311
        by_file = group_by_file(functions)
        originals = {path: self.tree.files[path] for path in by_file}
        edits = {path: stub_edits(originals[path], fns) for path, fns in by_file.items()}
        stubbed = {path: apply_edits(originals[path], edits[path]) for path in by_file}
        stub_patch = "".join(file_patch(p, originals[p], edits[p]) for p in sorted(by_file))

        covering = self.cmap.covering(cluster.functions)
        callers = sorted(
            {c for fid in cluster.functions for c in self.graph.callers.get(fid, set())}
            - set(cluster.functions)
        )
        caller_tests = _sample(
            rng, self.cmap.covering(callers) - covering, self.settings.max_caller_tests
        )
        callees = {c for fid in cluster.functions for c in self.graph.callees.get(fid, set())}
        neighbours = self.cmap.covering(callees - set(cluster.functions))
        for test_file in {split_nodeid(t)[0] for t in covering}:
            neighbours |= self.passing_by_file.get(test_file, set())
        neighbour_tests = _sample(
            rng, neighbours - covering - set(caller_tests), self.settings.max_neighbour_tests
        )
        # Only tests in test files: a doctest lives in the docstring of the code it checks,
        # which the stub patch edits too, so it could never be hidden as a test patch.
        selected = sorted(
            t
            for t in covering | set(caller_tests) | set(neighbour_tests)
            if is_test_path(split_nodeid(t)[0])
        )
        request = RunRequest(
            snapshot=self.snapshot,
            environment=self.environment,
            patches=(stub_patch,),
            tests=tuple(selected),
            limits=self.limits,
        )
        return _StubPlan(
            functions=functions,
            rng=rng,
            by_file=by_file,
            originals=originals,
            edits=edits,
            stubbed=stubbed,
            stub_patch=stub_patch,
            selected=selected,
            request=request,
            started=started,
        )

    def _finish(
        self, cluster: Cluster, plan: _StubPlan, run: RunResult
    ) -> TaskProposal | Rejection:
        functions, rng, by_file = plan.functions, plan.rng, plan.by_file
        originals, edits, stubbed = plan.originals, plan.edits, plan.stubbed
        stub_patch, selected, started = plan.stub_patch, plan.selected, plan.started
        rejection = self._check_stub_run(cluster, run)
        if rejection is not None:
            return rejection
        fail_to_pass = [t for t in selected if t in run.tests and run.tests[t].outcome in _FAILING]
        still_passing = [
            t for t in selected if t in run.tests and run.tests[t].outcome == Outcome.PASSED
        ]
        if not fail_to_pass:
            return Rejection(cluster.functions, "no covering test fails without the bodies")
        held_out = hold_out_example_tests(
            functions=functions,
            fail_to_pass=fail_to_pass,
            tree=self.tree,
            table=self.table,
            graph=self.graph,
            cmap=self.cmap,
            tests=self.tests,
        )
        kept_visible = {case for _, cases, _ in held_out.values() for case in cases}
        fail_to_pass = [t for t in fail_to_pass if t not in kept_visible]
        if not enough_tests(fail_to_pass):
            return Rejection(cluster.functions, "too few FAIL_TO_PASS tests for the gates")

        removal = plan_test_removal(self.tree.files, fail_to_pass, self.all_tests)
        pass_to_pass = [t for t in still_passing if t not in removal.removed]
        if len(pass_to_pass) > self.settings.max_pass_to_pass:
            pass_to_pass = sorted(rng.sample(pass_to_pass, self.settings.max_pass_to_pass))

        removal_patch, test_patch = self._test_patches(removal)
        reference_edits = {
            path: invert_edits(split_lines(originals[path]), edits[path]) for path in by_file
        }
        reference_patch = "".join(
            file_patch(p, stubbed[p], reference_edits[p]) for p in sorted(by_file)
        )
        try:
            base_commit = self.committer(
                self.snapshot.commit,
                stub_patch + removal_patch,
                f"specloom: base state for {task_title(functions)}",
            )
        except Exception as error:
            detail = str(error).strip().splitlines()[-1:] or [type(error).__name__]
            return Rejection(cluster.functions, f"base commit failed: {detail[0][:200]}")

        return cluster_proposal(
            self,
            cluster=cluster,
            functions=functions,
            originals=originals,
            stubbed=stubbed,
            base_commit=base_commit,
            reference_patch=reference_patch,
            test_patch=test_patch,
            fail_to_pass=fail_to_pass,
            pass_to_pass=pass_to_pass,
            hidden=sorted(removal.removed),
            visible_failing=sorted(removal.not_found),
            held_out=held_out,
            run_seconds=run.wall_seconds,
            started=started,
        )

    def _stub_run(self, request: RunRequest) -> RunResult:
        """A stub run; one that hit the wall clock is run again with more time (a cluster
        rejected for the machine's load would make which tasks a seed yields depend on it)."""
        return run_despite_load(self.runner, request)

    def _check_stub_run(self, cluster: Cluster, run: RunResult) -> Rejection | None:
        if run.patch_failure is not None:
            return Rejection(cluster.functions, "stub patch does not apply")
        if run.timed_out or run.memory_exceeded:
            return Rejection(cluster.functions, "stub run hit a limit")
        new_errors = [e for e in run.collection_errors if e.path not in self.baseline_errors]
        if new_errors:
            at_import = any("NotImplementedError" in e.message for e in new_errors)
            reason = "stub runs at import" if at_import else "stubbing breaks test collection"
            return Rejection(cluster.functions, reason)
        return None

    def _test_patches(self, removal) -> tuple[str, str]:
        """(patch that hides the tests, patch that brings them back)."""
        hide: list[str] = []
        restore: list[str] = []
        for path in sorted(set(removal.edits) | set(removal.deleted)):
            original = self.tree.files[path]
            mode = self.tree.mode(path)
            if path in removal.deleted:
                hide.append(deletion_patch(path, original, mode))
                restore.append(creation_patch(path, original, mode))
                continue
            file_edits: list[LineEdit] = removal.edits[path]
            hidden_text = apply_edits(original, file_edits)
            hide.append(file_patch(path, original, file_edits))
            back = invert_edits(split_lines(original), file_edits)
            restore.append(file_patch(path, hidden_text, back))
        return "".join(hide), "".join(restore)


def _by_file(tests: set[str]) -> dict[str, set[str]]:
    grouped: dict[str, set[str]] = {}
    for nodeid in tests:
        grouped.setdefault(split_nodeid(nodeid)[0], set()).add(nodeid)
    return grouped


def _sample(rng: random.Random, tests: set[str], limit: int) -> list[str]:
    ordered = sorted(tests)
    return sorted(rng.sample(ordered, limit)) if len(ordered) > limit else ordered
