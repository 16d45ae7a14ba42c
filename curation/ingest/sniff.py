"""Recognising a file's format from its first 256 KiB, without parsing the whole file.

The head of the file is scanned for the keys of the first JSON value (the first line of a JSONL
file, or the opening of a document), and those keys are matched against each format's
signature. Keys come before their values in JSON, so even a first record far larger than the
head shows its top-level keys early.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from .jsonio import UTF8_BOM
from .records import UnknownFormatError

# Enough for the opening keys of any of the formats, small enough to cost nothing.
HEAD_BYTES = 256 * 1024
SUPPORTED = (
    "specloom (Specloom's own JSON/JSONL), swe-agent (.traj), openhands (event list JSON), "
    "openhands-eval (evaluation output.jsonl), openhands-resolver (resolver output.jsonl), "
    "predictions (SWE-bench predictions: JSON list, "
    "JSON object keyed by instance id, or JSONL)"
)

_MAGIC = {
    b"\x1f\x8b": "gzip-compressed data (decompress it first)",
    b"PK\x03\x04": "a zip archive (extract it first)",
    b"BZh": "bzip2-compressed data (decompress it first)",
    b"\xfd7zXZ\x00": "xz-compressed data (decompress it first)",
    b"\x28\xb5\x2f\xfd": "zstd-compressed data (decompress it first)",
}
# The scanner jumps from one structural character to the next; everything else (numbers,
# literals, commas) says nothing about the structure. String bodies are matched with possessive
# quantifiers so that a string cut off by the end of the head fails in linear time.
_STRUCTURE = re.compile(r'["\[\]{}]')
_STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+"')
_COLON = re.compile(r"\s*:")
_STRING_VALUE = re.compile(r'\s*"([^"\\]*+(?:\\.[^"\\]*+)*+)"')
_DEEPEST_KEYS = 3
_NON_SPACE = re.compile(r"\S")


@dataclass
class Sniffed:
    """What the head of a file shows: the container and the keys seen at each depth.

    Depth 1 holds the keys of a top-level object, depth 2 those of objects inside it or inside
    a top-level list, depth 3 those one level further (OpenHands' [action, observation] pairs).
    """

    container: str  # "object" or "list"
    keys: dict[int, list[str]] = field(default_factory=dict)
    format_marker: str | None = None

    def keys_at(self, depth: int) -> set[str]:
        return set(self.keys.get(depth, ()))

    def describe(self) -> str:
        parts = [f"a JSON {self.container}"]
        for depth in sorted(self.keys):
            shown = ", ".join(repr(key) for key in self.keys[depth][:15])
            more = ", ..." if len(self.keys[depth]) > 15 else ""
            parts.append(f"keys at depth {depth}: {shown}{more}")
        if len(parts) == 1:
            parts.append("with no object keys in its opening")
        return "; ".join(parts)


def _decode_head(head: memoryview, *, whole_file: bool) -> str:
    try:
        return str(head, "utf-8")
    except UnicodeDecodeError as exc:
        # A head cut from a longer file may end inside a multi-byte character; that is not
        # an error, the character is simply dropped.
        if not whole_file and exc.reason == "unexpected end of data":
            return str(head[: exc.start], "utf-8")
        raise


def _scan_keys(text: str, start: int) -> Sniffed:
    """Collect the object keys of the first JSON value in ``text[start:]`` by depth."""
    sniffed = Sniffed(container="object" if text[start] == "{" else "list")
    seen: dict[int, set[str]] = {}
    stack: list[str] = []
    position = start
    while structural := _STRUCTURE.search(text, position):
        char = structural.group()
        position = structural.end()
        if char == '"':
            rest = _STRING_REST.match(text, position)
            if rest is None:
                break  # the head ends inside this string
            string_start, position = position, rest.end()
            colon = _COLON.match(text, position)
            if colon is None:
                continue  # a value, not a key
            position = colon.end()
            depth = len(stack)
            if not stack or stack[-1] != "{" or depth > _DEEPEST_KEYS:
                continue
            key = text[string_start : rest.end() - 1]
            if key not in seen.setdefault(depth, set()):
                seen[depth].add(key)
                sniffed.keys.setdefault(depth, []).append(key)
            if key == "format" and depth <= 2 and sniffed.format_marker is None:
                value = _STRING_VALUE.match(text, position)
                if value:
                    sniffed.format_marker = value.group(1)
        elif char in "[{":
            stack.append(char)
        else:
            if stack:
                stack.pop()
            if not stack:
                break  # the first value is complete; what follows are other records
    return sniffed


def sniff(path: str | os.PathLike[str], *, name: str | None = None) -> Sniffed:
    """Read the head of ``path`` and describe its first JSON value; UnknownFormatError if the
    file is empty, binary or not JSON at all. Messages call the file ``name`` (by default its
    file name)."""
    name = name or Path(path).name
    with open(path, "rb") as handle:
        head = handle.read(HEAD_BYTES)
        whole_file = not handle.read(1)
    if not head or (whole_file and head.isspace()):
        raise UnknownFormatError(f"{name} is empty. Supported formats: {SUPPORTED}.")
    for magic, what in _MAGIC.items():
        if head.startswith(magic):
            raise UnknownFormatError(f"{name} is {what}. Supported formats: {SUPPORTED}.")
    if b"\x00" in head:
        raise UnknownFormatError(
            f"{name} is binary data, not JSON text. Supported formats: {SUPPORTED}."
        )
    begin = len(UTF8_BOM) if head.startswith(UTF8_BOM) else 0
    end = len(head)
    if not whole_file and (last_newline := head.rfind(b"\n")) > begin:
        # JSON strings cannot hold a raw newline, so cutting at the last one never leaves
        # half a string (or half a character) for the scanner to misread.
        end = last_newline
    try:
        text = _decode_head(memoryview(head)[begin:end], whole_file=whole_file)
    except UnicodeDecodeError as exc:
        raise UnknownFormatError(
            f"{name} is not UTF-8 text (invalid byte at offset {begin + exc.start}). "
            f"Supported formats: {SUPPORTED}."
        ) from None
    del head
    first = _NON_SPACE.search(text)
    if first is None or first.group() not in "{[":
        seen = text[first.start() : first.start() + 60] if first else text[:60]
        raise UnknownFormatError(
            f"{name} is not JSON or JSONL: it starts with {seen!r}. Supported formats: {SUPPORTED}."
        )
    return _scan_keys(text, first.start())


_EVAL_KEYS = {"history", "test_result", "instruction", "metrics", "git_patch"}
# openhands.resolver's output: an `issue` object and keys no other format has.
_RESOLVER_KEYS = {"issue_type", "result_explanation", "success_explanation", "comment_success"}


def _is_resolver_output(keys: set[str]) -> bool:
    return "issue" in keys and bool(keys & _RESOLVER_KEYS)


_EVENT_KEYS = {"action", "observation"}


def classify(sniffed: Sniffed) -> str | None:
    """The format whose signature the sniffed keys match, or None."""
    if sniffed.format_marker == "specloom":
        return "specloom"
    if sniffed.container == "object":
        top, inner = sniffed.keys_at(1), sniffed.keys_at(2)
        if "model_patch" in top:
            return "predictions"
        if _is_resolver_output(top):
            return "openhands-resolver"
        if "instance_id" in top and top & _EVAL_KEYS:
            return "openhands-eval"
        if "steps" in top:
            return "specloom"
        if top & {"trajectory", "history"}:
            return "swe-agent"
        if "model_patch" in inner:
            return "predictions"  # an object keyed by instance id
        return None
    items, nested = sniffed.keys_at(2), sniffed.keys_at(3)
    if "model_patch" in items:
        return "predictions"
    if _is_resolver_output(items):
        return "openhands-resolver"
    if "instance_id" in items and items & _EVAL_KEYS:
        return "openhands-eval"
    if "steps" in items:
        return "specloom"
    if items & _EVENT_KEYS or (not items and nested & _EVENT_KEYS):
        return "openhands"
    return None


def detect_format(path: str | os.PathLike[str], *, name: str | None = None) -> str:
    """Name the format of ``path`` from its head; raise UnknownFormatError if none matches.
    Messages call the file ``name`` (by default its file name)."""
    name = name or Path(path).name
    sniffed = sniff(path, name=name)
    detected = classify(sniffed)
    if detected is None:
        raise UnknownFormatError(
            f"cannot tell the format of {name}: it holds {sniffed.describe()}. "
            f"Supported formats: {SUPPORTED}. "
            "If the file is one of these, name its format explicitly."
        )
    return detected
