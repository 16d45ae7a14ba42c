"""Split a reference patch into one part per restored function, and join parts again.

The validator's leave-one-out check restores all functions but one and watches which tests
fail. That needs the reference patch cut along function lines: every change block is owned by
the innermost `def`/`class` that the old side of the hunk shows (its header's function context
or a context line above the block). Hunks that hold changes of several functions are cut into
smaller hunks, each with the context lines around its own block, so that any subset of parts
applies on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_DEFINITION = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_HEADING_DEFINITION = re.compile(r"(?:async\s+)?(?:def|class)\s+(\w+)")
_CONTEXT = 3


@dataclass
class Hunk:
    old_start: int
    new_start: int
    heading: str
    lines: list[str]  # each with its prefix (" ", "-", "+") and newline; markers kept attached

    @property
    def old_count(self) -> int:
        return sum(1 for line in self.lines if line[0] in " -")

    @property
    def new_count(self) -> int:
        return sum(1 for line in self.lines if line[0] in " +")


@dataclass
class FilePatch:
    path: str
    header: list[str]  # "diff --git", mode lines, "---", "+++"
    hunks: list[Hunk] = field(default_factory=list)

    @property
    def whole_file(self) -> bool:
        """A created or deleted file cannot be cut: it is one part."""
        return any(h.startswith(("new file mode", "deleted file mode")) for h in self.header)


def parse_patch(text: str) -> list[FilePatch]:
    files: list[FilePatch] = []
    current: FilePatch | None = None
    hunk: Hunk | None = None
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            line += "\n"
        if line.startswith("diff --git "):
            path = line.rstrip("\n").split(" b/", 1)[-1]
            current = FilePatch(path=path, header=[line])
            files.append(current)
            hunk = None
        elif current is None:
            continue
        elif line.startswith("@@"):
            match = _HUNK_HEADER.match(line.rstrip("\n"))
            if not match:
                raise ValueError(f"malformed hunk header: {line!r}")
            hunk = Hunk(int(match[1]), int(match[3]), match[5], [])
            current.hunks.append(hunk)
        elif hunk is None:
            current.header.append(line)
        elif line.startswith("\\"):
            if hunk.lines:
                hunk.lines[-1] += line
        elif line[0] in " -+":
            hunk.lines.append(line)
        elif line == "\n":  # some tools drop the space of an empty context line
            hunk.lines.append(" \n")
    return files


def render_patch(files: list[FilePatch]) -> str:
    """Patch text with each file's hunks ordered and new-side line numbers recomputed."""
    out: list[str] = []
    for file in files:
        out.extend(file.header)
        offset = 0
        for hunk in sorted(file.hunks, key=lambda h: h.old_start):
            old_count, new_count = hunk.old_count, hunk.new_count
            new_start = hunk.old_start + offset
            if old_count == 0 or new_count == 0:
                # An empty side names the line before it; a new file starts from 0.
                new_start = hunk.new_start if file.whole_file else new_start
            header = f"@@ -{_range(hunk.old_start, old_count)} +{_range(new_start, new_count)} @@"
            out.append((f"{header} {hunk.heading}" if hunk.heading else header) + "\n")
            out.extend(hunk.lines)
            offset += new_count - old_count
    return "".join(out)


def split_reference_parts(reference_patch: str) -> list[tuple[str, str]]:
    """[(part name, patch)], one per restored function, in patch order.

    Names are "path::function" (the innermost definition the hunk shows); a second function
    of the same name in the same file gets "#2", and a created or deleted file is named by its
    path alone.
    """
    order: list[str] = []
    parts: dict[str, dict[str, FilePatch]] = {}

    def add(name: str, file: FilePatch, hunk: Hunk | None) -> None:
        if name not in parts:
            parts[name] = {}
            order.append(name)
        target = parts[name].setdefault(file.path, FilePatch(file.path, list(file.header)))
        if hunk is not None:
            target.hunks.append(hunk)

    for file in parse_patch(reference_patch):
        if file.whole_file or not file.hunks:
            add(file.path, file, None)
            parts[file.path][file.path].hunks = list(file.hunks)
            continue
        # Owner name -> the def line first seen for it, to tell namesakes apart when both
        # definitions are visible (a header's function context carries no line number).
        seen_at: dict[str, int] = {}
        for hunk in file.hunks:
            for owner, owner_line, piece in _cut_by_owner(hunk):
                key = owner or "<module>"
                first = seen_at.setdefault(key, owner_line) if owner_line > 0 else -1
                namesake = first > 0 and first != owner_line
                add(f"{file.path}::{key}{'#2' if namesake else ''}", file, piece)
    return [(name, render_patch(list(parts[name].values()))) for name in order]


def combine_parts(patches: list[str]) -> str:
    """One patch from several parts of the same reference patch (hunks merged per file)."""
    merged: dict[str, FilePatch] = {}
    for patch in patches:
        for file in parse_patch(patch):
            target = merged.setdefault(file.path, FilePatch(file.path, list(file.header)))
            target.hunks.extend(file.hunks)
    return render_patch(list(merged.values()))


def _cut_by_owner(hunk: Hunk) -> list[tuple[str, int, Hunk]]:
    """Cut a hunk into pieces whose change blocks share one owning definition."""
    # The stack holds (indent, name, old line); the header's context has unknown indentation.
    stack: list[tuple[int, str, int]] = []
    heading = _HEADING_DEFINITION.findall(hunk.heading)
    if heading:
        stack.append((-1, heading[-1], -1))
    blocks: list[tuple[int, int, str, int]] = []  # start index, end index, owner, owner line
    old_line = hunk.old_start
    index = 0
    lines = hunk.lines
    while index < len(lines):
        line = lines[index]
        if line[0] == " ":
            _track_definition(stack, line[1:], old_line)
            old_line += 1
            index += 1
            continue
        start = index
        while index < len(lines) and lines[index][0] in "-+":
            index += 1
        owner, owner_line = _owner(stack, lines[start][1:])
        for changed in lines[start:index]:
            if changed[0] == "-":
                _track_definition(stack, changed[1:], old_line)
                old_line += 1
        blocks.append((start, index, owner, owner_line))
    if len({(b[2], b[3]) for b in blocks}) <= 1:
        owner, owner_line = (blocks[0][2], blocks[0][3]) if blocks else ("", -1)
        return [(owner, owner_line, hunk)]
    return _pieces(hunk, blocks)


def _pieces(hunk: Hunk, blocks: list[tuple[int, int, str, int]]) -> list[tuple[str, int, Hunk]]:
    groups: list[list[tuple[int, int, str, int]]] = []
    for block in blocks:
        if groups and (groups[-1][-1][2], groups[-1][-1][3]) == (block[2], block[3]):
            groups[-1].append(block)
        else:
            groups.append([block])
    pieces = []
    lines = hunk.lines
    previous_end = 0  # index after the last line the previous piece took
    for number, group in enumerate(groups):
        first, last = group[0][0], group[-1][1]
        ceiling = groups[number + 1][0][0] if number + 1 < len(groups) else len(lines)
        lead_from = max(previous_end, first - _CONTEXT)
        # Trailing context first: git anchors a hunk without trailing lines at the file's end.
        trail_to = min(ceiling, last + _CONTEXT)
        old_start = hunk.old_start + sum(1 for ln in lines[:lead_from] if ln[0] in " -")
        piece = Hunk(old_start, old_start, hunk.heading, list(lines[lead_from:trail_to]))
        pieces.append((group[0][2], group[0][3], piece))
        previous_end = trail_to
    return pieces


def _track_definition(stack: list[tuple[int, str, int]], text: str, old_line: int) -> None:
    match = _DEFINITION.match(text)
    if not match:
        return
    indent = len(match[1].expandtabs())
    while stack and stack[-1][0] >= indent:
        stack.pop()
    stack.append((indent, match[3], old_line))


def _owner(stack: list[tuple[int, str, int]], text: str) -> tuple[str, int]:
    indent = len(text) - len(text.lstrip(" \t"))
    for entry_indent, name, line in reversed(stack):
        if entry_indent < indent or not text.strip():
            return name, line
    return (stack[0][1], stack[0][2]) if stack else ("", -1)


def _range(start: int, count: int) -> str:
    return str(start) if count == 1 else f"{start},{count}"
