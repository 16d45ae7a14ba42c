"""Reading JSON and JSONL files for the importers, with errors worded for people.

Single documents are read whole (they are one record, or a list of records, by nature); JSONL
is streamed one line at a time so a file of any size is imported in the memory of one record.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

import orjson

from .records import InvalidRecord, RecordError

UTF8_BOM = b"\xef\xbb\xbf"
# Python's json module writes these non-standard constants by default and orjson rejects them,
# so a file produced by a Python tool may need the standard library to be read at all.
_NON_STANDARD_CONSTANTS = re.compile(rb"\bNaN\b|-?\bInfinity\b")

# The whitespace JSON allows between values.
_WHITESPACE = b" \t\r\n"


def describe_decode_error(exc: orjson.JSONDecodeError, data: bytes, *, where: str) -> str:
    """Turn a decoder error into a sentence, saying so when the data simply stops early."""
    reason = exc.msg
    if where == "line":
        position = f"column {exc.pos + 1}"
    else:
        position = f"line {exc.lineno} column {exc.colno}"
    message = f"invalid JSON at {position}: {reason}"
    if exc.pos >= len(data.rstrip(_WHITESPACE)) - 1 and "end of data" in reason:
        if where == "line":
            message += " (the line ends before its JSON value does)"
        else:
            message += " (the document ends before its JSON value does; was the file truncated?)"
    return message


def loads(data: bytes, *, where: str) -> Any:
    """Parse JSON bytes or raise InvalidRecord with a readable reason."""
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if _NON_STANDARD_CONSTANTS.search(data):
            try:
                return json.loads(data)
            except (ValueError, RecursionError):
                pass
        raise InvalidRecord(describe_decode_error(exc, data, where=where)) from None


def read_document(path: str | os.PathLike[str]) -> Any:
    """Read and parse a whole file; raise InvalidRecord when it is empty or not JSON."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data or data.isspace():
        raise InvalidRecord("the file is empty")
    return loads(data, where="document")


def iter_json_lines(
    path: str | os.PathLike[str], *, skip_lines: int = 0
) -> Iterator[tuple[int, Any] | RecordError]:
    """Yield ``(line_number, value)`` for each non-blank line, or a RecordError for a bad one."""
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            if line_number <= skip_lines or raw.isspace():
                continue
            try:
                value = loads(raw, where="line")
            except InvalidRecord as exc:
                message = str(exc)
                if not raw.endswith(b"\n"):
                    message += "; it is the last line and has no newline: was the file truncated?"
                yield RecordError(line_number, message)
                continue
            yield line_number, value


def first_significant_byte(path: str | os.PathLike[str]) -> bytes:
    """The first byte that is not whitespace (after a BOM), or b"" for an empty file."""
    with open(path, "rb") as handle:
        chunk = handle.read(4096)
        if chunk.startswith(UTF8_BOM):
            chunk = chunk[len(UTF8_BOM) :]
        while chunk:
            stripped = chunk.lstrip(_WHITESPACE)
            if stripped:
                return stripped[:1]
            chunk = handle.read(65536)
    return b""


def _first_lines(path: str | os.PathLike[str], count: int) -> list[tuple[int, bytes]]:
    """The first ``count`` non-blank lines with their 1-based line numbers."""
    lines: list[tuple[int, bytes]] = []
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, start=1):
            if not raw.isspace():
                lines.append((line_number, raw))
                if len(lines) == count:
                    break
    return lines


def _try_loads(raw: bytes) -> tuple[bool, Any]:
    try:
        return True, loads(raw, where="line")
    except InvalidRecord:
        return False, None


def iter_json_values(
    path: str | os.PathLike[str],
) -> Iterator[tuple[int | None, Any] | RecordError]:
    """Values of a file holding records as a JSON list, a single JSON value, or JSONL.

    Yields ``(line, value)``: for JSONL the 1-based line number, for a JSON list the item's
    0-based index, for a single document None. Problems come out as RecordError.
    """
    first = first_significant_byte(path)
    if not first:
        yield RecordError(None, "the file is empty")
        return
    if first == b"[":
        try:
            document = read_document(path)
        except InvalidRecord as exc:
            yield RecordError(None, str(exc))
            return
        yield from enumerate(document)
        return
    if first != b"{":
        yield RecordError(None, f"not JSON or JSONL: the content starts with {first!r}")
        return
    # An object: JSONL when its first line is a complete JSON value on its own, otherwise a
    # pretty-printed single document. A damaged JSONL line still ends with "}" (or is followed
    # by a line that parses alone), while a document's first line ends inside the object.
    # Deciding from the first two lines keeps a large JSONL file from ever being read whole.
    opening = _first_lines(path, 2)
    first_line_number, first_line = opening[0]
    parsed, value = _try_loads(first_line)
    if parsed:
        del opening, first_line  # may be one huge record; it is parsed now
        yield first_line_number, value
        del value
        yield from iter_json_lines(path, skip_lines=first_line_number)
        return
    # A file of a single line is one record either way; calling it line 1 is more precise.
    looks_like_jsonl = (
        len(opening) == 1
        or first_line.rstrip(_WHITESPACE).endswith(b"}")
        or _try_loads(opening[1][1])[0]
    )
    del opening, first_line
    if looks_like_jsonl:
        yield from iter_json_lines(path)
        return
    try:
        document = read_document(path)
    except InvalidRecord as exc:
        yield RecordError(None, str(exc))
        return
    yield None, document
