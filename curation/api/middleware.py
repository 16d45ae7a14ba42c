"""Checks on every API request before any view reads it, answered in the API's error body:
oversized bodies refused (413) before anything reads them, and `/api/v1/<path>/` read as
`/api/v1/<path>`.

- Oversized bodies get 413 before anything reads them: DRF's JSON parser reads the request
  stream directly, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE (which guards `request.body` and
  form parsing) would never apply to a JSON upload.
- A NUL character in a query parameter gets 400: no parameter of this API can hold one, and
  PostgreSQL refuses it in text (a DataError, that is a 500, wherever a view forgot to check).
"""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse

from curation.api.errors import error_body

API_PREFIX = "/api/"
V1_PREFIX = "/api/v1/"


def _parameters_with_nul(request) -> list[str]:
    names = set()
    for name, values in request.GET.lists():
        if "\x00" in name or any("\x00" in value for value in values):
            names.add(name.replace("\x00", "\\x00"))
    return sorted(names)


class ApiBodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path_info
        if path.startswith(V1_PREFIX) and len(path) > len(V1_PREFIX) and path.endswith("/"):
            # A trailing slash is tolerated: `/api/v1/tasks/` is `/api/v1/tasks` (clients and
            # docs write both; a redirect would lose a POST's body). The routes and the
            # OpenAPI schema keep one spelling, without the slash.
            request.path_info = path.rstrip("/")
            request.path = request.path.rstrip("/")
        if request.path.startswith(API_PREFIX):
            refused = self._refuse(request)
            if refused is not None:
                return refused
        return self.get_response(request)

    def _refuse(self, request) -> JsonResponse | None:
        limit = settings.SPECLOOM_UPLOAD_MAX_BYTES
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse(
                error_body(400, "The Content-Length header is not a number."), status=400
            )
        if length > limit:
            return JsonResponse(
                error_body(
                    413,
                    f"The request body is {length} bytes; the limit is {limit} bytes.",
                    {"limit_bytes": limit, "body_bytes": length},
                ),
                status=413,
            )
        with_nul = _parameters_with_nul(request)
        if with_nul:
            return JsonResponse(
                error_body(
                    400,
                    "A query parameter holds a NUL character.",
                    {name: ["NUL characters are not allowed."] for name in with_nul},
                ),
                status=400,
            )
        return None
