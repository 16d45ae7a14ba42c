"""Split a patch into the parts a solver must get right, for the interaction check.

A part is everything the patch changes inside one function or method (top-level code outside
any function is a part per change). For the leave-one-out runs each part also carries its
*complement*: one patch from the base to "the reference without this part", generated from
the files themselves, so that applying it never depends on how the other parts shifted lines.
"""

from __future__ import annotations

import ast
import difflib
from collections.abc import Callable
from dataclasses import dataclass, field

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from workers import pysource


class PatchParseError(ValueError):
    pass


@dataclass(frozen=True)
class PatchPart:
    name: str
    patch: str
    # Base -> reference without this part; empty when unknown (then parts are applied in turn).
    complement: str = ""


@dataclass
class _Region:
    """One contiguous change: base lines [start, end) become `added`."""

    path: str
    start: int
    end: int
    added: list[str]
    target_line: int
    owner: str = ""
    removed: list[str] = field(default_factory=list)


def part_name(path: str, qualname: str) -> str:
    """The one name of the part that changes function `qualname` of file `path`."""
    return f"{path}::{qualname}"


def parse_patch(patch: str) -> PatchSet:
    try:
        return PatchSet(patch)
    except UnidiffParseError as exc:
        raise PatchParseError(f"the patch is not a valid unified diff: {exc}") from None


def changed_paths(patch: str) -> list[str]:
    return [patched_file.path for patched_file in parse_patch(patch)]


def _line_text(line) -> str:
    value = line.value
    return value if value.endswith("\n") else value + "\n"


def _regions_of(patched_file, base_lines: list[str]) -> list[_Region]:
    regions: list[_Region] = []
    for hunk in patched_file:
        base_index = max(hunk.source_start - 1, 0)
        target_index = max(hunk.target_start - 1, 0)
        current: _Region | None = None
        for line in hunk:
            if line.line_type == "\\":
                continue
            if line.is_context:
                if base_index >= len(base_lines) or base_lines[base_index].rstrip(
                    "\n"
                ) != line.value.rstrip("\n"):
                    raise PatchParseError(
                        f"{patched_file.path}: the patch does not apply to the base at line "
                        f"{base_index + 1}"
                    )
                current = None
                base_index += 1
                target_index += 1
                continue
            if current is None:
                current = _Region(patched_file.path, base_index, base_index, [], target_index)
                regions.append(current)
            if line.is_removed:
                current.removed.append(_line_text(line))
                current.end += 1
                base_index += 1
            else:
                current.added.append(_line_text(line))
                target_index += 1
    return regions


def _apply(base_lines: list[str], regions: list[_Region]) -> list[str]:
    out: list[str] = []
    cursor = 0
    for region in sorted(regions, key=lambda r: (r.start, r.end)):
        out.extend(base_lines[cursor : region.start])
        out.extend(region.added)
        cursor = region.end
    out.extend(base_lines[cursor:])
    return out


def patched_text(patched_file, base_text: str) -> str:
    """One file of a parsed patch applied to its base text (PatchParseError if it does not fit)."""
    base_lines = base_text.splitlines(keepends=True)
    return "".join(_apply(base_lines, _regions_of(patched_file, base_lines)))


def _function_spans(source: str) -> list[tuple[int, int, str]]:
    """(first line, last line, qualified name) of every function, 1-based, innermost last."""
    try:
        tree = pysource.parse(source)
    except SyntaxError:
        return []
    spans: list[tuple[int, int, str]] = []

    def visit(node, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *[d.lineno for d in child.decorator_list]])
                if not isinstance(child, ast.ClassDef):
                    spans.append((first, child.end_lineno or child.lineno, name))
                visit(child, name + ".")

    visit(tree, "")
    return spans


def _owner(spans: list[tuple[int, int, str]], first: int, last: int) -> str:
    """The innermost function whose lines contain [first, last] (1-based)."""
    best = ""
    best_size = None
    for start, end, name in spans:
        if start <= first and last <= end and (best_size is None or end - start < best_size):
            best, best_size = name, end - start
    return best


def _diff(path: str, before: list[str], after: list[str]) -> str:
    if before == after:
        return ""
    body = "".join(
        difflib.unified_diff(before, after, fromfile=f"a/{path}", tofile=f"b/{path}", n=3)
    )
    # difflib leaves a last line without newline unmarked; git apply wants the marker.
    fixed = []
    for line in body.splitlines(keepends=True):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        fixed.append(line)
    return f"diff --git a/{path} b/{path}\n" + "".join(fixed)


def patched_files(patch: str, read_base: Callable[[str], str | None]) -> dict[str, str]:
    """The text of every file the patch touches, after it (a deleted file is left out)."""
    files: dict[str, str] = {}
    for patched_file in parse_patch(patch):
        if patched_file.is_removed_file:
            continue
        base_text = "" if patched_file.is_added_file else read_base(patched_file.path)
        if base_text is None:
            raise PatchParseError(f"{patched_file.path} does not exist at the base commit")
        base_lines = base_text.splitlines(keepends=True)
        files[patched_file.path] = "".join(
            _apply(base_lines, _regions_of(patched_file, base_lines))
        )
    return files


def split_by_function(patch: str, read_base: Callable[[str], str | None]) -> list[PatchPart]:
    """One part per changed function (or per change outside functions), with complements.

    `read_base(path)` returns a file's text at the base commit (None for a file the patch adds).
    Files the patch adds or deletes whole are one part each.
    """
    files = []
    for patched_file in parse_patch(patch):
        path = patched_file.path
        whole = patched_file.is_added_file or patched_file.is_removed_file
        base_text = "" if patched_file.is_added_file else read_base(path)
        if base_text is None:
            raise PatchParseError(f"{path} does not exist at the base commit")
        base_lines = base_text.splitlines(keepends=True)
        regions = _regions_of(patched_file, base_lines)
        target_lines = _apply(base_lines, regions)
        if whole:
            for region in regions:
                region.owner = path
        else:
            base_spans = _function_spans(base_text)
            target_spans = _function_spans("".join(target_lines))
            shift = 0
            for region in sorted(regions, key=lambda r: r.start):
                region.target_line = region.start + shift
                shift += len(region.added) - (region.end - region.start)
                if region.added:
                    first = region.target_line + 1
                    owner = _owner(target_spans, first, first + len(region.added) - 1)
                else:
                    owner = _owner(base_spans, region.start + 1, region.end)
                region.owner = part_name(path, owner) if owner else f"{path}@{region.start + 1}"
        files.append((path, base_lines, target_lines, regions))

    owners = list(dict.fromkeys(r.owner for _, _, _, regions in files for r in regions))
    parts = []
    for owner in owners:
        only = []
        without = []
        for path, base_lines, _target, regions in files:
            mine = [r for r in regions if r.owner == owner]
            others = [r for r in regions if r.owner != owner]
            only.append(_diff(path, base_lines, _apply(base_lines, mine)))
            without.append(_diff(path, base_lines, _apply(base_lines, others)))
        parts.append(PatchPart(name=owner, patch="".join(only), complement="".join(without)))
    return parts
