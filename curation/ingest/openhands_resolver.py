"""OpenHands resolver output: the ``output.jsonl`` that ``openhands.resolver`` writes, one run
on one GitHub/GitLab issue or pull request per line.

Its fields (the resolver's ``ResolverOutput`` model): ``issue`` (``owner``, ``repo``,
``number``, ``title``, ``body`` and, for pull requests, review comments and threads),
``issue_type`` (``issue`` or ``pr``), ``instruction`` (the prompt the agent got),
``base_commit``, ``git_patch`` (the diff it ended with), ``history`` (the event list, as in an
OpenHands session; see ``curation.ingest.openhands``), ``metrics`` (``accumulated_cost``,
``accumulated_token_usage``; may be null), ``success``, ``comment_success`` (per review comment,
for pull requests), ``result_explanation`` (older versions: ``success_explanation``) and
``error``. Some tools add an ``instance_id``; without one, the instance is named after the issue,
SWE-bench style: ``<owner>__<repo>-<number>``.

The file names no model (the run's configuration is not saved); the LLM responses in the event
history do, and a model given to the importer overrides them.
"""

from __future__ import annotations

import os
from typing import Any

from .openhands import _summary_metadata, collect_event_steps, event_trajectory
from .records import (
    InvalidRecord,
    ParsedTrajectory,
    as_dict,
    as_int,
    as_text,
    non_empty_str,
    small_fields,
)

SOURCE_FORMAT = "openhands-resolver"
_EXPLANATION_CHARS = 4000


def _instance_id(record: dict[str, Any], issue: dict[str, Any]) -> str:
    given = record.get("instance_id")
    if isinstance(given, int) and not isinstance(given, bool):
        given = str(given)
    if non_empty_str(given):
        return given
    owner, repo, number = issue.get("owner"), issue.get("repo"), as_int(issue.get("number"))
    if not (non_empty_str(owner) and non_empty_str(repo) and number is not None):
        raise InvalidRecord(
            "the record names no instance: it needs 'instance_id', or an 'issue' with "
            "'owner', 'repo' and 'number'"
        )
    return f"{owner}__{repo}-{number}"


def parse_resolver_record(
    record: Any, *, path: str | os.PathLike[str], line: int | None = None
) -> ParsedTrajectory:
    """One line of an OpenHands resolver output.jsonl."""
    if not isinstance(record, dict):
        raise InvalidRecord(f"expected a JSON object, got a {type(record).__name__}")
    issue = record.get("issue")
    if not isinstance(issue, dict):
        raise InvalidRecord("missing required field 'issue' (an object)")
    instance_id = _instance_id(record, issue)
    history = record.get("history")
    if history is not None and not isinstance(history, list):
        raise InvalidRecord(f"'history' must be a list, not {type(history).__name__}")
    steps, summary = collect_event_steps(history or [], "history")
    metrics = as_dict(record.get("metrics")) or summary.last_llm_metrics
    patch = record.get("git_patch")
    error = record.get("error")
    explanation = as_text(record.get("result_explanation", record.get("success_explanation")))

    metadata = _summary_metadata(summary)
    metadata["issue"] = small_fields(
        issue, skip=("thread_comments", "review_comments", "review_threads", "thread_ids")
    )
    for key in ("issue_type", "base_commit"):
        if isinstance(record.get(key), str):
            metadata[key] = record[key]
    if isinstance(record.get("success"), bool):
        metadata["success"] = record["success"]
    if isinstance(record.get("comment_success"), list):
        metadata["comment_success"] = record["comment_success"]
    if explanation:
        metadata["result_explanation"] = explanation[:_EXPLANATION_CHARS]
    if error:
        metadata["error"] = as_text(error)
    if not history:
        metadata["missing"] = ["history"]

    return event_trajectory(
        SOURCE_FORMAT,
        record,
        line=line,
        instance_id=instance_id,
        model=summary.response_model,
        patch=patch,
        error=error,
        summary=summary,
        steps=steps,
        metrics=metrics,
        metadata=metadata,
    )
