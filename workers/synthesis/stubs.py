"""Replace function bodies with `raise NotImplementedError`, keeping everything else.

The signature, decorators and docstring stay, and so does every other line of the file: the
edit covers exactly the body (plus comments between the docstring and the first statement and
comments trailing the body, which would otherwise give the implementation away).
"""

from __future__ import annotations

from workers.synthesis.edits import LineEdit, line_ending, split_lines
from workers.synthesis.functions import FunctionInfo

STUB = "raise NotImplementedError"


def stub_edit(lines: list[str], info: FunctionInfo) -> LineEdit:
    start, end = info.body_start, _body_end(lines, info)
    indent = _body_indent(lines, start, end)
    last = lines[end - 1]
    # Keep the file's line endings, and its missing final newline when the body ends the file.
    ending = line_ending(lines) if last.endswith("\n") else ""
    label = lines[info.def_line - 1].strip()
    return LineEdit(start, end, (f"{indent}{STUB}{ending}",), label)


def stub_edits(text: str, functions: list[FunctionInfo]) -> list[LineEdit]:
    lines = split_lines(text)
    return sorted((stub_edit(lines, f) for f in functions), key=lambda e: e.start)


def removed_body_lines(text: str, functions: list[FunctionInfo]) -> list[str]:
    """The code lines that stubbing takes away (comments and blank lines left out)."""
    lines = split_lines(text)
    removed: list[str] = []
    for edit in stub_edits(text, functions):
        for line in lines[edit.start - 1 : edit.end]:
            stripped = line.strip()
            if stripped and not stripped.startswith("#"):
                removed.append(stripped)
    return removed


def _indent_of(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _body_end(lines: list[str], info: FunctionInfo) -> int:
    """The body's last line, taking in comments indented as body that follow it."""
    def_indent = len(_indent_of(lines[info.def_line - 1]).expandtabs())
    end = info.end
    probe = end + 1
    while probe <= len(lines):
        stripped = lines[probe - 1].strip()
        if not stripped:
            probe += 1
            continue
        indent = len(_indent_of(lines[probe - 1]).expandtabs())
        if stripped.startswith("#") and indent > def_indent:
            end = probe
            probe += 1
            continue
        break
    return end


def _body_indent(lines: list[str], start: int, end: int) -> str:
    for line in lines[start - 1 : end]:
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return _indent_of(line)
    return _indent_of(lines[start - 1]) or "    "
