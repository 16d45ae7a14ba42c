"""Template helpers of the curator's pages."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def label(value) -> str:
    return str(value or "").replace("_", " ")


@register.filter
def filesize(value) -> str:
    try:
        size = float(value)
    except (TypeError, ValueError):
        return "\u2013"
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


@register.filter
def seconds(value) -> str:
    if value is None:
        return "\u2013"
    value = float(value)
    if value < 60:
        return f"{value:.0f}s"
    minutes, secs = divmod(int(value), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"
