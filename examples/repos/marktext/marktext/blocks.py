"""Block structure: headings, paragraphs, fenced code, lists, block quotes, rules, tables.

Blocks are separated by blank lines; headings, fences, quotes, rules and list items
also interrupt a paragraph. A table needs a blank line (or the start of the text)
before its header row.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional, Union

from .errors import BlockError


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Paragraph:
    text: str


@dataclass
class CodeBlock:
    code: str
    language: str = ""


@dataclass
class ListBlock:
    ordered: bool
    items: list[str]
    start: int = 1


@dataclass
class Quote:
    children: list = field(default_factory=list)


@dataclass
class Rule:
    pass


@dataclass
class Table:
    header: list[str]
    align: list[Optional[str]]
    rows: list[list[str]] = field(default_factory=list)


Block = Union[Heading, Paragraph, CodeBlock, ListBlock, Quote, Rule, Table]

_LIST_RE = re.compile(r"^ {0,3}(?:([-*+])|(\d{1,9})([.)]))(?:[ \t]+(.*))?$")
_ALIGN_RE = re.compile(r"^:?-+:?$")


def _heading_level(line: str) -> Optional[tuple[int, str]]:
    """``"## Title ##"`` -> ``(2, "Title")``; None when the line is not an ATX heading.

    ``#hashtag`` is not a heading: the hashes must be followed by a space or the end.
    """
    stripped = line.lstrip(" ")
    if len(line) - len(stripped) > 3:
        return None
    hashes = len(stripped) - len(stripped.lstrip("#"))
    if hashes == 0 or hashes > 6:
        return None
    rest = stripped[hashes:]
    if rest and not rest.startswith((" ", "\t")):
        return None
    text = rest.strip()
    if text.endswith("#"):
        trimmed = text.rstrip("#")
        if not trimmed or trimmed.endswith((" ", "\t")):
            text = trimmed.strip()
    return hashes, text


def _is_rule(line: str) -> bool:
    """Three or more ``-``, ``*`` or ``_`` (spaces allowed between), indented at most 3."""
    if len(line) - len(line.lstrip(" ")) > 3:
        return False
    compact = line.replace(" ", "").replace("\t", "")
    return len(compact) >= 3 and compact[0] in "-*_" and compact == compact[0] * len(compact)


def _read_fence(lines: list[str], start: int) -> tuple[CodeBlock, int]:
    """Read a fenced code block opened at ``lines[start]``; returns it and the next index."""
    opener = lines[start].strip()
    fence_char = opener[0]
    fence_len = len(opener) - len(opener.lstrip(fence_char))
    info = opener[fence_len:].strip()
    if fence_char == "`" and "`" in info:
        raise BlockError("the info string of a backtick fence cannot contain backticks", start + 1)
    body = []
    for index in range(start + 1, len(lines)):
        candidate = lines[index].strip()
        if len(candidate) >= fence_len and candidate == fence_char * len(candidate):
            language = info.split()[0] if info else ""
            return CodeBlock("\n".join(body), language), index + 1
        body.append(lines[index])
    raise BlockError(f"unclosed code fence {fence_char * fence_len}", start + 1)


def _list_marker(line: str) -> Optional[tuple[bool, int, str, str]]:
    """``"3) text"`` -> ``(True, 3, ")", "text")``; ``"- text"`` -> ``(False, 1, "-", "text")``."""
    match = _LIST_RE.match(line)
    if match is None:
        return None
    content = (match.group(4) or "").strip()
    if match.group(1):
        return False, 1, match.group(1), content
    return True, int(match.group(2)), match.group(3), content


def _parse_list(lines: list[str], start: int) -> tuple[ListBlock, int]:
    """Read consecutive items of one list; indented lines continue the previous item.

    A different marker (``-`` after ``*``, ``1)`` after ``1.``) starts a new list.
    """
    marker = _list_marker(lines[start])
    if marker is None:
        raise BlockError("not a list item", start + 1)
    ordered, number, delimiter, content = marker
    items = [content]
    index = start + 1
    while index < len(lines):
        line = lines[index]
        if not line.strip() or _is_rule(line):
            break
        found = _list_marker(line)
        if found is not None:
            if found[0] != ordered or found[2] != delimiter:
                break
            items.append(found[3])
        elif line.startswith(("  ", "\t")):
            items[-1] = f"{items[-1]} {line.strip()}".strip()
        else:
            break
        index += 1
    return ListBlock(ordered, items, number if ordered else 1), index


def _read_quote(lines: list[str], start: int) -> tuple[Quote, int]:
    """Read ``>`` lines and parse their content as blocks of their own."""
    inner = []
    index = start
    while index < len(lines) and lines[index].lstrip().startswith(">"):
        content = lines[index].lstrip()[1:]
        inner.append(content[1:] if content.startswith(" ") else content)
        index += 1
    try:
        children = parse_blocks("\n".join(inner))
    except BlockError as exc:
        # Report the line in the outer document, not inside the quote.
        raise BlockError(exc.message, start + (exc.position or 1)) from None
    return Quote(children), index


def _split_row(line: str) -> list[str]:
    """Cells of a pipe-table row; outer pipes are optional and ``\\|`` is a literal pipe."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    cells, current = [], []
    index = 0
    while index < len(text):
        char = text[index]
        if char == "\\" and text[index + 1 : index + 2] == "|":
            current.append("|")
            index += 2
            continue
        if char == "|":
            cells.append("".join(current).strip())
            current = []
        else:
            current.append(char)
        index += 1
    cells.append("".join(current).strip())
    return cells


def _parse_alignment(cells: list[str]) -> Optional[list[Optional[str]]]:
    """Read a delimiter row (``:--``, ``--:``, ``:-:``, ``---``); None if it is not one."""
    aligns: list[Optional[str]] = []
    for cell in cells:
        spec = cell.replace(" ", "")
        if not _ALIGN_RE.match(spec):
            return None
        left, right = spec.startswith(":"), spec.endswith(":")
        if left and right:
            aligns.append("center")
        elif left:
            aligns.append("left")
        elif right:
            aligns.append("right")
        else:
            aligns.append(None)
    return aligns


def _parse_table(lines: list[str], start: int) -> Optional[tuple[Table, int]]:
    """A header row, a delimiter row, then body rows until a blank line.

    Short body rows are padded with empty cells and long ones cut to the header width.
    """
    if start + 1 >= len(lines) or "|" not in lines[start] or "-" not in lines[start + 1]:
        return None
    aligns = _parse_alignment(_split_row(lines[start + 1]))
    if aligns is None:
        return None
    header = _split_row(lines[start])
    if len(header) != len(aligns):
        raise BlockError(
            f"table header has {len(header)} cells but its delimiter row has {len(aligns)}", start + 2
        )
    rows = []
    index = start + 2
    while index < len(lines) and lines[index].strip() and "|" in lines[index]:
        cells = _split_row(lines[index])
        rows.append((cells + [""] * len(header))[: len(header)])
        index += 1
    return Table(header, aligns, rows), index


def _read_paragraph(lines: list[str], start: int) -> tuple[Paragraph, int]:
    parts = [lines[start].strip()]
    index = start + 1
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if (
            not stripped
            or stripped.startswith(("```", "~~~", ">"))
            or _heading_level(line) is not None
            or _is_rule(line)
            or _list_marker(line) is not None
        ):
            break
        parts.append(stripped)
        index += 1
    return Paragraph("\n".join(parts)), index


def _parse_block_at(lines: list[str], index: int) -> tuple[Optional[Block], int]:
    """Parse the block starting at ``lines[index]``; returns it (None for a blank line) and the next index."""
    line = lines[index]
    stripped = line.strip()
    if not stripped:
        return None, index + 1
    if stripped.startswith(("```", "~~~")):
        return _read_fence(lines, index)
    heading = _heading_level(line)
    if heading is not None:
        return Heading(*heading), index + 1
    if _is_rule(line):
        return Rule(), index + 1
    if stripped.startswith(">"):
        return _read_quote(lines, index)
    if _list_marker(line) is not None:
        return _parse_list(lines, index)
    table = _parse_table(lines, index)
    if table is not None:
        return table
    return _read_paragraph(lines, index)


def parse_blocks(text: str) -> list[Block]:
    """Split a document into blocks. Raises BlockError (with a line number) on bad fences and tables."""
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        block, index = _parse_block_at(lines, index)
        if block is not None:
            blocks.append(block)
    return blocks
