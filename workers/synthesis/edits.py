"""Line-range edits on source text, and the git-style diffs that describe them.

Edits work on lines as they are (line endings kept), never on a re-printed AST, so everything
outside the edited ranges keeps its formatting byte for byte. Every edited range becomes its
own hunk: hunks never span two edits, which lets a patch be split per function later and each
piece still apply on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

CONTEXT = 3
_NO_NEWLINE = "\\ No newline at end of file\n"


@dataclass(frozen=True)
class LineEdit:
    """Replace lines start..end (1-based, inclusive) with new_lines; end = start - 1 inserts."""

    start: int
    end: int
    new_lines: tuple[str, ...]
    label: str = ""  # shown after the hunk header, like git's function context


def split_lines(text: str) -> list[str]:
    """Lines with their endings, split on newline only (form feeds are not line breaks)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def line_ending(lines: list[str]) -> str:
    return "\r\n" if lines and lines[0].endswith("\r\n") else "\n"


def apply_edits(text: str, edits: list[LineEdit]) -> str:
    lines = split_lines(text)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        lines[edit.start - 1 : edit.end] = list(edit.new_lines)
    return "".join(lines)


def merge_touching(edits: list[LineEdit]) -> list[LineEdit]:
    """Join edits that overlap or touch, so that each hunk keeps at least one context line."""
    merged: list[LineEdit] = []
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if merged and edit.start <= merged[-1].end + 1:
            last = merged[-1]
            merged[-1] = LineEdit(
                last.start, max(last.end, edit.end), last.new_lines + edit.new_lines, last.label
            )
        else:
            merged.append(edit)
    return merged


def invert_edits(old_lines: list[str], edits: list[LineEdit]) -> list[LineEdit]:
    """Edits on the edited text that bring back the original."""
    inverse: list[LineEdit] = []
    offset = 0
    for edit in sorted(edits, key=lambda e: e.start):
        start = edit.start + offset
        restored = tuple(old_lines[edit.start - 1 : edit.end])
        inverse.append(LineEdit(start, start + len(edit.new_lines) - 1, restored, edit.label))
        offset += len(edit.new_lines) - (edit.end - edit.start + 1)
    return inverse


def file_patch(path: str, old_text: str, edits: list[LineEdit]) -> str:
    """A `diff --git` section for a modified file; "" when the edits change nothing."""
    old_lines = split_lines(old_text)
    edits = sorted(edits, key=lambda e: e.start)
    hunks: list[str] = []
    offset = 0
    previous_end = 0  # last old line already shown by the previous hunk
    for index, edit in enumerate(edits):
        removed = old_lines[edit.start - 1 : edit.end]
        if list(edit.new_lines) == removed:
            continue
        next_start = edits[index + 1].start if index + 1 < len(edits) else len(old_lines) + 1
        lead_from = max(previous_end + 1, edit.start - CONTEXT, 1)
        # Hunks never share lines. Between two close edits the earlier hunk's trailing context
        # comes first: git reads a hunk without trailing lines as anchored at the end of file.
        trail_to = min(edit.end + CONTEXT, next_start - 1, len(old_lines))
        lead = old_lines[lead_from - 1 : edit.start - 1]
        trail = old_lines[edit.end : trail_to]
        old_count = len(lead) + len(removed) + len(trail)
        new_count = len(lead) + len(edit.new_lines) + len(trail)
        old_start = lead_from if old_count else lead_from - 1
        new_start = lead_from + offset if new_count else lead_from + offset - 1
        header = f"@@ -{_range(old_start, old_count)} +{_range(new_start, new_count)} @@"
        body = [" " + line for line in lead]
        body += ["-" + line for line in removed]
        body += ["+" + line for line in edit.new_lines]
        body += [" " + line for line in trail]
        hunks.append(_with_label(header, edit.label) + "\n" + "".join(_terminate(body)))
        offset += len(edit.new_lines) - len(removed)
        previous_end = trail_to
    if not hunks:
        return ""
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n" + "".join(hunks)


def deletion_patch(path: str, old_text: str, mode: str = "100644") -> str:
    lines = split_lines(old_text)
    head = f"diff --git a/{path} b/{path}\ndeleted file mode {mode}\n"
    if not lines:
        return head
    body = "".join(_terminate(["-" + line for line in lines]))
    return head + f"--- a/{path}\n+++ /dev/null\n@@ -{_range(1, len(lines))} +0,0 @@\n" + body


def creation_patch(path: str, new_text: str, mode: str = "100644") -> str:
    lines = split_lines(new_text)
    head = f"diff --git a/{path} b/{path}\nnew file mode {mode}\n"
    if not lines:
        return head
    body = "".join(_terminate(["+" + line for line in lines]))
    return head + f"--- /dev/null\n+++ b/{path}\n@@ -0,0 +{_range(1, len(lines))} @@\n" + body


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"


def _with_label(header: str, label: str) -> str:
    label = " ".join(label.split())[:80]
    return f"{header} {label}" if label else header


def _terminate(body: list[str]) -> list[str]:
    """A line that lacks its newline (the file's last) is followed by git's marker."""
    return [line if line.endswith("\n") else line + "\n" + _NO_NEWLINE for line in body]
