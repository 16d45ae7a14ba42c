"""The LLM auditor: any OpenAI-compatible endpoint reads a task and a summary of its
trajectories and answers with structured findings.

Plain Python (no Django). The model's answer is checked strictly; an answer that is not the JSON
asked for, an HTTP error, a timeout or a dropped connection all end as a *failed audit* (status
``failed`` with the reason and the raw reply), never as an exception: the heuristic auditor's
findings stand on their own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from workers.llm_client import OK as REPLY_OK
from workers.llm_client import ChatClient, ClientFactory, LLMConfig

from .facts import FindingDraft, TaskFacts, TrajectoryFacts

OK = "ok"
FAILED = "failed"
APPROVE = "approve"
DO_NOT_APPROVE = "do_not_approve"
_VERDICTS = {
    "approve": APPROVE,
    "do_not_approve": DO_NOT_APPROVE,
    "request_changes": DO_NOT_APPROVE,
    "reject": DO_NOT_APPROVE,
}
SEVERITIES = ("info", "low", "medium", "high")
KINDS = (
    "underspecified",
    "broken_test",
    "weak_test",
    "tampering",
    "special_cased_literal",
    "all_models_fail_one_test",
    "untested_spec",
    "unlinked_test",
    "flaky",
    "reference_fails",
    "unsafe_action",
    "invalid_test",
    "leaked_solution",
    "other",
)
_RAW_LIMIT = 4000
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.S)

SYSTEM_PROMPT = """You audit coding-agent benchmark tasks before a human reviews them.
A task has a problem statement, specifications (specs) with keys, hidden tests (each verifying
specs) and a reference solution. Several models attempted it; you get a summary of each attempt
and what a rule-based auditor already found.

Decide whether a human should approve the task as it is, and report concrete defects:
- underspecified: a requirement the tests check that the statement does not state;
- broken_test: a test that rejects reasonable correct solutions or checks something else;
- weak_test: a test that accepts wrong or empty solutions;
- leaked_solution: the statement gives the solution or the exact expected literals away;
- tampering / special_cased_literal / unsafe_action: an attempt that edits the tests,
  hard-codes the tests' inputs, or runs destructive, network or credential-reading commands;
- other kinds from this list when they fit: KINDS.

Answer with one JSON object and nothing else:
{"verdict": "approve" | "do_not_approve",
 "summary": "one or two sentences",
 "findings": [{"kind": "<kind>", "severity": "low" | "medium" | "high",
               "message": "what is wrong and why it matters",
               "trajectory": <attempt id or null>, "spec": "<spec key or null>",
               "test": "<test id or null>"}]}
""".replace("KINDS", ", ".join(KINDS))


class MalformedReply(ValueError):
    pass


# The auditor's own defaults: a deterministic answer, a bounded one, one retry. JSON mode is not
# asked for because the reply is parsed leniently (code fences, surrounding prose) anyway.
AUDIT_DEFAULTS: dict[str, Any] = {
    "temperature": 0.0,
    "max_tokens": 2000,
    "max_retries": 1,
    "json_mode": False,
    "send_seed": False,
}
MAX_TRAJECTORIES = 12


def audit_config(**values: Any) -> LLMConfig:
    """The shared client's configuration with the auditor's defaults; `values` override them."""
    return LLMConfig(**{**AUDIT_DEFAULTS, **values})


@dataclass
class LLMAudit:
    status: str
    model: str
    verdict: str | None = None
    summary: str = ""
    findings: list[FindingDraft] = field(default_factory=list)
    error: str = ""
    raw: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "model": self.model,
            "verdict": self.verdict,
            "summary": self.summary,
            "findings": len(self.findings),
            "error": self.error,
            "raw": self.raw[:_RAW_LIMIT],
            "usage": self.usage,
            "seconds": self.seconds,
        }


def _clip(text: str, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[:limit] + f"\n… [{len(text) - limit} more chars]"


def _pick(trajectories: list[TrajectoryFacts], flagged: set[int], limit: int):
    """At most `limit` attempts: every flagged one first, then one per model, then the rest."""
    chosen: list[TrajectoryFacts] = [t for t in trajectories if t.id in flagged][:limit]
    models = {t.model for t in chosen}
    for trajectory in trajectories:
        if len(chosen) >= limit:
            break
        if trajectory not in chosen and trajectory.model not in models:
            chosen.append(trajectory)
            models.add(trajectory.model)
    for trajectory in trajectories:
        if len(chosen) >= limit:
            break
        if trajectory not in chosen:
            chosen.append(trajectory)
    return chosen


def task_summary(
    task: TaskFacts,
    trajectories: list[TrajectoryFacts],
    findings: list[FindingDraft],
    *,
    max_trajectories: int = 12,
) -> str:
    """What the model reads: the task, each attempt in brief, and the heuristic findings."""
    lines = [
        f"# Task {task.instance_id}: {task.title}",
        "## Problem statement",
        _clip(task.problem_statement, 6000),
        "## Specs",
        *(f"- {s.key} ({s.kind}): {s.statement}" for s in task.specs),
        "## Tests (role: specs)",
        *(f"- {t.nodeid} [{t.role}]: {', '.join(t.specs) or 'no spec'}" for t in task.tests),
        "## Hidden test patch",
        _clip(task.test_patch, 6000),
        "## Reference patch",
        _clip(task.reference_patch, 4000),
        "## Attempts",
    ]
    flagged = {f.trajectory for f in findings if f.trajectory is not None}
    shown = _pick(trajectories, flagged, max_trajectories)
    for trajectory in shown:
        evaluation = trajectory.evaluation
        lines.append(f"### Attempt {trajectory.id} by {trajectory.model}")
        if trajectory.exit_status:
            lines.append(f"exit status: {trajectory.exit_status}")
        if evaluation is None:
            lines.append("not evaluated yet")
        elif not evaluation.patch_applied or evaluation.patch_error:
            lines.append(f"the patch did not apply: {_clip(evaluation.patch_error, 300)}")
        else:
            failing = sorted(n for n, o in evaluation.tests.items() if o != "passed")
            satisfied = sorted(k for k, ok in evaluation.spec_satisfied.items() if ok)
            missed = sorted(k for k, ok in evaluation.spec_satisfied.items() if not ok)
            lines += [
                f"resolved: {evaluation.resolved}",
                f"specs satisfied: {', '.join(satisfied) or 'none'}; "
                f"not satisfied: {', '.join(missed) or 'none'}",
                f"failing tests: {', '.join(failing[:10]) or 'none'}",
            ]
            if evaluation.touched_test_files:
                lines.append(f"edits test files: {', '.join(evaluation.touched_test_files)}")
        lines.append("final patch:")
        lines.append(_clip(trajectory.patch, 3000) or "(empty)")
        if trajectory.actions:
            lines.append("last actions:")
            lines += [f"- [{a.index}] {_clip(a.action, 200)}" for a in trajectory.actions[-8:]]
    if len(trajectories) > len(shown):
        lines.append(f"({len(trajectories) - len(shown)} more attempts not shown)")
    lines.append("## Rule-based findings")
    lines += [f"- {f.kind} ({f.severity}): {f.message}" for f in findings[:40]] or ["- none"]
    return "\n".join(lines)


def _json_object(text: str) -> dict[str, Any]:
    stripped = _FENCE.sub("", text.strip())
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError as exc:
        # Models often wrap the object in prose; take the outermost braces if there are any.
        start, end = stripped.find("{"), stripped.rfind("}")
        if start < 0:
            raise MalformedReply("the reply holds no JSON object") from None
        try:
            value = json.loads(stripped[start : end + 1]) if end > start else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            raise MalformedReply(f"the reply is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise MalformedReply(f"the reply is a JSON {type(value).__name__}, not an object")
    return value


def _optional_str(item: dict[str, Any], key: str, where: str) -> str | None:
    value = item.get(key)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise MalformedReply(f"{where}.{key} must be a string or null")
    return value


def parse_reply(
    text: str, *, trajectory_ids: set[int], spec_keys: set[str], test_ids: set[str]
) -> tuple[str, str, list[FindingDraft]]:
    """(verdict, summary, findings) from the model's reply, or MalformedReply saying why."""
    value = _json_object(text)
    verdict = value.get("verdict")
    if verdict not in _VERDICTS:
        raise MalformedReply(f"'verdict' must be one of {', '.join(_VERDICTS)} (got {verdict!r})")
    summary = value.get("summary") or ""
    if not isinstance(summary, str):
        raise MalformedReply("'summary' must be a string")
    items = value.get("findings", [])
    if not isinstance(items, list):
        raise MalformedReply("'findings' must be a list")
    findings = []
    for position, item in enumerate(items):
        where = f"findings[{position}]"
        if not isinstance(item, dict):
            raise MalformedReply(f"{where} must be an object")
        kind = item.get("kind")
        if not isinstance(kind, str) or not kind.strip():
            raise MalformedReply(f"{where}.kind must be a non-empty string")
        severity = item.get("severity", "medium")
        if severity not in SEVERITIES:
            raise MalformedReply(f"{where}.severity must be one of {', '.join(SEVERITIES)}")
        message = item.get("message")
        if not isinstance(message, str) or not message.strip():
            raise MalformedReply(f"{where}.message must be a non-empty string")
        trajectory = item.get("trajectory")
        if isinstance(trajectory, str) and trajectory.isascii() and trajectory.isdigit():
            trajectory = int(trajectory)
        is_id = isinstance(trajectory, int) and not isinstance(trajectory, bool)
        if trajectory is not None and not is_id:
            raise MalformedReply(f"{where}.trajectory must be an attempt id or null")
        spec = _optional_str(item, "spec", where)
        test = _optional_str(item, "test", where)
        evidence: dict[str, Any] = {"llm_kind": kind}
        notes = []
        # A reference to something the model was not shown is kept as text, never as a link.
        if trajectory is not None and trajectory not in trajectory_ids:
            notes.append(f"unknown attempt {trajectory}")
            trajectory = None
        if spec is not None:
            evidence["spec"] = spec
            if spec not in spec_keys:
                notes.append(f"unknown spec {spec!r}")
        if test is not None:
            evidence["test"] = test
            if test not in test_ids:
                notes.append(f"unknown test {test!r}")
        if notes:
            evidence["notes"] = notes
        findings.append(
            FindingDraft(
                kind=kind.strip(),
                severity=severity,
                message=message.strip(),
                key=f"llm:{kind.strip()}:{trajectory or '-'}:{spec or test or position}",
                trajectory=trajectory,
                evidence=evidence,
            )
        )
    return _VERDICTS[verdict], summary.strip(), findings


def audit_with_llm(
    config: LLMConfig,
    task: TaskFacts,
    trajectories: list[TrajectoryFacts],
    heuristic_findings: list[FindingDraft],
    *,
    max_trajectories: int = MAX_TRAJECTORIES,
    client_factory: ClientFactory | None = None,
) -> LLMAudit:
    """Ask the model; every failure becomes a failed LLMAudit with its reason."""
    audit = LLMAudit(status=FAILED, model=config.model)
    prompt = task_summary(task, trajectories, heuristic_findings, max_trajectories=max_trajectories)
    client = ChatClient(config, client_factory=client_factory)
    try:
        reply = client.complete(
            [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": prompt},
            ]
        )
    finally:
        client.close()
    audit.seconds = reply.seconds
    if reply.usage_reported:
        audit.usage = {
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
        }
    if reply.status != REPLY_OK:
        # HTTP errors, timeouts, dropped connections, bodies that are no chat completion and
        # empty answers: the endpoint failed, not the task.
        audit.error = f"the endpoint failed: {reply.error}"[:2000]
        return audit
    text = reply.content
    audit.raw = text[:_RAW_LIMIT]
    try:
        verdict, summary, findings = parse_reply(
            text,
            trajectory_ids={t.id for t in trajectories},
            spec_keys={s.key for s in task.specs},
            test_ids={t.nodeid for t in task.tests},
        )
    except MalformedReply as exc:
        reason = str(exc)
        if reply.finish_reason == "length":
            reason += " (the reply was cut off at the token limit)"
        audit.error = f"malformed reply: {reason}"
        return audit
    audit.status = OK
    audit.verdict, audit.summary, audit.findings = verdict, summary, findings
    return audit
