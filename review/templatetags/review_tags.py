"""Template helpers of the reviewer's workspace."""

from __future__ import annotations

from django import template

from curation.templatetags.curation_tags import seconds as format_seconds
from review import rendering

register = template.Library()


@register.filter
def markdown(text: str):
    """Markdown without raw HTML, sanitized by nh3."""
    return rendering.markdown_html(text)


@register.filter
def get(mapping, key):
    if isinstance(mapping, list | tuple):
        try:
            return mapping[int(key)]
        except (IndexError, TypeError, ValueError):
            return None
    try:
        return mapping.get(key)
    except AttributeError:
        return None


@register.simple_tag
def cell(matrix, model, key):
    return matrix.get((model, key))


@register.simple_tag
def diff_tables(diff_file, patch, comments_by_line):
    return rendering.diff_tables(diff_file, patch, comments_by_line)


@register.simple_tag
def line_comments(comments_by_line, patch, path, line):
    if line is None or not comments_by_line:
        return []
    return comments_by_line.get((patch, path, line), [])


@register.filter
def duration(seconds):
    return format_seconds(seconds)  # the curator pages' format: one way to write a duration


@register.filter
def pct(value):
    if value is None:
        return "\u2013"
    return f"{float(value) * 100:.0f}%"


@register.filter
def label(value: str) -> str:
    return (value or "").replace("_", " ")


@register.filter
def short(value: str, n: int = 12) -> str:
    return (value or "")[: int(n)]


@register.filter
def testname(nodeid: str) -> str:
    """The last part of a pytest node id (function and parameters), unicode shown as such."""
    return rendering.readable_nodeid((nodeid or "").rsplit("::", 1)[-1])


@register.filter
def testfile(nodeid: str) -> str:
    head, sep, _ = (nodeid or "").rpartition("::")
    return rendering.readable_nodeid(head) if sep else ""


@register.filter
def nodeid(value: str) -> str:
    """A whole pytest node id for display (the stored id keeps pytest's escapes)."""
    return rendering.readable_nodeid(value)


@register.filter
def alpha_class(value) -> str:
    if value is None:
        return "muted"
    if value >= 0.8:
        return "good"
    if value >= 0.667:
        return "fair"
    return "poor"
