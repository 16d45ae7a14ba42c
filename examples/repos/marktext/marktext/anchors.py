"""Slugs, unique heading anchors and tables of contents."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Optional

from .blocks import Block, Heading
from .inline import parse_inline, to_plain

# Letters that Unicode decomposition does not reduce to ASCII.
_SPECIAL_LETTERS = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d", "œ": "oe"})


@dataclass
class TocEntry:
    level: int
    title: str
    anchor: str
    children: list["TocEntry"] = field(default_factory=list)


def _strip_accents(text: str) -> str:
    """``"Crème Brûlée"`` -> ``"Creme Brulee"``; letters of other scripts are kept whole.

    Only marks that sit on an ASCII letter are dropped, so ``"ジ"`` stays ``"ジ"``.
    """
    translated = text.translate(_SPECIAL_LETTERS)
    decomposed = unicodedata.normalize("NFKD", translated)
    kept: list[str] = []
    for char in decomposed:
        if unicodedata.combining(char) and kept and kept[-1].isascii():
            continue
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


def slugify(text: str, separator: str = "-", max_length: Optional[int] = None) -> str:
    """Lower-case words joined by ``separator``: ``"Hello, World!"`` -> ``"hello-world"``.

    With ``max_length`` the slug is cut at a word boundary when possible.
    """
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    if not separator or any(char.isalnum() for char in separator):
        raise ValueError("separator must be non-empty and contain no letters or digits")
    words = re.findall(r"[^\W_]+", _strip_accents(text).casefold())
    slug = separator.join(words)
    if max_length is not None:
        if max_length < 1:
            raise ValueError("max_length must be at least 1")
        while len(slug) > max_length and separator in slug:
            slug = slug.rsplit(separator, 1)[0]
        slug = slug[:max_length]
    return slug


def unique_slug(slug: str, seen: dict[str, int]) -> str:
    """Return ``slug``, or ``slug-1``, ``slug-2``... if already used; records it in ``seen``.

    An empty slug becomes ``"section"``.
    """
    base = slug or "section"
    if base not in seen:
        seen[base] = 0
        return base
    while True:
        seen[base] += 1
        candidate = f"{base}-{seen[base]}"
        if candidate not in seen:
            seen[candidate] = 0
            return candidate


def heading_anchors(blocks: list[Block]) -> list[tuple[Heading, str]]:
    """Unique anchors for the top-level headings of a document, in document order."""
    seen: dict[str, int] = {}
    anchors = []
    for block in blocks:
        if isinstance(block, Heading):
            title = to_plain(parse_inline(block.text))
            anchors.append((block, unique_slug(slugify(title), seen)))
    return anchors


def _nest(entries: list[TocEntry]) -> list[TocEntry]:
    """Turn a flat list into a tree: each entry goes under the last shallower one."""
    roots: list[TocEntry] = []
    stack: list[TocEntry] = []
    for entry in entries:
        while stack and stack[-1].level >= entry.level:
            stack.pop()
        if stack:
            stack[-1].children.append(entry)
        else:
            roots.append(entry)
        stack.append(entry)
    return roots


def build_toc(blocks: list[Block], max_level: int = 3) -> list[TocEntry]:
    """Nested table of contents of the headings up to ``max_level``."""
    if not 1 <= max_level <= 6:
        raise ValueError(f"max_level must be between 1 and 6, got {max_level}")
    entries = []
    for heading, anchor in heading_anchors(blocks):
        if heading.level <= max_level:
            title = to_plain(parse_inline(heading.text))
            entries.append(TocEntry(heading.level, title, anchor))
    return _nest(entries)


def render_toc(entries: list[TocEntry], indent: int = 2) -> str:
    """The table of contents as a nested Markdown list of links."""
    if indent < 1:
        raise ValueError("indent must be at least 1")
    lines = []
    stack = [(entry, 0) for entry in reversed(entries)]
    while stack:
        entry, depth = stack.pop()
        label = entry.title.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
        lines.append(f"{' ' * (indent * depth)}- [{label}](#{entry.anchor})")
        stack.extend((child, depth + 1) for child in reversed(entry.children))
    return "\n".join(lines)
