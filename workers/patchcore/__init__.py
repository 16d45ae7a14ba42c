"""One patch core for synthesis, validation, evaluation and audit (plain Python, no Django).

Patches are parsed with unidiff and split into parts by the function or method they change,
under one naming scheme: `path::Qualified.name` (a change outside any function is
`path@line`, a file added or deleted whole is its path). Synthesis ties specs to these names
and validation's leave-one-out runs report them, so both sides speak of the same parts.
Diffs unidiff refuses (models' and agents' often are) are read by `lenient`'s header scan.
"""

from workers.patchcore.lenient import (
    Hunk,
    lenient_files,
    lenient_hunks,
    lenient_lines,
    patch_paths,
    strip_prefix,
)
from workers.patchcore.parts import (
    PatchParseError,
    PatchPart,
    changed_paths,
    parse_patch,
    part_name,
    patched_files,
    split_by_function,
)

__all__ = [
    "Hunk",
    "PatchParseError",
    "PatchPart",
    "changed_paths",
    "lenient_files",
    "lenient_hunks",
    "lenient_lines",
    "parse_patch",
    "part_name",
    "patch_paths",
    "patched_files",
    "split_by_function",
    "strip_prefix",
]
