"""OpenHands trajectories: a saved event list, and evaluation ``output.jsonl`` lines.

An event is an object with ``id``, ``timestamp``, ``source`` (``agent``, ``user`` or
``environment``), ``message``, and either

- ``action`` (``message``, ``system``, ``run``, ``run_ipython``, ``read``, ``edit``, ``write``,
  ``browse``, ``think``, ``finish``, ``recall``, ...) with its ``args`` (``content``,
  ``command``, ``code``, ``path``, ``thought``, ``final_thought``...), or
- ``observation`` (``run``, ``read``, ``edit``, ``error``, ``recall``, ``agent_state_changed``,
  ``null``...) with ``content``, ``extras`` and ``cause`` (the id of the action it answers).

Events of recent versions carry ``tool_call_metadata`` (the tool name and the LLM response with
its model and token usage; the action and its observation both carry the same response) and
``llm_metrics`` (running totals: ``accumulated_cost``, ``accumulated_token_usage``).

An evaluation ``output.jsonl`` line is one instance: ``instance_id``, ``instruction``,
``metadata`` (``llm_config.model``, ``agent_class``...; OpenDevin-era files have
``model_name``), ``history`` (a list of events, or in older versions a list of
``[action, observation]`` pairs), ``metrics`` (``accumulated_cost``, and in recent versions
``accumulated_token_usage``), ``test_result.git_patch`` (older files: top-level ``git_patch``),
``error`` and ``instance``.

State-change events (``change_agent_state``, ``agent_state_changed``) and empty ``null``
observations are bookkeeping, not steps; the last agent state becomes the exit status.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .records import (
    InvalidRecord,
    ParsedTrajectory,
    StepCollector,
    as_dict,
    as_float,
    as_int,
    as_list,
    as_text,
    content_sha256,
    first_text,
    non_empty_str,
    small_fields,
)

SCAFFOLD = "openhands"
_BOOKKEEPING_ACTIONS = {"change_agent_state"}
_BOOKKEEPING_OBSERVATIONS = {"agent_state_changed", "null"}
_MESSAGE_ACTIONS = {"message", "system"}
# Argument fields already carried by the step itself, or too bulky for ``extra``.
_ARGS_IN_STEP = ("content", "thought", "final_thought", "command", "code", "file_text", "tools")
_SECRET_MARKERS = ("api_key", "secret", "password", "access_key", "session_token")


@dataclass
class EventSummary:
    """What the event stream says about the run as a whole."""

    response_model: str | None = None
    response_tokens_in: int = 0
    response_tokens_out: int = 0
    responses_counted: int = 0
    last_llm_metrics: dict[str, Any] = field(default_factory=dict)
    last_agent_state: str | None = None
    finished: bool = False
    skipped: Counter[str] = field(default_factory=Counter)

    @property
    def exit_status(self) -> str | None:
        if self.last_agent_state:
            return self.last_agent_state
        # A finish action is what moves OpenHands into its "finished" state; saved event
        # lists often stop before the state-change event is recorded.
        return "finished" if self.finished else None


def _flatten_events(history: list[Any], field_name: str):
    """Events in order, whether listed one by one or as [action, observation] pairs."""
    for position, item in enumerate(history):
        if isinstance(item, dict):
            yield item
        elif isinstance(item, list) and all(isinstance(part, dict) for part in item):
            yield from item
        else:
            raise InvalidRecord(
                f"{field_name}[{position}] is neither an event object nor an "
                "[action, observation] pair"
            )


def _action_role(action_type: str, source: Any) -> str:
    if action_type == "system":
        return "system"
    if source == "user":
        return "user"
    if source == "environment":
        return "system"
    return "assistant"


def _tool_call_arguments(metadata: dict[str, Any]) -> str | None:
    """The exact arguments the model passed for this event's tool call."""
    call_id = metadata.get("tool_call_id")
    response = as_dict(metadata.get("model_response"))
    for choice in as_list(response.get("choices")):
        for call in as_list(as_dict(as_dict(choice).get("message")).get("tool_calls")):
            call = as_dict(call)
            if call_id is None or call.get("id") == call_id:
                arguments = as_dict(call.get("function")).get("arguments")
                if isinstance(arguments, str):
                    return arguments
    return None


def _action_text(action_type: str, args: dict[str, Any], tool_metadata: dict[str, Any]) -> str:
    for key in ("command", "code", "url", "browser_actions"):
        text = non_empty_str(args.get(key))
        if text:
            return text
    arguments = _tool_call_arguments(tool_metadata)
    if arguments and arguments.strip() not in ("{}", ""):
        return arguments
    path = non_empty_str(args.get("path"))
    return f"{action_type} {path}" if path else action_type


def _count_response_tokens(
    summary: EventSummary, tool_metadata: dict[str, Any], seen_responses: set[str]
) -> tuple[int | None, int | None]:
    """Tokens of the LLM call behind an action, counted once per response.

    One response may issue several tool calls, and each resulting action (and observation)
    repeats it; counting by response id keeps the totals honest.
    """
    response = as_dict(tool_metadata.get("model_response"))
    if not response:
        return None, None
    response_id = response.get("id")
    if isinstance(response_id, str):
        if response_id in seen_responses:
            return None, None
        seen_responses.add(response_id)
    if summary.response_model is None:
        summary.response_model = non_empty_str(response.get("model"))
    usage = as_dict(response.get("usage"))
    prompt, completion = as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))
    summary.response_tokens_in += prompt or 0
    summary.response_tokens_out += completion or 0
    summary.responses_counted += 1
    return prompt, completion


def _add_action(
    collector: StepCollector,
    event: dict[str, Any],
    summary: EventSummary,
    seen_responses: set[str],
) -> None:
    action_type = str(event.get("action"))
    if action_type in _BOOKKEEPING_ACTIONS:
        summary.skipped[f"action:{action_type}"] += 1
        return
    args = as_dict(event.get("args"))
    tool_metadata = as_dict(event.get("tool_call_metadata"))
    message = as_text(event.get("message"))
    role = _action_role(action_type, event.get("source"))
    thought = non_empty_str(args.get("thought"))
    extra = {"event_id": event.get("id"), "source": event.get("source"), "event": action_type}
    extra.update(small_fields(args, skip=_ARGS_IN_STEP))
    if isinstance(tool_metadata.get("tool_call_id"), str):
        extra["tool_call_id"] = tool_metadata["tool_call_id"]
    prompt_tokens, completion_tokens = _count_response_tokens(
        summary, tool_metadata, seen_responses
    )
    if prompt_tokens is not None:
        extra["prompt_tokens"] = prompt_tokens
    common = {
        "timestamp": event.get("timestamp") if isinstance(event.get("timestamp"), str) else None,
        "tokens": completion_tokens,
        "extra": extra,
    }
    if isinstance(event.get("llm_metrics"), dict):
        summary.last_llm_metrics = event["llm_metrics"]

    if action_type in _MESSAGE_ACTIONS:
        collector.add(role, "message", first_text(args.get("content"), message), **common)
        return
    if action_type == "think":
        collector.add(role, "thought", first_text(thought, message), thought=thought, **common)
        return
    tool = non_empty_str(tool_metadata.get("function_name")) or action_type
    if action_type == "finish":
        summary.finished = True
        thought = non_empty_str(args.get("final_thought")) or thought
    collector.add(
        role,
        "action",
        first_text(thought, message),
        action=_action_text(action_type, args, tool_metadata),
        thought=thought,
        tool=tool[:100],
        **common,
    )


def _add_observation(collector: StepCollector, event: dict[str, Any], summary: EventSummary):
    observation_type = str(event.get("observation"))
    extras = as_dict(event.get("extras"))
    if observation_type in _BOOKKEEPING_OBSERVATIONS:
        state = non_empty_str(extras.get("agent_state"))
        if state:
            summary.last_agent_state = state
        summary.skipped[f"observation:{observation_type}"] += 1
        return
    content = first_text(event.get("content"), event.get("message")) or ""
    tool_metadata = as_dict(event.get("tool_call_metadata"))
    tool = non_empty_str(tool_metadata.get("function_name")) or observation_type
    extra = {
        "event_id": event.get("id"),
        "source": event.get("source"),
        "event": observation_type,
        "cause": event.get("cause"),
    }
    extra.update(small_fields(extras, skip=("content",)))
    exit_code = extras.get("exit_code", as_dict(extras.get("metadata")).get("exit_code"))
    if isinstance(exit_code, int):
        extra["exit_code"] = exit_code
    if isinstance(event.get("success"), bool):
        extra["success"] = event["success"]
    if observation_type == "error":
        extra["error"] = True
    collector.add(
        "tool",
        "observation",
        content,
        observation=content,
        tool=tool[:100],
        timestamp=event.get("timestamp") if isinstance(event.get("timestamp"), str) else None,
        extra=extra,
    )


def collect_event_steps(history: list[Any], field_name: str) -> tuple[list, EventSummary]:
    collector = StepCollector()
    summary = EventSummary()
    seen_responses: set[str] = set()
    for event in _flatten_events(history, field_name):
        if "action" in event:
            _add_action(collector, event, summary, seen_responses)
        elif "observation" in event:
            _add_observation(collector, event, summary)
        else:
            summary.skipped["unrecognised"] += 1
    return collector.steps, summary


def _usage_from_metrics(metrics: dict[str, Any]) -> tuple[int | None, int | None]:
    usage = as_dict(metrics.get("accumulated_token_usage"))
    return as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))


def _tokens(metrics: dict[str, Any], summary: EventSummary) -> tuple[int | None, int | None]:
    tokens_in, tokens_out = _usage_from_metrics(metrics)
    if tokens_in is None and tokens_out is None and summary.responses_counted:
        return summary.response_tokens_in, summary.response_tokens_out
    return tokens_in, tokens_out


def _summary_metadata(summary: EventSummary) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if summary.skipped:
        metadata["skipped_events"] = dict(summary.skipped)
    if summary.response_model:
        metadata["response_model"] = summary.response_model
    return metadata


def parse_event_list(
    document: Any, *, path: str | os.PathLike[str], line: int | None = None
) -> ParsedTrajectory:
    """A saved OpenHands trajectory: a JSON list of events."""
    if not isinstance(document, list):
        raise InvalidRecord(
            f"an OpenHands event file holds a JSON list, this one holds a {type(document).__name__}"
        )
    steps, summary = collect_event_steps(document, "events")
    metrics = summary.last_llm_metrics
    usage_model = non_empty_str(as_dict(metrics.get("accumulated_token_usage")).get("model"))
    tokens_in, tokens_out = _tokens(metrics, summary)
    return ParsedTrajectory(
        source_format="openhands",
        instance_id=None,
        # The metrics name the configured model; "default" is OpenHands' placeholder there.
        model=usage_model if usage_model not in (None, "default") else summary.response_model,
        scaffold=SCAFFOLD,
        final_patch=None,
        exit_status=summary.exit_status,
        cost_usd=as_float(metrics.get("accumulated_cost")),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        steps=steps,
        metadata=_summary_metadata(summary),
        line=line,
        content_sha256=content_sha256("openhands", document),
    )


def _without_secrets(config: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value
        for key, value in small_fields(config).items()
        if not any(marker in key.lower() for marker in _SECRET_MARKERS)
    }


def parse_eval_record(
    record: Any, *, path: str | os.PathLike[str], line: int | None = None
) -> ParsedTrajectory:
    """One line of an OpenHands evaluation output.jsonl."""
    if not isinstance(record, dict):
        raise InvalidRecord(f"expected a JSON object, got a {type(record).__name__}")
    instance_id = record.get("instance_id")
    if instance_id is None:
        raise InvalidRecord("missing required field 'instance_id'")
    if isinstance(instance_id, int) and not isinstance(instance_id, bool):
        instance_id = str(instance_id)  # some benchmarks number their instances
    if not non_empty_str(instance_id):
        raise InvalidRecord("'instance_id' must be a non-empty string")
    history = record.get("history")
    if history is not None and not isinstance(history, list):
        raise InvalidRecord(f"'history' must be a list, not {type(history).__name__}")
    steps, summary = collect_event_steps(history or [], "history")

    run_metadata = as_dict(record.get("metadata"))
    llm_config = as_dict(run_metadata.get("llm_config"))
    model = (
        non_empty_str(llm_config.get("model"))
        or non_empty_str(run_metadata.get("model_name"))
        or summary.response_model
    )
    test_result = as_dict(record.get("test_result"))
    patch = test_result.get("git_patch", record.get("git_patch"))
    metrics = as_dict(record.get("metrics")) or summary.last_llm_metrics
    error = record.get("error")

    metadata = _summary_metadata(summary)
    metadata.update(
        small_fields(run_metadata, skip=("llm_config", "eval_output_dir", "condenser_config"))
    )
    if llm_config:
        metadata["llm_config"] = _without_secrets(llm_config)
    instance = record.get("instance", record.get("swe_instance"))
    if isinstance(instance, dict):
        metadata["instance"] = instance
    test_details = small_fields(test_result, skip=("git_patch",))
    if test_details:
        metadata["test_result"] = test_details
    if error:
        metadata["error"] = as_text(error)
    if not history:
        metadata["missing"] = ["history"]

    return event_trajectory(
        "openhands-eval",
        record,
        line=line,
        instance_id=instance_id,
        model=model,
        patch=patch,
        error=error,
        summary=summary,
        steps=steps,
        metrics=metrics,
        metadata=metadata,
    )


def event_trajectory(
    source_format: str,
    record: dict[str, Any],
    *,
    line: int,
    instance_id: str,
    model: str | None,
    patch: Any,
    error: Any,
    summary: EventSummary,
    steps: list,
    metrics: dict[str, Any],
    metadata: dict[str, Any],
) -> ParsedTrajectory:
    """A trajectory of OpenHands events (evaluation output or resolver output)."""
    tokens_in, tokens_out = _tokens(metrics, summary)
    return ParsedTrajectory(
        source_format=source_format,
        instance_id=instance_id,
        model=model,
        scaffold=SCAFFOLD,
        final_patch=patch if isinstance(patch, str) else None,
        # The runner records a crash or a limit hit in "error"; that outranks the agent state.
        exit_status="error" if error else summary.exit_status,
        cost_usd=as_float(metrics.get("accumulated_cost")),
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        steps=steps,
        metadata=metadata,
        line=line,
        content_sha256=content_sha256(source_format, record),
    )
