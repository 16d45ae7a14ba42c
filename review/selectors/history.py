"""A task's history: its revisions with their field diffs, interleaved with its reviews."""

from __future__ import annotations

import difflib

from curation.models import Task
from workers.patchcore import PatchParseError, parse_patch

TEXT_DIFF_MAX_LINES = 400


def text_diff(before: str, after: str) -> list[tuple[str, str]]:
    """A field's change as (kind, line) pairs of a unified diff, for the small diffs of history.

    difflib writes the diff and the patch core reads it back, so the hunks are cut by the same
    parser as every patch on the site rather than by guessing from line prefixes.
    """
    patch = "".join(
        difflib.unified_diff(
            [line + "\n" for line in before.splitlines()],
            [line + "\n" for line in after.splitlines()],
            "a/field",
            "b/field",
            n=2,
        )
    )
    try:
        files = parse_patch(patch)
    except PatchParseError:
        return []
    lines: list[tuple[str, str]] = []
    kinds = {"+": "add", "-": "del", " ": "ctx"}
    for patched_file in files:
        for hunk in patched_file:
            lines.append(("hunk", _hunk_header(hunk)))
            for line in hunk:
                if line.line_type in kinds:
                    lines.append((kinds[line.line_type], line.line_type + line.value.rstrip("\n")))
    return lines[:TEXT_DIFF_MAX_LINES]


def _hunk_header(hunk) -> str:
    """The `@@ -a,b +c,d @@` line as difflib writes it (a length of one is left out)."""

    def span(start: int, length: int) -> str:
        return str(start) if length == 1 else f"{start},{length}"

    return (
        f"@@ -{span(hunk.source_start, hunk.source_length)} "
        f"+{span(hunk.target_start, hunk.target_length)} @@"
    )


def revision_changes(changes: dict) -> list[dict]:
    """A revision's `changes` for display: text fields as diffs, other values before → after."""
    out = []
    for name, change in (changes or {}).items():
        before, after = change.get("before"), change.get("after")
        if isinstance(before, str) and isinstance(after, str):
            out.append({"name": name, "diff": text_diff(before, after)})
        else:
            out.append({"name": name, "before": before, "after": after})
    return out


def task_history(*, task: Task) -> list[dict]:
    """Revisions (newest first) with their field diffs, interleaved with reviews."""
    events: list[dict] = []
    for rev in task.revisions.select_related("author").order_by("-revision")[:100]:
        events.append(
            {
                "kind": "revision",
                "at": rev.created_at,
                "rev": rev,
                "changes": revision_changes(rev.changes),
            }
        )
    for review in task.reviews.select_related("reviewer").order_by("-created_at")[:100]:
        events.append({"kind": "review", "at": review.created_at, "review": review})
    events.append({"kind": "created", "at": task.created_at})
    events.sort(key=lambda e: e["at"], reverse=True)
    return events
