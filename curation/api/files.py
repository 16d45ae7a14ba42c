"""Serve a stored, checksummed file: single byte ranges, conditional requests, digest headers.

Release files never change, so the checksum is a perfect validator: it is the ETag, it is sent
as `X-Checksum-Sha256` (hex) and `Repr-Digest` (RFC 9530), and a client that resumes a download
with `Range` + `If-Range` gets the rest of the very same bytes or, if anything differed, the
whole file again.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

from django.http import FileResponse, HttpResponse, JsonResponse, StreamingHttpResponse
from django.utils.http import content_disposition_header

from curation.api.errors import error_body

_CHUNK = 256 * 1024
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def _read_slice(path: Path, start: int, length: int) -> Iterator[bytes]:
    with path.open("rb") as handle:
        handle.seek(start)
        remaining = length
        while remaining > 0:
            block = handle.read(min(_CHUNK, remaining))
            if not block:
                return
            remaining -= len(block)
            yield block


def parse_range(header: str, size: int) -> tuple[int, int] | bool | None:
    """(first, last) byte of a single satisfiable range; None to ignore the header (malformed
    or several ranges: the whole file is then a valid answer); False when unsatisfiable."""
    match = _RANGE.match(header.strip().replace(" ", ""))
    if not match:
        return None
    first, last = match.groups()
    if not first and not last:
        return None
    if not first:  # the last N bytes
        suffix = int(last)
        if suffix == 0 or size == 0:
            return False
        return max(0, size - suffix), size - 1
    start = int(first)
    end = int(last) if last else size - 1
    if last and end < start:
        return None
    if start >= size:
        return False
    return start, min(end, size - 1)


def _etag_matches(header: str, etag: str) -> bool:
    candidates = [c.strip() for c in header.split(",")]
    return "*" in candidates or etag in candidates or f"W/{etag}" in candidates


def stored_file_response(
    request, path: Path, *, sha256: str, media_type: str, filename: str
) -> HttpResponse:
    size = path.stat().st_size
    etag = f'"{sha256}"'
    headers = {
        "ETag": etag,
        "Accept-Ranges": "bytes",
        "X-Checksum-Sha256": sha256,
        "Repr-Digest": f"sha-256=:{base64.b64encode(bytes.fromhex(sha256)).decode()}:",
        "Content-Disposition": content_disposition_header(True, filename),
        # Never changes, but needs credentials: browsers may keep it, shared caches may not.
        "Cache-Control": "private, max-age=31536000, immutable",
    }
    if_none_match = request.headers.get("If-None-Match")
    if if_none_match and _etag_matches(if_none_match, etag):
        response = HttpResponse(status=304)
        for name, value in headers.items():
            response[name] = value
        return response

    wanted = None
    range_header = request.headers.get("Range")
    if_range = request.headers.get("If-Range")
    if range_header and (if_range is None or if_range.strip() == etag):
        wanted = parse_range(range_header, size)
        if wanted is False:
            response = JsonResponse(
                error_body(
                    416,
                    f"The range {range_header!r} is outside the file ({size} bytes).",
                    code="range_not_satisfiable",
                ),
                status=416,
            )
            response["Content-Range"] = f"bytes */{size}"
            for name in ("ETag", "Accept-Ranges", "X-Checksum-Sha256"):
                response[name] = headers[name]
            return response

    head = request.method == "HEAD"
    if wanted:
        start, end = wanted
        length = end - start + 1
        response = StreamingHttpResponse(
            iter(()) if head else _read_slice(path, start, length),
            status=206,
            content_type=media_type,
        )
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
        response["Content-Length"] = str(length)
    elif head:
        response = HttpResponse(status=200, content_type=media_type)
        response["Content-Length"] = str(size)
    else:
        response = FileResponse(path.open("rb"), content_type=media_type)
        response["Content-Length"] = str(size)
    for name, value in headers.items():
        response[name] = value
    return response
