"""SWE-agent ``.traj`` files (classic 0.x agents and the 1.x function-calling agents).

A ``.traj`` file is one JSON object describing one run:

- ``trajectory``: the agent's steps, each with ``action``, ``observation``, ``response`` and
  usually ``thought`` and ``state``; 1.x adds ``execution_time``, ``query`` (the full prompt
  sent for that step, which is why 1.x files grow quadratically) and ``extra_info``.
- ``history``: the chat as the model saw it (``role``, ``content``, ``agent``, and in 1.x
  ``message_type``, ``thought``, ``action``, ``tool_calls``); demonstrations are marked
  ``is_demo`` or ``message_type == "demonstration"``. Demonstration files and some older runs
  carry ``history`` only.
- ``info``: ``exit_status``, ``submission`` (the final patch) and ``model_stats`` with
  ``instance_cost``, ``tokens_sent``, ``tokens_received``, ``api_calls``.
- 1.x only: ``replay_config``, the run configuration as a JSON string (sometimes an object),
  which names the model (``agent.model.name``) and the instance (``problem_statement.id``).

Steps are one per event: an agent turn becomes an ``assistant``/``action`` step followed by a
``tool``/``observation`` step. When ``trajectory`` is present it is the source of the agent
turns (its observations are complete, while ``history`` may hold elided ones), and ``history``
contributes only the system prompt and the task message before the first agent turn.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

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

SOURCE_FORMAT = "swe-agent"
SCAFFOLD = "swe-agent"
_MAX_TOOL_NAME = 100


def _is_demonstration(message: dict[str, Any]) -> bool:
    return bool(message.get("is_demo")) or message.get("message_type") == "demonstration"


def _command_name(action: str | None) -> str | None:
    """The command an action runs (``find_file``, ``edit``, ``submit``...), as its tool."""
    if not action:
        return None
    words = action.split(maxsplit=1)
    if not words or len(words[0]) > _MAX_TOOL_NAME:
        return None
    return words[0]


def _tool_call_name(message: dict[str, Any]) -> str | None:
    for call in as_list(message.get("tool_calls")):
        name = as_dict(as_dict(call).get("function")).get("name")
        if isinstance(name, str) and name:
            return name[:_MAX_TOOL_NAME]
    return None


def _add_history_message(
    collector: StepCollector,
    message: dict[str, Any],
    *,
    agent_has_spoken: bool,
    last_tool: str | None = None,
) -> str | None:
    """Add one chat message as a step; return the tool it invoked, if it was an action."""
    role = message.get("role")
    content = as_text(message.get("content"))
    extra = small_fields(
        message, skip=("role", "content", "thought", "action", "tool_calls", "tool_call_ids")
    )
    if role == "system":
        collector.add("system", "message", content, extra=extra)
    elif role == "assistant":
        action = as_text(message.get("action"))
        thought = non_empty_str(message.get("thought"))
        if message.get("message_type") == "thought" and not action:
            collector.add("assistant", "thought", content or thought, thought=thought, extra=extra)
        elif action:
            tool = _tool_call_name(message) or _command_name(action)
            collector.add(
                "assistant",
                "action",
                content,
                action=action,
                thought=thought,
                tool=tool,
                extra=extra,
            )
            return tool
        else:
            collector.add("assistant", "message", content, thought=thought, extra=extra)
    elif role == "tool" or (role == "user" and agent_has_spoken):
        # Before the agent's first turn a user message is the task; after it, the classic
        # agents send each command's output back as a user message.
        collector.add(
            "tool", "observation", content, observation=content or "", tool=last_tool, extra=extra
        )
    else:
        collector.add("user", "message", content, extra=extra)
    return None


def _add_trajectory_entry(collector: StepCollector, entry: dict[str, Any]) -> None:
    action = as_text(entry.get("action"))
    thought = non_empty_str(entry.get("thought"))
    tool = _command_name(action)
    extra: dict[str, Any] = {}
    execution_time = as_float(entry.get("execution_time"))
    if execution_time is not None:
        extra["execution_time"] = execution_time
    state = entry.get("state")
    if isinstance(state, str):
        extra["state"] = state
    elif isinstance(state, dict):
        extra["state"] = small_fields(state)
    collector.add(
        "assistant",
        "action",
        first_text(entry.get("response"), thought, action),
        action=action,
        thought=thought,
        tool=tool,
        extra=extra,
    )
    if "observation" in entry:
        observation = as_text(entry.get("observation")) or ""
        collector.add("tool", "observation", observation, observation=observation, tool=tool)


def _replay_config(document: dict[str, Any]) -> dict[str, Any]:
    config = document.get("replay_config")
    if isinstance(config, str):
        try:
            config = orjson.loads(config)
        except orjson.JSONDecodeError:
            return {}
    return as_dict(config)


def parse_document(
    document: Any, *, path: str | os.PathLike[str], line: int | None = None
) -> ParsedTrajectory:
    if not isinstance(document, dict):
        raise InvalidRecord(
            f"a SWE-agent .traj file holds a JSON object, this one holds a "
            f"{type(document).__name__}"
        )
    trajectory, history = document.get("trajectory"), document.get("history")
    if trajectory is None and history is None:
        raise InvalidRecord("missing required field 'trajectory' (or 'history')")
    for name, value in (("trajectory", trajectory), ("history", history)):
        if value is not None and not isinstance(value, list):
            raise InvalidRecord(f"'{name}' must be a list, not {type(value).__name__}")
        for position, item in enumerate(value or ()):
            if not isinstance(item, dict):
                raise InvalidRecord(f"{name}[{position}] is not an object")

    collector = StepCollector()
    demonstrations = sum(1 for message in history or () if _is_demonstration(message))
    if trajectory:
        for message in history or ():
            if message.get("role") == "assistant":
                break
            if not _is_demonstration(message):
                _add_history_message(collector, message, agent_has_spoken=False)
        for entry in trajectory:
            _add_trajectory_entry(collector, entry)
        step_source = "trajectory"
    else:
        agent_has_spoken = False
        last_tool = None  # an observation answers the action just before it
        for message in history or ():
            if _is_demonstration(message):
                continue
            tool = _add_history_message(
                collector, message, agent_has_spoken=agent_has_spoken, last_tool=last_tool
            )
            last_tool = tool or last_tool
            agent_has_spoken = agent_has_spoken or message.get("role") == "assistant"
        step_source = "history"

    info = as_dict(document.get("info"))
    model_stats = as_dict(info.get("model_stats"))
    replay = _replay_config(document)
    model = non_empty_str(as_dict(as_dict(replay.get("agent")).get("model")).get("name"))
    instance_id = non_empty_str(as_dict(replay.get("problem_statement")).get("id"))
    metadata: dict[str, Any] = {"step_source": step_source}
    info_details = small_fields(info, skip=("submission", "exit_status"))
    if info_details:
        metadata["info"] = info_details
    file_name = Path(path).name
    if instance_id is not None:
        metadata["instance_id_source"] = "replay_config"
    elif file_name.endswith(".traj") and len(file_name) > len(".traj"):
        # SWE-agent names each trajectory file after its instance (<instance_id>.traj); the
        # name is the only place left to look, and the caller can see that it guessed.
        instance_id = file_name.removesuffix(".traj")
        metadata["instance_id_source"] = "file_name"
    if model_stats:
        metadata["model_stats"] = small_fields(model_stats)
    if demonstrations:
        metadata["demonstrations_skipped"] = demonstrations
    if isinstance(document.get("environment"), str):
        metadata["environment"] = document["environment"]
    if not info:
        metadata["missing"] = ["info"]

    submission = info.get("submission")
    return ParsedTrajectory(
        source_format=SOURCE_FORMAT,
        instance_id=instance_id,
        model=model,
        scaffold=SCAFFOLD,
        final_patch=submission if isinstance(submission, str) else None,
        exit_status=non_empty_str(info.get("exit_status")),
        # instance_cost is this run's cost; 0.x also writes total_cost, a running total over
        # every instance of the batch, which would overstate the cost of this one.
        cost_usd=as_float(model_stats.get("instance_cost")),
        tokens_in=as_int(model_stats.get("tokens_sent")),
        tokens_out=as_int(model_stats.get("tokens_received")),
        steps=collector.steps,
        metadata=metadata,
        line=line,
        content_sha256=content_sha256(SOURCE_FORMAT, document),
    )
