"""Turning repository and agent content into safe HTML: markdown, code, diffs, graphs, charts.

Nothing here trusts its input. Markdown goes through markdown-it with raw HTML off and then
nh3; code and diffs are tokenised by Pygments and every piece of text is escaped by us; SVG is
built from escaped strings. The results are marked safe only at the end of each function.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from dataclasses import dataclass, field
from html import escape

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.python import PythonLexer
from pygments.token import STANDARD_TYPES
from pygments.util import ClassNotFound
from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

# --- markdown --------------------------------------------------------------------------------

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
_TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote",
    "pre", "code", "em", "strong", "del", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def markdown_html(text: str) -> SafeString:
    """Problem statements and comments: markdown without raw HTML, sanitized again by nh3."""
    rendered = _MD.render(text or "")
    clean = nh3.clean(
        rendered,
        tags=_TAGS,
        attributes={"a": {"href", "title"}, "th": {"align"}, "td": {"align"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308 - sanitized by nh3 just above


# --- test ids --------------------------------------------------------------------------------

# pytest writes non-ASCII parameter ids as escapes (`[\xfcn\xefcode]`); the stored id must stay
# exactly that (it is how the test is run again), but a person reads the characters.
_ID_ESCAPE = re.compile(r"\\(?:x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|(\\))")


def _unescape_id(match: re.Match) -> str:
    if match.group(4):
        return "\\"
    code = int(match.group(1) or match.group(2) or match.group(3), 16)
    if code > 0x10FFFF:
        return match.group(0)
    char = chr(code)
    # Control and invisible characters stay escaped: they would hide what the id really holds.
    return char if char.isprintable() and not char.isspace() else match.group(0)


def readable_nodeid(nodeid: str) -> str:
    """A pytest node id for display: escaped unicode in parameter ids shown as characters.

    Display only; the result is text that templates escape like any other.
    """
    if "\\" not in (nodeid or ""):
        return nodeid or ""
    return _ID_ESCAPE.sub(_unescape_id, nodeid)


# --- code ------------------------------------------------------------------------------------

_PYTHON = PythonLexer(stripnl=False, ensurenl=False)


@functools.lru_cache(maxsize=256)
def lexer_for(path: str):
    if not path or path.endswith(".py"):
        return _PYTHON
    try:
        return get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@functools.lru_cache(maxsize=512)
def _css_class(ttype) -> str:
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES.get(ttype, "")


def _tokens(text: str, lexer) -> list[tuple[str, str]]:
    """(css class, text) runs of one text; neighbouring runs of one colour are merged."""
    if lexer is None:
        return [("", text)]
    runs: list[tuple[str, str]] = []
    for ttype, value in lexer.get_tokens(text):
        cls = _css_class(ttype)
        if runs and runs[-1][0] == cls:
            runs[-1] = (cls, runs[-1][1] + value)
        else:
            runs.append((cls, value))
    return runs


def _token_lines(lines: list[str], lexer) -> list[list[tuple[str, str]]]:
    """Lex consecutive lines as one text (strings spanning lines stay strings), split per line."""
    out: list[list[tuple[str, str]]] = [[]]
    for cls, value in _tokens("\n".join(lines), lexer):
        parts = value.split("\n")
        for i, part in enumerate(parts):
            if i:
                out.append([])
            if part:
                out[-1].append((cls, part))
    while len(out) < len(lines):
        out.append([])
    return out[: len(lines)]


def _render_tokens(runs: list[tuple[str, str]], marks: list[tuple[int, int]] | None = None) -> str:
    """Escaped HTML of one line's runs; `marks` (char ranges) get a word highlight."""
    out: list[str] = []
    bounds = sorted(marks or [])
    start = 0
    for cls, value in runs:
        while value:
            # Cut the run at the next mark boundary so marks and colours nest properly.
            in_mark = next((m for m in bounds if m[0] <= start < m[1]), None) if bounds else None
            if in_mark:
                cut = min(len(value), in_mark[1] - start)
            elif bounds:
                nxt = min((m[0] for m in bounds if m[0] > start), default=start + len(value))
                cut = min(len(value), nxt - start)
            else:
                cut = len(value)
            piece, value = value[:cut], value[cut:]
            html = escape(piece, quote=False)
            if cls:
                html = f'<span class="{cls}">{html}</span>'
            if in_mark:
                html = f'<mark class="wd">{html}</mark>'
            out.append(html)
            start += cut
    return "".join(out)


def highlight_line(text: str, lexer=_PYTHON, marks: list[tuple[int, int]] | None = None) -> str:
    """One line as escaped, token-coloured HTML."""
    runs = [(c, v.rstrip("\n")) for c, v in _tokens(text, lexer)]
    return _render_tokens(runs, marks)


def highlight_code(code: str, path: str = "x.py") -> list[SafeString]:
    """Source as a list of highlighted lines (for a line-numbered table)."""
    lines = (code or "").split("\n")
    return [mark_safe(_render_tokens(r)) for r in _token_lines(lines, lexer_for(path))]  # noqa: S308


# --- diffs -----------------------------------------------------------------------------------


@dataclass
class DiffLine:
    kind: str  # "add" | "del" | "ctx" | "gap"
    old: int | None
    new: int | None
    html: SafeString
    text: str = ""


@dataclass
class SplitRow:
    left: DiffLine | None
    right: DiffLine | None
    gap: str = ""


@dataclass
class DiffFile:
    path: str
    status: str  # "added" | "removed" | "modified" | "renamed"
    added: int
    removed: int
    lines: list[DiffLine] = field(default_factory=list)
    rows: list[SplitRow] = field(default_factory=list)
    index: int = 0

    @property
    def big(self) -> bool:
        return len(self.lines) > 400


@dataclass
class Diff:
    files: list[DiffFile]
    error: str = ""

    @property
    def added(self) -> int:
        return sum(f.added for f in self.files)

    @property
    def removed(self) -> int:
        return sum(f.removed for f in self.files)


_WORD = re.compile(r"\w+|\s+|[^\w\s]")


def _word_marks(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Character ranges that differ between two lines, at word granularity."""
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    matcher = difflib.SequenceMatcher(None, wa, wb, autojunk=False)
    if matcher.ratio() < 0.35:
        return [], []  # too different: the whole line is the change, no word marks
    offs_a = [0]
    for w in wa:
        offs_a.append(offs_a[-1] + len(w))
    offs_b = [0]
    for w in wb:
        offs_b.append(offs_b[-1] + len(w))
    marks_a, marks_b = [], []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            marks_a.append((offs_a[i1], offs_a[i2]))
        if j2 > j1:
            marks_b.append((offs_b[j1], offs_b[j2]))
    return marks_a, marks_b


def _split_rows(lines: list[DiffLine]) -> list[SplitRow]:
    rows: list[SplitRow] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.kind == "gap":
            rows.append(SplitRow(None, None, gap=line.text))
            i += 1
        elif line.kind == "ctx":
            rows.append(SplitRow(line, line))
            i += 1
        else:
            dels, adds = [], []
            while i < len(lines) and lines[i].kind == "del":
                dels.append(lines[i])
                i += 1
            while i < len(lines) and lines[i].kind == "add":
                adds.append(lines[i])
                i += 1
            for k in range(max(len(dels), len(adds))):
                rows.append(
                    SplitRow(dels[k] if k < len(dels) else None, adds[k] if k < len(adds) else None)
                )
    return rows


MAX_DIFF_LINES = 6000


def _hunk_lines(hunk, lexer, budget: list[int]) -> list[DiffLine]:
    raw = []  # (kind, old, new, text)
    for line in hunk:
        if budget[0] <= 0:
            break
        budget[0] -= 1
        if line.line_type == "\\":
            continue
        text = line.value.rstrip("\n").rstrip("\r")
        kind = "del" if line.is_removed else "add" if line.is_added else "ctx"
        raw.append((kind, line.source_line_no, line.target_line_no, text))
    # Each side of the hunk is lexed as one text: the old side (context and removed lines)
    # and the new side (context and added lines).
    old_idx = [i for i, r in enumerate(raw) if r[0] != "add"]
    new_idx = [i for i, r in enumerate(raw) if r[0] != "del"]
    tokens: dict[int, list] = {}
    for idx in (old_idx, new_idx):
        for i, runs in zip(idx, _token_lines([raw[i][3] for i in idx], lexer), strict=False):
            tokens.setdefault(i, runs)
    marks: dict[int, list] = {}
    i = 0
    while i < len(raw):
        if raw[i][0] != "del":
            i += 1
            continue
        dels = []
        while i < len(raw) and raw[i][0] == "del":
            dels.append(i)
            i += 1
        adds = []
        while i < len(raw) and raw[i][0] == "add":
            adds.append(i)
            i += 1
        if len(dels) <= 60 and len(adds) <= 60:
            for a, b in zip(dels, adds, strict=False):
                marks[a], marks[b] = _word_marks(raw[a][3], raw[b][3])
    return [
        DiffLine(
            kind,
            old if kind != "add" else None,
            new if kind != "del" else None,
            mark_safe(_render_tokens(tokens.get(n, []), marks.get(n))),  # noqa: S308 - escaped
            text,
        )
        for n, (kind, old, new, text) in enumerate(raw)
    ]


@functools.lru_cache(maxsize=64)
def parse_diff(patch: str) -> Diff:
    """A unified diff as files of highlighted lines, with unified and split layouts.

    Cached per process by content: the task page's panels re-render the same patches after
    every edit and validation.
    """
    if not (patch or "").strip():
        return Diff(files=[])
    try:
        patch_set = PatchSet(patch)
    except (UnidiffParseError, UnicodeError) as exc:
        return Diff(files=[], error=f"not a valid unified diff: {exc}")
    if not patch_set:
        # unidiff skips lines it cannot place; text with no file header at all is no diff.
        return Diff(files=[], error="not a valid unified diff: it names no file")
    files: list[DiffFile] = []
    budget = [MAX_DIFF_LINES]
    for index, pf in enumerate(patch_set):
        status = (
            "added"
            if pf.is_added_file
            else "removed"
            if pf.is_removed_file
            else "renamed"
            if getattr(pf, "is_rename", False)
            else "modified"
        )
        df = DiffFile(pf.path, status, pf.added, pf.removed, index=index)
        lexer = lexer_for(pf.path)
        last_old_end = 1
        for hunk in pf:
            hidden = hunk.source_start - last_old_end
            if hidden > 0 or hunk.section_header:
                label = f"{hidden} unchanged line{'s' if hidden != 1 else ''}" if hidden > 0 else ""
                header = hunk.section_header.strip()
                text = " · ".join(x for x in (label, header) if x) or "…"
                df.lines.append(DiffLine("gap", None, None, mark_safe(""), text))
            last_old_end = hunk.source_start + hunk.source_length
            df.lines.extend(_hunk_lines(hunk, lexer, budget))
        df.rows = _split_rows(df.lines)
        files.append(df)
    return Diff(files=files, error="" if budget[0] > 0 else "long diff: cut at 6,000 lines")


def diff_tables(df: DiffFile, patch: str, comments_by_line: dict | None) -> SafeString:
    """Both layouts of one file's diff as HTML tables (built here: far faster than a template)."""
    out = ['<table class="diff-table unified-view">']
    path = escape(df.path)
    signs = {"add": "+", "del": "\u2212", "ctx": " "}
    for line in df.lines:
        if line.kind == "gap":
            out.append(
                '<tr class="gap"><td class="ln" colspan="2">⋯</td>'
                f'<td class="code">{escape(line.text)}</td></tr>'
            )
            continue
        old = "" if line.old is None else line.old
        new = ""
        if line.new is not None:
            new = (
                f'<button type="button" class="ln-btn" data-line-comment data-file="{path}" '
                f'data-line="{line.new}" title="Comment on line {line.new}">{line.new}</button>'
            )
        out.append(
            f'<tr class="{line.kind}"><td class="ln">{old}</td><td class="ln">{new}</td>'
            f'<td class="code"><span class="sign">{signs[line.kind]}</span>{line.html}</td></tr>'
        )
        comments = (comments_by_line or {}).get((patch, df.path, line.new)) if line.new else None
        if comments:
            body = "".join(
                f'<div class="comment" id="comment-{c.pk}">'
                f"<strong>{escape(c.author.get_username())}</strong> "
                f'<span class="muted small">r{c.task_revision}</span>'
                f'<div class="md">{markdown_html(c.body)}</div></div>'
                for c in comments
            )
            out.append(f'<tr class="line-comments"><td colspan="2"></td><td>{body}</td></tr>')
    out.append('</table><table class="diff-table split-view">')
    for row in df.rows:
        if row.gap:
            out.append(
                '<tr class="gap"><td class="ln">⋯</td>'
                f'<td class="code" colspan="3">{escape(row.gap)}</td></tr>'
            )
            continue
        cells = []
        for side, number in ((row.left, "old"), (row.right, "new")):
            if side is None:
                cells.append('<td class="ln empty"></td><td class="code empty"></td>')
            else:
                n = getattr(side, number)
                cells.append(
                    f'<td class="ln {side.kind}">{"" if n is None else n}</td>'
                    f'<td class="code {side.kind}">{side.html}</td>'
                )
        out.append(f"<tr>{''.join(cells)}</tr>")
    out.append("</table>")
    return mark_safe("".join(out))  # noqa: S308 - every text above is escaped


# --- charts ----------------------------------------------------------------------------------

PALETTE = ["#3b5bdb", "#f08c00", "#2b8a3e", "#c2255c", "#0c8599", "#7048e8", "#868e96"]


def pass_rate_svg(rows: list[dict], *, kinds: list[str]) -> SafeString:
    """Grouped bars: model pass rate (satisfied / total spec results) per spec kind."""
    models = sorted({r["model"] for r in rows})
    # Only kinds some model has results for: an empty column says nothing but looks like 0%.
    kinds = [k for k in kinds if any(r["kind"] == k and r["total"] for r in rows)]
    if not rows or not models or not kinds:
        return mark_safe("")
    rate = {(r["model"], r["kind"]): r for r in rows}
    left, top, bottom, chart_h = 40, 12, 54, 170
    group_w = max(110, 26 * len(models) + 30)
    width = left + group_w * len(kinds) + 12
    height = top + chart_h + bottom
    bar_w = (group_w - 20) / len(models)
    total_h = height + 22 * math.ceil(len(models) / 3)
    out = [
        f'<svg class="chart" viewBox="0 0 {width} {total_h}" width="{width}" height="{total_h}" '
        f'role="img" aria-label="Model pass rates by spec kind">'
    ]
    for pct in (0, 25, 50, 75, 100):
        y = top + chart_h * (1 - pct / 100)
        out.append(
            f'<line class="grid" x1="{left}" x2="{width - 6}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="axis" x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{pct}%</text>'
        )
    for gi, kind in enumerate(kinds):
        gx = left + gi * group_w + 10
        for mi, model in enumerate(models):
            cell = rate.get((model, kind))
            if not cell or not cell["total"]:
                continue
            value = cell["satisfied"] / cell["total"]
            h = chart_h * value
            x = gx + mi * bar_w
            colour = PALETTE[mi % len(PALETTE)]
            out.append(
                f'<rect x="{x:.1f}" y="{top + chart_h - h:.1f}" width="{max(bar_w - 3, 2):.1f}" '
                f'height="{max(h, 1):.1f}" fill="{colour}" rx="2"><title>'
                f"{escape(model)} on {escape(kind)}: {cell['satisfied']}/{cell['total']} "
                f"({value:.0%})</title></rect>"
            )
        label = escape(kind)
        cx = gx + (group_w - 20) / 2
        out.append(
            f'<text class="axis" x="{cx:.1f}" y="{top + chart_h + 16}" text-anchor="middle">'
            f"{label}</text>"
        )
    for mi, model in enumerate(models):
        lx = left + (mi % 3) * 170
        ly = height - 18 + 22 * (mi // 3)
        out.append(
            f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" rx="2" '
            f'fill="{PALETTE[mi % len(PALETTE)]}"/>'
            f'<text class="legend" x="{lx + 15}" y="{ly}">{escape(model[:26])}</text>'
        )
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text above is escaped


def sparkline_svg(values: list[int], *, width: int = 220, height: int = 44) -> SafeString:
    """Daily review counts as small bars."""
    if not values:
        return mark_safe("")
    top = max(values) or 1
    bar = width / len(values)
    bars = "".join(
        f'<rect x="{i * bar:.1f}" y="{height - height * v / top:.1f}" width="{bar - 2:.1f}" '
        f'height="{max(height * v / top, 1):.1f}" rx="1"><title>{v}</title></rect>'
        for i, v in enumerate(values)
    )
    return mark_safe(  # noqa: S308 - numbers only
        f'<svg class="spark" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
        f'role="img" aria-label="Reviews per day">{bars}</svg>'
    )
