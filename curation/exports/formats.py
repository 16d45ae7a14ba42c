"""Bytes of the three export formats, from the records of `curation.exports.records`.

- `specloom`: JSONL, one full record per task (specs, dependency graph, tests with roles,
  patches; trajectories with their evaluations when asked for).
- `swebench`: JSONL with the keys of a SWE-bench instance (FAIL_TO_PASS and PASS_TO_PASS are
  JSON-encoded strings, as in the published datasets), plus what swebench 5's harness runs:
  `image`, `eval_script`, `log_parser`, `eval_type` (exports/harness.py).
- `parquet`: the SWE-bench columns plus Specloom's nested specs, dependencies and tests, so the
  file loads with `datasets` and with `swebench`'s loader alike.

Output is deterministic: the same records always give the same bytes.

Every JSONL line is one line for any line splitter: JSON escapes the ASCII control characters,
and the other characters Python's `str.splitlines()` (which `swebench`'s loader uses) takes for
line breaks, U+0085, U+2028 and U+2029, are written as `\\uXXXX` escapes too, never raw.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from curation.exports.harness import HARNESS_KEYS, harness_row
from curation.exports.records import ENVIRONMENT_KEYS

SPECLOOM = "specloom"
SWEBENCH = "swebench"
PARQUET = "parquet"
FORMATS = (SPECLOOM, SWEBENCH, PARQUET)
STREAMABLE = (SPECLOOM, SWEBENCH)

MEDIA_TYPES = {
    SPECLOOM: "application/x-ndjson",
    SWEBENCH: "application/x-ndjson",
    PARQUET: "application/vnd.apache.parquet",
}
SUFFIXES = {SPECLOOM: ".specloom.jsonl", SWEBENCH: ".swebench.jsonl", PARQUET: ".parquet"}

_STREAM_CHUNK = 256 * 1024
_PARQUET_ROW_GROUP = 1000


# The characters `str.splitlines()` breaks lines at that JSON does not already escape (it
# escapes \n, \r, \x0b, \x0c and \x1c-\x1e as control characters), as UTF-8. In valid UTF-8 these
# byte sequences only ever encode these characters, so replacing them in the bytes is exact.
_RAW_LINE_BREAKS = (
    (b"\xc2\x85", b"\\u0085"),
    (b"\xe2\x80\xa8", b"\\u2028"),
    (b"\xe2\x80\xa9", b"\\u2029"),
)


def escape_line_breaks(encoded: bytes) -> bytes:
    """JSON bytes with U+0085, U+2028 and U+2029 written as escapes (the same JSON value)."""
    for raw, escaped in _RAW_LINE_BREAKS:
        if raw in encoded:
            encoded = encoded.replace(raw, escaped)
    return encoded


def swebench_row(record: dict[str, Any]) -> dict[str, str]:
    """A SWE-bench instance. Our tasks have no hints; `repo`, `version` and
    `environment_setup_commit` are the repository's (curation.exports.records)."""
    return {
        "repo": record["upstream"],
        "instance_id": record["instance_id"],
        "base_commit": record["base_commit"],
        "patch": record["reference_patch"],
        "test_patch": record["test_patch"],
        "problem_statement": record["problem_statement"],
        "hints_text": "",
        "created_at": record["created_at"] or "",
        "version": record["version"],
        "FAIL_TO_PASS": orjson.dumps(record["FAIL_TO_PASS"]).decode(),
        "PASS_TO_PASS": orjson.dumps(record["PASS_TO_PASS"]).decode(),
        "environment_setup_commit": record["environment_setup_commit"],
        # image, eval_script, log_parser, eval_type: what swebench 5's harness runs.
        **harness_row(record),
    }


def specloom_line(record: dict[str, Any]) -> bytes:
    content_json = getattr(record, "content_json", None)
    if content_json is None:
        return escape_line_breaks(orjson.dumps(record)) + b"\n"
    # The content is already encoded (for its digest): the line is that object with the digest,
    # the row id and the environment in front and the optional trajectories behind, spliced,
    # not encoded again.
    parts = [
        b'{"content_sha256":',
        orjson.dumps(record["content_sha256"]),
        b',"task_id":',
        orjson.dumps(record["task_id"]),
    ]
    for key in ENVIRONMENT_KEYS:
        if key in record:
            parts += [b',"', key.encode(), b'":', orjson.dumps(record[key])]
    parts += [b",", content_json[1:-1]]
    if "trajectories" in record:
        parts += [b',"trajectories":', orjson.dumps(record["trajectories"])]
    parts.append(b"}\n")
    return escape_line_breaks(b"".join(parts))


def swebench_line(record: dict[str, Any]) -> bytes:
    return escape_line_breaks(orjson.dumps(swebench_row(record))) + b"\n"


LINE_WRITERS = {SPECLOOM: specloom_line, SWEBENCH: swebench_line}


def jsonl_chunks(records: Iterable[dict[str, Any]], fmt: str) -> Iterator[bytes]:
    """Bytes of a JSONL export in chunks of about 256 KiB (fewer, larger writes to the socket)."""
    line = LINE_WRITERS[fmt]
    buffer: list[bytes] = []
    size = 0
    for record in records:
        encoded = line(record)
        buffer.append(encoded)
        size += len(encoded)
        if size >= _STREAM_CHUNK:
            yield b"".join(buffer)
            buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)


_STRING_FIELDS = (
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
    *HARNESS_KEYS,
)
PARQUET_SCHEMA = pa.schema(
    [
        *[(name, pa.string()) for name in _STRING_FIELDS],
        ("title", pa.string()),
        ("revision", pa.int64()),
        ("content_sha256", pa.string()),
        ("origin", pa.string()),
        ("difficulty", pa.string()),
        ("difficulty_score", pa.float64()),
        ("interaction_score", pa.float64()),
        ("trivial", pa.bool_()),
        (
            "specs",
            pa.list_(
                pa.struct(
                    [
                        ("key", pa.string()),
                        ("kind", pa.string()),
                        ("statement", pa.string()),
                        ("rationale", pa.string()),
                        ("verified", pa.bool_()),
                    ]
                )
            ),
        ),
        (
            "dependencies",
            pa.list_(
                pa.struct(
                    [
                        ("from", pa.string()),
                        ("to", pa.string()),
                        ("relation", pa.string()),
                        ("evidence", pa.string()),
                        ("detail", pa.string()),
                    ]
                )
            ),
        ),
        (
            "tests",
            pa.list_(
                pa.struct(
                    [
                        ("nodeid", pa.string()),
                        ("intended_role", pa.string()),
                        ("role", pa.string()),
                        ("specs", pa.list_(pa.string())),
                    ]
                )
            ),
        ),
    ]
)


def parquet_row(record: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = swebench_row(record)
    for name in (
        "title",
        "revision",
        "content_sha256",
        "origin",
        "difficulty",
        "difficulty_score",
        "interaction_score",
        "trivial",
        "specs",
        "dependencies",
        "tests",
    ):
        row[name] = record[name]
    return row


class _HashingFile:
    """A binary file that hashes and counts what is written to it."""

    def __init__(self, path: Path):
        self.path = path
        self.handle = path.open("wb")
        self.sha256 = hashlib.sha256()
        self.bytes = 0

    def write(self, data: bytes) -> None:
        self.handle.write(data)
        self.sha256.update(data)
        self.bytes += len(data)

    def close(self) -> None:
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()


@dataclass(frozen=True)
class WrittenFile:
    format: str
    path: Path
    sha256: str
    bytes: int


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class ExportWriter:
    """Writes every format in one pass over the records (each record is built only once)."""

    def __init__(self, folder: Path, stem: str, formats: Iterable[str] = FORMATS):
        self.folder = folder
        self.stem = stem
        self.formats = tuple(formats)
        self._jsonl = {
            fmt: _HashingFile(folder / f"{stem}{SUFFIXES[fmt]}")
            for fmt in self.formats
            if fmt in STREAMABLE
        }
        self._parquet: pq.ParquetWriter | None = None
        self._rows: list[dict[str, Any]] = []
        self._parquet_groups = 0
        if PARQUET in self.formats:
            self._parquet = pq.ParquetWriter(
                str(folder / f"{stem}{SUFFIXES[PARQUET]}"), PARQUET_SCHEMA, compression="zstd"
            )

    def add(self, record: dict[str, Any]) -> None:
        for fmt, handle in self._jsonl.items():
            handle.write(LINE_WRITERS[fmt](record))
        if self._parquet is not None:
            self._rows.append(parquet_row(record))
            if len(self._rows) >= _PARQUET_ROW_GROUP:
                self._flush_parquet()

    def _flush_parquet(self) -> None:
        if self._rows and self._parquet is not None:
            self._parquet.write_table(pa.Table.from_pylist(self._rows, schema=PARQUET_SCHEMA))
            self._rows = []
            self._parquet_groups += 1

    def close(self) -> list[WrittenFile]:
        written = []
        for fmt, handle in self._jsonl.items():
            handle.close()
            written.append(WrittenFile(fmt, handle.path, handle.sha256.hexdigest(), handle.bytes))
        if self._parquet is not None:
            self._flush_parquet()
            if not self._parquet_groups:
                # An empty export still gets a valid Parquet file with the full schema.
                self._parquet.write_table(PARQUET_SCHEMA.empty_table())
            self._parquet.close()
            path = self.folder / f"{self.stem}{SUFFIXES[PARQUET]}"
            written.append(WrittenFile(PARQUET, path, _file_sha256(path), path.stat().st_size))
            self._parquet = None
        return sorted(written, key=lambda w: FORMATS.index(w.format))

    def abort(self) -> None:
        for handle in self._jsonl.values():
            handle.handle.close()
        if self._parquet is not None:
            self._parquet.close()
