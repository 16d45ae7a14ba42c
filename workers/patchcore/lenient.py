"""Reading diffs that unidiff refuses: the fallback of every patch reader, in one place.

Model- and agent-written diffs often have wrong hunk lengths, CRLF line ends or a cut-off last
line; `git apply --recount` takes many of them, so readers must not refuse them first. These
functions look only at the header lines (`diff --git`, `---`, `+++`, `@@`) and the changed
lines, and never raise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workers.patchcore.parts import PatchParseError, parse_patch

_DIFF_GIT = re.compile(r"^diff --git a/(\S+) b/(\S+)\s*$")
_FILE_HEADER = re.compile(r"^(?:---|\+\+\+) (\S+)")
_HUNK_HEADER = re.compile(r"^@@ -(?P<old_start>\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
_NO_FILE = "/dev/null"


@dataclass(frozen=True)
class Hunk:
    file: str  # the old path, as git names it in its errors (the new one for a new file)
    old_start: int
    header: str


def strip_prefix(path: str) -> str:
    """A header's path without its timestamp and its a/ or b/ prefix."""
    path = path.split("\t", 1)[0].strip()
    if path.startswith(("a/", "b/")):
        return path[2:]
    return path


def lenient_lines(patch: str) -> list[tuple[str, str, str]]:
    """(path, "+" or "-", text) for each changed line of a diff, parsable or not."""
    changed: list[tuple[str, str, str]] = []
    path = ""
    for line in patch.splitlines():
        if line.startswith("+++ "):
            name = strip_prefix(line[4:])
            path = name if name != _NO_FILE else path
        elif line.startswith("--- "):
            name = strip_prefix(line[4:])
            path = name if name != _NO_FILE else ""
        elif line.startswith(("+", "-")) and path:
            changed.append((path, line[0], line[1:].rstrip("\r")))
    return changed


def lenient_files(patch: str) -> list[str]:
    """Every path the diff's headers name, in order, once each."""
    paths: list[str] = []
    for line in patch.splitlines():
        line = line.rstrip("\r")
        names = []
        if match := _DIFF_GIT.match(line):
            names = [match.group(1), match.group(2)]
        elif match := _FILE_HEADER.match(line):
            names = [strip_prefix(match.group(1))]
        for name in names:
            if name and name != _NO_FILE and name not in paths:
                paths.append(name)
    return paths


def lenient_hunks(patch: str) -> list[Hunk]:
    """The hunk headers of a diff with the file each belongs to."""
    hunks: list[Hunk] = []
    old_path = new_path = ""
    for line in patch.splitlines():
        if line.startswith("--- "):
            old_path = strip_prefix(line[4:])
        elif line.startswith("+++ "):
            new_path = strip_prefix(line[4:])
        elif header := _HUNK_HEADER.match(line):
            file = old_path if old_path != _NO_FILE else new_path
            hunks.append(Hunk(file=file, old_start=int(header["old_start"]), header=line))
    return hunks


def patch_paths(patch: str) -> list[str]:
    """Every path the patch names: old and new names of renames, created and deleted files.

    unidiff reads it when it can; otherwise the headers do. Raises PatchParseError only for
    text in which no file can be found at all.
    """
    if not patch.strip():
        return []
    try:
        patched_files = parse_patch(patch)
    except PatchParseError:
        paths = lenient_files(patch)
        if not paths:
            raise
        return paths
    paths: list[str] = []
    for patched in patched_files:
        for name in (patched.source_file, patched.target_file):
            path = strip_prefix(name or "")
            if path and path != _NO_FILE and path not in paths:
                paths.append(path)
    return paths
