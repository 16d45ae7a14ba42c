"""What an LLM synthesis run records: each round, each task wanted, and the run's report.

Plain Python (no Django). A round ends in one of ROUND_STATUSES with its error, what was fed
back to the model, tokens, cost and time; the report sums them up for the job's result.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from workers.llm_client import HTTP_ERROR, MALFORMED, OK, TIMEOUT, ChatReply, LLMConfig, Usage
from workers.synthesis.proposals import Rejection, SynthesisOutcome, TaskProposal
from workers.synthesis.reporting import proposal_totals

# Round statuses. OK is what a model call returns when it worked; a round ends in one of the
# others (a well-formed proposal always goes on to validation).
SCHEMA_INVALID = "schema-invalid"
VALIDATION_FAILED = "validation-failed"
VERIFIED = "verified"
SANDBOX_ERROR = "sandbox-error"  # the sandbox itself failed: no proposal can pass, so stop
INTERNAL_ERROR = "internal-error"  # a bug of ours, recorded instead of ending the job
ROUND_STATUSES = (
    OK,
    MALFORMED,
    SCHEMA_INVALID,
    HTTP_ERROR,
    TIMEOUT,
    VALIDATION_FAILED,
    VERIFIED,
    SANDBOX_ERROR,
    INTERNAL_ERROR,
)


@dataclass
class RoundRecord:
    task: int  # index of the task wanted, from 0
    round: int  # from 1
    status: str  # one of ROUND_STATUSES
    error: str = ""  # the main problem in one line; empty when verified
    problems: list[str] = field(default_factory=list)  # everything fed back to the model
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    seconds: float = 0.0  # the whole round: model call, checks and sandbox
    model_seconds: float = 0.0
    validation_seconds: float = 0.0
    requests: int = 0  # HTTP attempts, retries included
    retries: int = 0
    http_status: int | None = None
    response_id: str = ""
    title: str = ""  # of the proposal, once it parsed

    def account(self, reply: ChatReply) -> None:
        """Take the model call's tokens, cost, time and HTTP attempts into this round."""
        self.prompt_tokens = reply.prompt_tokens
        self.completion_tokens = reply.completion_tokens
        self.cost = reply.cost
        self.model_seconds = reply.seconds
        self.requests = reply.requests
        self.retries = reply.retries
        self.http_status = reply.http_status
        self.response_id = reply.response_id


@dataclass
class TaskAttempt:
    index: int
    module: str
    produced: bool
    rounds: list[RoundRecord] = field(default_factory=list)
    # Why no task came out: the last round's status and problems.
    reasons: list[str] = field(default_factory=list)
    title: str = ""


@dataclass
class LLMSynthesisOutcome(SynthesisOutcome):
    attempts: list[TaskAttempt] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    @property
    def rounds(self) -> list[RoundRecord]:
        return [r for attempt in self.attempts for r in attempt.rounds]


def llm_report(
    *,
    config: LLMConfig,
    usage: Usage,
    seed: int,
    count: int,
    rounds_limit: int,
    stop_reason: str,
    proposals: list[TaskProposal],
    rejected: list[Rejection],
    attempts: list[TaskAttempt],
    elapsed: float,
) -> dict[str, Any]:
    records = [r for attempt in attempts for r in attempt.rounds]
    if stop_reason:
        status, reason = "stopped", stop_reason
    elif proposals:
        status, reason = "ok", ""
    else:
        top = Counter(r.status for r in records).most_common(1)
        reason = f"no proposal verified (most rounds ended: {top[0][0]})" if top else ""
        status = "no tasks"
    return {
        "engine": "llm",
        "status": status,
        "reason": reason,
        "model": config.model,
        "config": config.public_dict(),
        "seed": seed,
        "tasks_wanted": count,
        "rounds_limit": rounds_limit,
        "rounds_used": len(records),
        "round_statuses": dict(sorted(Counter(r.status for r in records).items())),
        "rounds": [asdict(r) for r in records],
        "attempts": [
            {
                "index": a.index,
                "module": a.module,
                "produced": a.produced,
                "rounds": len(a.rounds),
                "title": a.title,
                "reasons": a.reasons,
            }
            for a in attempts
        ],
        "tokens": {
            "prompt": usage.prompt_tokens,
            "completion": usage.completion_tokens,
            "total": usage.total_tokens,
        },
        "cost": round(usage.cost, 6),
        "requests": usage.requests,
        "retries": usage.retries,
        "usage": usage.as_dict(),
        **proposal_totals(proposals, rejected, elapsed),
    }
