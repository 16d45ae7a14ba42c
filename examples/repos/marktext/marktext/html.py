"""Render parsed markup to HTML. All text is escaped; unsafe link schemes are refused."""
from __future__ import annotations

import re
from typing import Optional

from .anchors import TocEntry, build_toc, heading_anchors
from .blocks import Block, CodeBlock, Heading, ListBlock, Paragraph, Quote, Rule, Table, parse_blocks
from .errors import UnsafeURLError
from .inline import Code, Emphasis, Link, Node, Strong, Text, parse_inline

SAFE_SCHEMES = frozenset({"http", "https", "mailto"})

_SCHEME_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")


def escape_html(text: str, quote: bool = True) -> str:
    """Escape ``& < >`` and, with ``quote``, both quote characters."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if quote:
        escaped = escaped.replace('"', "&quot;").replace("'", "&#x27;")
    return escaped


def _safe_url(url: str) -> str:
    """Return the URL without control characters; raise UnsafeURLError for other schemes.

    Browsers ignore tabs and newlines inside a scheme (``java\\tscript:``), so they are
    removed before the check.
    """
    cleaned = "".join(char for char in url if char >= " " and char != "\x7f").strip()
    match = _SCHEME_RE.match(cleaned)
    if match is not None and match.group(1).lower() not in SAFE_SCHEMES:
        raise UnsafeURLError(f"unsafe URL scheme {match.group(1).lower()!r}")
    return cleaned


def _render_node(node: Node, drop_unsafe_links: bool) -> str:
    if isinstance(node, Text):
        return escape_html(node.value, quote=False)
    if isinstance(node, Code):
        return f"<code>{escape_html(node.value, quote=False)}</code>"
    if isinstance(node, Emphasis):
        return f"<em>{render_inline(node.children, drop_unsafe_links)}</em>"
    if isinstance(node, Strong):
        return f"<strong>{render_inline(node.children, drop_unsafe_links)}</strong>"
    if isinstance(node, Link):
        label = render_inline(node.children, drop_unsafe_links)
        try:
            href = _safe_url(node.url)
        except UnsafeURLError:
            if drop_unsafe_links:
                return label
            raise
        return f'<a href="{escape_html(href)}">{label}</a>'
    raise TypeError(f"cannot render {type(node).__name__}")


def render_inline(nodes: list[Node], drop_unsafe_links: bool = True) -> str:
    """HTML for inline nodes. Unsafe links become their bare label unless ``drop_unsafe_links`` is False."""
    return "".join(_render_node(node, drop_unsafe_links) for node in nodes)


def _render_list(block: ListBlock, drop_unsafe_links: bool) -> str:
    tag = "ol" if block.ordered else "ul"
    start = f' start="{block.start}"' if block.ordered and block.start != 1 else ""
    items = [f"<li>{render_inline(parse_inline(item), drop_unsafe_links)}</li>" for item in block.items]
    return "\n".join([f"<{tag}{start}>", *items, f"</{tag}>"])


def _render_table(table: Table, drop_unsafe_links: bool) -> str:
    """A table with ``<thead>`` and, when there are rows, ``<tbody>``; alignment via ``style``."""
    lines = ["<table>", "<thead>"]
    rows = [("th", table.header)] + [("td", row) for row in table.rows]
    for number, (tag, cells) in enumerate(rows):
        if number == 1:
            lines.append("<tbody>")
        lines.append("<tr>")
        for text, align in zip(cells, table.align):
            style = f' style="text-align: {align}"' if align else ""
            lines.append(f"<{tag}{style}>{render_inline(parse_inline(text), drop_unsafe_links)}</{tag}>")
        lines.append("</tr>")
        if number == 0:
            lines.append("</thead>")
    if table.rows:
        lines.append("</tbody>")
    lines.append("</table>")
    return "\n".join(lines)


def render_block(block: Block, anchor: Optional[str] = None, drop_unsafe_links: bool = True) -> str:
    """HTML for one block; ``anchor`` becomes the ``id`` of a heading."""
    if isinstance(block, Heading):
        id_attr = f' id="{escape_html(anchor)}"' if anchor else ""
        inner = render_inline(parse_inline(block.text), drop_unsafe_links)
        return f"<h{block.level}{id_attr}>{inner}</h{block.level}>"
    if isinstance(block, Paragraph):
        return f"<p>{render_inline(parse_inline(block.text), drop_unsafe_links)}</p>"
    if isinstance(block, CodeBlock):
        css = f' class="language-{escape_html(block.language)}"' if block.language else ""
        return f"<pre><code{css}>{escape_html(block.code, quote=False)}\n</code></pre>"
    if isinstance(block, ListBlock):
        return _render_list(block, drop_unsafe_links)
    if isinstance(block, Quote):
        inner = [render_block(child, None, drop_unsafe_links) for child in block.children]
        return "\n".join(["<blockquote>", *inner, "</blockquote>"])
    if isinstance(block, Rule):
        return "<hr>"
    if isinstance(block, Table):
        return _render_table(block, drop_unsafe_links)
    raise TypeError(f"cannot render {type(block).__name__}")


def _render_toc_html(entries: list[TocEntry]) -> str:
    lines = ["<ul>"]
    for entry in entries:
        link = f'<a href="#{escape_html(entry.anchor)}">{escape_html(entry.title, quote=False)}</a>'
        if entry.children:
            lines.append(f"<li>{link}\n{_render_toc_html(entry.children)}\n</li>")
        else:
            lines.append(f"<li>{link}</li>")
    lines.append("</ul>")
    return "\n".join(lines)


def render(text: str, toc: bool = False, drop_unsafe_links: bool = True) -> str:
    """Render a whole document; headings get unique ids, ``toc=True`` prepends a ``<nav>``."""
    blocks = parse_blocks(text)
    anchors = {id(heading): anchor for heading, anchor in heading_anchors(blocks)}
    parts = []
    if toc:
        entries = build_toc(blocks)
        if entries:
            parts.append(f'<nav class="toc">\n{_render_toc_html(entries)}\n</nav>')
    parts.extend(render_block(block, anchors.get(id(block)), drop_unsafe_links) for block in blocks)
    return "\n".join(parts) + "\n" if parts else ""
