"""The LLM synthesis engine: a model proposes a feature, the sandbox proves it, failures go back.

Plain Python (no Django). For each task wanted, the agent shows the model the snapshot's file
tree, one module (chosen by seed), that module's tests and, when given, their coverage; the
model answers with a proposal as JSON (see llm_schema.PROPOSAL_SCHEMA): specs with kinds and
dependencies, a new test file, and a reference patch. The proposal is checked, then validated
the way every task is (workers.validation): with the new test file, the snapshot itself must
fail the FAIL_TO_PASS tests and the snapshot plus the reference patch must pass them. Whatever
went wrong (unparsable JSON, schema violations, a patch that does not apply, tests that pass
without the feature) becomes the next user message, up to `rounds` rounds per task.

The base commit of an LLM task is the snapshot commit: the model adds a feature, so nothing is
removed first. Model misbehaviour and HTTP trouble never raise out of `synthesize_llm`; each
round is recorded with its status, error, tokens, cost and time.

This module runs the rounds; `llm_proposal` turns a well-formed proposal into a validated task
(and validation's disagreements into feedback), `llm_rounds` records the rounds and reports.
"""

from __future__ import annotations

import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workers.gitstore import list_files
from workers.llm_client import MALFORMED, OK, ChatClient, ClientFactory, LLMConfig, Usage
from workers.sandbox.types import EnvironmentSpec, Limits, RunRequest, RunResult, Snapshot
from workers.synthesis.coverage_map import CoverageMap
from workers.synthesis.edits import creation_patch
from workers.synthesis.llm_context import (
    ModuleContext,
    build_context,
    feedback_message,
    module_order,
    system_prompt,
    task_request,
)
from workers.synthesis.llm_proposal import (
    build_proposal,
    existing_pass_to_pass,
    normalise_patch,
    reference_parts,
    validation_problems,
)
from workers.synthesis.llm_rounds import (
    INTERNAL_ERROR,
    ROUND_STATUSES,
    SANDBOX_ERROR,
    SCHEMA_INVALID,
    VALIDATION_FAILED,
    VERIFIED,
    LLMSynthesisOutcome,
    RoundRecord,
    TaskAttempt,
    llm_report,
)
from workers.synthesis.llm_schema import (
    PROPOSAL_SCHEMA,
    ProposalDraft,
    parse_answer,
    read_proposal,
)
from workers.synthesis.proposals import Rejection, TaskProposal
from workers.synthesis.source import SourceTree, read_snapshot
from workers.validation import ValidationInput, validate_task

__all__ = [
    "PROPOSAL_SCHEMA",
    "ROUND_STATUSES",
    "LLMConfig",
    "LLMSynthesisOutcome",
    "RoundRecord",
    "TaskAttempt",
    "Usage",
    "normalise_patch",
    "synthesize_llm",
]

Runner = Callable[[RunRequest], RunResult]
Progress = Callable[[int, str], None]

# Earlier (answer, feedback) exchanges kept in the conversation: the latest ones carry what
# still needs fixing; older ones only make the prompt longer.
HISTORY_EXCHANGES = 2


def synthesize_llm(
    *,
    snapshot: Snapshot,
    environment: EnvironmentSpec,
    runner: Runner,
    config: LLMConfig,
    count: int,
    seed: int,
    rounds: int = 3,
    module: str | None = None,
    progress: Progress | None = None,
    client_factory: ClientFactory | None = None,
    coverage: CoverageMap | None = None,
    limits: Limits | None = None,
    reruns: int = 2,
    interaction_check: bool = True,
    tree: SourceTree | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> LLMSynthesisOutcome:
    """Up to `count` verified tasks from `snapshot`, each within `rounds` model rounds.

    `module` fixes the module to extend (a path like "pkg/mod.py"); otherwise the seed picks
    one per task among the non-test modules. `coverage` (from a coverage run) tells the model
    which functions the tests reach and adds the module's passing tests as PASS_TO_PASS.
    `client_factory(config)` makes the OpenAI-compatible client (default: `openai.OpenAI`).
    `reruns` is how often validation runs each side, to catch flaky tests;
    `interaction_check` adds the leave-one-part-out runs that measure how much the tests need
    several parts of the reference (and tie each part to the specs whose tests need it).
    """
    started = time.monotonic()
    rounds = max(1, rounds)
    chat = ChatClient(
        config,
        client_factory=client_factory,
        sleep=sleep,
        rng=random.Random(f"llm-jitter:{seed}"),  # noqa: S311 (jitter, not security)
    )
    run = _Run(
        snapshot=snapshot,
        environment=environment,
        runner=runner,
        config=config,
        chat=chat,
        seed=seed,
        rounds=rounds,
        count=max(0, count),
        coverage=coverage,
        limits=limits or Limits(),
        reruns=max(1, reruns),
        interaction_check=interaction_check,
        progress=progress or (lambda _percent, _message: None),
    )
    try:
        return run.execute(module=module, tree=tree, started=started)
    finally:
        chat.close()


@dataclass
class _RoundResult:
    record: RoundRecord
    proposal: TaskProposal | None = None
    answer: str | None = None  # the model's content, when it should stay in the conversation
    feedback: str | None = None  # the next user message, when the model can fix something


@dataclass
class _Run:
    snapshot: Snapshot
    environment: EnvironmentSpec
    runner: Runner
    config: LLMConfig
    chat: ChatClient
    seed: int
    rounds: int
    count: int
    coverage: CoverageMap | None
    limits: Limits
    reruns: int
    interaction_check: bool
    progress: Progress
    tree: SourceTree = field(default_factory=lambda: SourceTree(files={}))
    files: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    # Set when going on is pointless (the endpoint refuses us, the sandbox is broken).
    stop_reason: str = ""

    def execute(
        self, *, module: str | None, tree: SourceTree | None, started: float
    ) -> LLMSynthesisOutcome:
        self.progress(1, "Reading the snapshot")
        try:
            self.tree = tree if tree is not None else read_snapshot(self.snapshot)
            self.files = list_files(Path(self.snapshot.git_dir), self.snapshot.commit)
        except Exception as error:
            return self._unusable(f"the snapshot could not be read: {error}", started)
        if module is not None and module not in self.tree.files:
            return self._unusable(f"{module} is not a Python file of the snapshot", started)
        modules = [module] if module is not None else module_order(self.tree, self.seed)
        if not modules:
            return self._unusable("the snapshot has no Python module to extend", started)

        proposals: list[TaskProposal] = []
        rejected: list[Rejection] = []
        attempts: list[TaskAttempt] = []
        for index in range(self.count):
            if self.stop_reason:
                break
            module_path = modules[index % len(modules)]
            attempt, proposal = self._task(index, module_path)
            attempts.append(attempt)
            if proposal is not None:
                proposals.append(proposal)
                self.titles.append(proposal.title)
            else:
                last = attempt.rounds[-1].status if attempt.rounds else "no round"
                rejected.append(Rejection((module_path,), f"no verified proposal (last: {last})"))
        self.progress(100, f"{len(proposals)} of {self.count} tasks")
        report = self._report(proposals, rejected, attempts, started)
        return LLMSynthesisOutcome(
            proposals=proposals,
            rejected=rejected,
            report=report,
            attempts=attempts,
            usage=self.chat.usage,
        )

    # -- one task ------------------------------------------------------------------------------

    def _task(self, index: int, module_path: str) -> tuple[TaskAttempt, TaskProposal | None]:
        attempt = TaskAttempt(index=index, module=module_path, produced=False)
        try:
            context = build_context(
                tree=self.tree, files=self.files, module_path=module_path, coverage=self.coverage
            )
        except Exception as error:
            attempt.reasons = [f"the context could not be built: {error}"]
            return attempt, None
        opening = [
            {"role": "system", "content": system_prompt()},
            {"role": "user", "content": task_request(context, self.titles)},
        ]
        exchanges: list[tuple[str, str]] = []
        for number in range(1, self.rounds + 1):
            self.progress(
                self._percent(index, number - 1),
                f"task {index + 1}/{self.count}, round {number}: asking {self.config.model}",
            )
            messages = list(opening)
            for answer, feedback in exchanges[-HISTORY_EXCHANGES:]:
                messages.append({"role": "assistant", "content": answer})
                messages.append({"role": "user", "content": feedback})
            result = self._round_safely(index, number, messages, context)
            attempt.rounds.append(result.record)
            if result.record.title:
                attempt.title = result.record.title
            if result.proposal is not None:
                attempt.produced = True
                attempt.reasons = []
                return attempt, result.proposal
            attempt.reasons = [
                f"round {number}: {result.record.status}: {result.record.error}",
                *result.record.problems,
            ]
            if self.stop_reason:
                break
            if result.answer is not None and result.feedback is not None:
                exchanges.append((result.answer, result.feedback))
        return attempt, None

    def _round_safely(
        self, index: int, number: int, messages: list[dict[str, str]], context: ModuleContext
    ) -> _RoundResult:
        started = time.monotonic()
        record = RoundRecord(task=index, round=number, status=INTERNAL_ERROR)
        try:
            result = self._round(record, messages, context)
        except Exception as error:
            # A bug in our own checks must not cost the whole job; the record keeps the trace.
            record.status = INTERNAL_ERROR
            record.error = f"{type(error).__name__}: {error}"
            record.problems = [traceback.format_exc(limit=5)[-2000:]]
            result = _RoundResult(record=record)
        record.seconds = round(time.monotonic() - started, 3)
        return result

    def _round(
        self, record: RoundRecord, messages: list[dict[str, str]], context: ModuleContext
    ) -> _RoundResult:
        reply = self.chat.complete(messages, seed=self.seed * 1000 + record.task)
        record.account(reply)
        if reply.status != OK:
            record.status = reply.status
            record.error = reply.error
            if reply.fatal:
                self.stop_reason = f"the endpoint refused the request: {reply.error}"
            # The model said nothing usable, so there is nothing to answer: the next round
            # asks again with the same conversation.
            return _RoundResult(record=record)

        value, parse_error = parse_answer(reply.content)
        if parse_error:
            if reply.finish_reason == "length":
                parse_error += (
                    " (the answer was cut off at the token limit: keep the proposal shorter)"
                )
            return self._fails(record, MALFORMED, [parse_error], reply.content)

        existing = set(self.files)
        draft, problems = read_proposal(value, existing_paths=existing)
        if isinstance(value, dict) and isinstance(value.get("title"), str):
            record.title = value["title"].strip()[:200]
        if draft is None:
            return self._fails(record, SCHEMA_INVALID, problems, reply.content)

        validation_started = time.monotonic()
        proposal, problems = self._validate(draft, context, record)
        record.validation_seconds = round(time.monotonic() - validation_started, 3)
        if proposal is not None:
            record.status = VERIFIED
            return _RoundResult(record=record, proposal=proposal)
        if record.status == SANDBOX_ERROR:
            return _RoundResult(record=record)
        return self._fails(record, VALIDATION_FAILED, problems, reply.content)

    def _fails(
        self, record: RoundRecord, status: str, problems: list[str], answer: str
    ) -> _RoundResult:
        record.status = status
        record.problems = problems
        record.error = problems[0].splitlines()[0] if problems else status
        return _RoundResult(
            record=record,
            answer=answer,
            feedback=feedback_message(record.round, status, problems),
        )

    # -- validation ----------------------------------------------------------------------------

    def _validate(
        self, draft: ProposalDraft, context: ModuleContext, record: RoundRecord
    ) -> tuple[TaskProposal | None, list[str]]:
        git_dir = Path(self.snapshot.git_dir)
        reference_patch, apply_error = normalise_patch(
            git_dir, self.snapshot.commit, draft.reference_patch
        )
        if apply_error:
            return None, [f"the reference patch does not apply to the current code: {apply_error}"]
        if not reference_patch.strip():
            return None, ["the reference patch changes nothing"]
        test_patch = creation_patch(draft.test_path, draft.test_code)
        parts = reference_parts(self.snapshot, self.tree, reference_patch)

        fail_to_pass = [c.nodeid for c in draft.fail_to_pass]
        pass_to_pass = [c.nodeid for c in draft.pass_to_pass if c.nodeid not in fail_to_pass]
        existing_tests = existing_pass_to_pass(
            self.coverage, context, set(fail_to_pass + pass_to_pass), self.seed
        )
        validation_input = ValidationInput(
            snapshot=self.snapshot,
            environment=self.environment,
            reference_patch=reference_patch,
            test_patch=test_patch,
            fail_to_pass=tuple(fail_to_pass),
            pass_to_pass=tuple(pass_to_pass + existing_tests),
            reruns=self.reruns,
            limits=self.limits,
            reference_parts=tuple(parts) if self.interaction_check and len(parts) >= 2 else (),
            # Without the leave-one-out runs no interaction test can be found; the task still
            # meets that gate (or not) when it is validated after it is stored.
            require_interaction=self.interaction_check,
        )
        self.progress(
            self._percent(record.task, record.round - 1),
            f"task {record.task + 1}/{self.count}, round {record.round}: validating",
        )
        try:
            outcome = validate_task(validation_input, self.runner)
        except Exception as error:  # the environment build or the sandbox itself failed
            record.status = SANDBOX_ERROR
            record.error = f"the sandbox failed: {type(error).__name__}: {error}"[:2000]
            self.stop_reason = record.error
            return None, []

        problems = validation_problems(outcome)
        if problems:
            return None, problems
        proposal = build_proposal(
            draft=draft,
            outcome=outcome,
            base_commit=self.snapshot.commit,
            reference_patch=reference_patch,
            test_patch=test_patch,
            parts=parts,
            metadata={
                "origin": "llm",
                "model": self.config.model,
                "seed": self.seed,
                "module": context.module_path,
                "task_index": record.task,
                "rounds": record.round,
                "test_file": draft.test_path,
                "existing_pass_to_pass": existing_tests,
            },
        )
        return proposal, []

    # -- reporting -----------------------------------------------------------------------------

    def _percent(self, index: int, rounds_done: int) -> int:
        total = max(1, self.count * self.rounds)
        return min(99, 2 + int(97 * (index * self.rounds + rounds_done) / total))

    def _report(
        self,
        proposals: list[TaskProposal],
        rejected: list[Rejection],
        attempts: list[TaskAttempt],
        started: float,
    ) -> dict[str, Any]:
        return llm_report(
            config=self.config,
            usage=self.chat.usage,
            seed=self.seed,
            count=self.count,
            rounds_limit=self.rounds,
            stop_reason=self.stop_reason,
            proposals=proposals,
            rejected=rejected,
            attempts=attempts,
            elapsed=time.monotonic() - started,
        )

    def _unusable(self, reason: str, started: float) -> LLMSynthesisOutcome:
        self.stop_reason = reason
        report = self._report([], [], [], started)
        report["status"] = "unusable"
        return LLMSynthesisOutcome(
            proposals=[], rejected=[], report=report, attempts=[], usage=self.chat.usage
        )
