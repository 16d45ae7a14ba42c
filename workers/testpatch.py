"""One model of a test: its code is what the hidden test patch puts in the repository.

Plain Python (no Django). A reviewer reads a test's source as the test patch leaves its file,
and editing that source rewrites the test patch (the tests that run and ship), so what is shown
and what runs cannot drift apart. Also the save-time check that every Python file a patch
leaves behind compiles.

`read_base(path)` returns a file's text at the task's base commit, or None when the file does
not exist there (or cannot be read).
"""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from workers import pysource
from workers.patchcore.parts import PatchParseError, patched_text

ReadBase = Callable[[str], str | None]

_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)\s*\(")


class PatchEditError(ValueError):
    """The edit cannot be made into the test patch; the message says why and what to do."""


@dataclass(frozen=True)
class Location:
    path: str
    start: int  # first line (1-based), decorators included
    end: int  # last line (1-based, inclusive)
    text: str  # the whole file, as the test patch leaves it


def _parse(patch: str) -> PatchSet:
    try:
        return PatchSet(patch or "")
    except UnidiffParseError as exc:
        raise PatchParseError(f"the patch is not a valid unified diff: {exc}") from None


def _file_path(patched_file) -> str:
    return patched_file.path


def split_nodeid(nodeid: str) -> tuple[str, list[str], str]:
    """`path::Class::test_name[params]` -> (path, ["Class"], "test_name")."""
    path, _, rest = (nodeid or "").partition("::")
    parts = [p for p in rest.split("::") if p]
    if not path or not parts:
        return path, [], ""
    name = parts[-1].split("[", 1)[0]
    return path, parts[:-1], name


def file_after(patch: str, path: str, read_base: ReadBase | None) -> str | None:
    """The text of `path` once the patch is applied to the base, or None if unknown."""
    for patched_file in _parse(patch):
        if _file_path(patched_file) != path:
            continue
        if patched_file.is_removed_file:
            return None
        if patched_file.is_added_file:
            base = ""
        else:
            base = read_base(path) if read_base else None
            if base is None:
                return None
        try:
            return patched_text(patched_file, base)
        except PatchParseError:
            return None
    return read_base(path) if read_base else None


def _locate_ast(text: str, classes: list[str], name: str) -> tuple[int, int] | None:
    try:
        tree = pysource.parse(text)
    except SyntaxError:
        return None
    scope = tree.body
    for cls in classes:
        found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if found is None:
            return None
        scope = found.body
    # The last definition wins, as it does when Python runs the module.
    match = None
    for node in scope:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            match = node
    if match is None:
        return None
    start = min([match.lineno, *[d.lineno for d in match.decorator_list]])
    return start, match.end_lineno or match.lineno


def _locate_text(text: str, name: str) -> tuple[int, int] | None:
    """For a file that does not parse: the def line by pattern, and its indented body."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _DEF.match(line)
        if not match or match.group(2) != name:
            continue
        indent = len(match.group(1))
        start = i
        while start > 0 and lines[start - 1].strip().startswith("@"):
            start -= 1
        end = i + 1
        while end < len(lines):
            text_line = lines[end]
            if text_line.strip() and len(text_line) - len(text_line.lstrip()) <= indent:
                break
            end += 1
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        return start + 1, end
    return None


def locate_test(patch: str, nodeid: str, read_base: ReadBase | None) -> Location | None:
    """Where the test `nodeid` is defined once the test patch is applied, or None."""
    path, classes, name = split_nodeid(nodeid)
    if not name:
        return None
    try:
        text = file_after(patch, path, read_base)
    except PatchParseError:
        return None
    if not text:
        return None
    span = _locate_ast(text, classes, name) or _locate_text(text, name)
    if span is None:
        return None
    return Location(path=path, start=span[0], end=span[1], text=text)


def source_of_test(patch: str, nodeid: str, read_base: ReadBase | None) -> tuple[str, int]:
    """The source of one test as the test patch leaves it, and its first line number."""
    where = locate_test(patch, nodeid, read_base)
    if where is None:
        return "", 0
    lines = where.text.splitlines()
    return "\n".join(lines[where.start - 1 : where.end]), where.start


def _file_diff(path: str, before: str, after: str, *, added: bool, header: str) -> str:
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    body = difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile="/dev/null" if added else f"a/{path}",
        tofile=f"b/{path}",
        n=3,
    )
    out = []
    for line in body:
        if not line.endswith("\n"):
            # git apply wants the marker where difflib leaves a last line without newline.
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return header + "".join(out)


def _header(patched_file, path: str, added: bool) -> str:
    """The `diff --git` line and mode lines of the original section (not its index line: the
    blob ids no longer match once the content changed)."""
    lines = [f"diff --git a/{path} b/{path}\n"]
    info = str(patched_file.patch_info) if patched_file is not None else ""
    for line in info.splitlines(keepends=True):
        if line.startswith(("new file mode", "old mode", "new mode")):
            lines.append(line)
    if added and not any(line.startswith("new file mode") for line in lines):
        lines.append("new file mode 100644\n")
    return "".join(lines)


def replace_test(patch: str, nodeid: str, code: str, read_base: ReadBase | None) -> str:
    """The test patch with the test `nodeid` replaced by `code` (its decorators and def).

    Other files and other tests are kept byte for byte. The new code must still define the
    test under its name, so the stored id runs it, and the file must still compile.
    """
    path, classes, name = split_nodeid(nodeid)
    if not name:
        raise PatchEditError(f"{nodeid!r} is not a pytest node id of a test function")
    where = locate_test(patch, nodeid, read_base)
    if where is None:
        raise PatchEditError(
            f"{name} is not in the test patch or in {path} at the base commit; "
            "edit the test patch itself"
        )
    code = code.replace("\r\n", "\n").rstrip()
    if not code.strip():
        raise PatchEditError(f"the code of {name} is empty")
    lines = where.text.splitlines(keepends=True)
    new_text = "".join([*lines[: where.start - 1], code + "\n", *lines[where.end :]])
    if new_text == where.text:
        return patch  # the same code: the patch stays byte for byte
    problem = syntax_error(path, new_text)
    if problem:
        raise PatchEditError(problem)
    if _locate_ast(new_text, classes, name) is None:
        raise PatchEditError(
            f"the code must still define {name}: the test id {nodeid} runs that function"
        )

    sections = list(_parse(patch))
    target = next((f for f in sections if _file_path(f) == path), None)
    added = target is not None and target.is_added_file
    base = "" if added else (read_base(path) if read_base else None)
    if base is None:
        raise PatchEditError(f"{path} cannot be read at the base commit")
    section = _file_diff(path, base, new_text, added=added, header=_header(target, path, added))
    if target is None:
        pieces = [str(f) for f in sections] + [section]
    else:
        pieces = [section if f is target else str(f) for f in sections]
    return "".join(p if p.endswith("\n") else p + "\n" for p in pieces)


def syntax_error(path: str, text: str) -> str:
    """ "path, line N: message" when the Python source does not compile, else ""."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        line = f", line {exc.lineno}" if exc.lineno else ""
        shown = (exc.text or "").strip()
        return f"{path}{line}: {exc.msg}" + (f" ({shown[:120]})" if shown else "")
    except ValueError as exc:  # a NUL byte in the source
        return f"{path}: {exc}"
    return ""


def patch_syntax_errors(patch: str, read_base: ReadBase | None) -> list[str]:
    """Every changed .py file of the patch, as the patch leaves it, that does not compile.

    A file whose base cannot be read, or whose hunks do not fit it, is left to the sandbox
    (it reports a patch that does not apply); a deleted file has nothing to compile.
    """
    errors = []
    for patched_file in _parse(patch):
        path = _file_path(patched_file)
        if not path.endswith(".py") or patched_file.is_removed_file:
            continue
        if patched_file.is_added_file:
            base = ""
        else:
            base = read_base(path) if read_base else None
            if base is None:
                continue
        try:
            text = patched_text(patched_file, base)
        except PatchParseError:
            continue
        problem = syntax_error(path, text)
        if problem:
            errors.append(problem)
    return errors
