"""Refuse oversized API bodies before anything reads them: 413 with the API's error body;
and read `/api/v1/<path>/` as `/api/v1/<path>`.

DRF's JSON parser reads the request stream directly, so Django's DATA_UPLOAD_MAX_MEMORY_SIZE
(which guards `request.body` and form parsing) would never apply to a JSON upload.
"""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse

from curation.api.errors import error_body

API_PREFIX = "/api/"
V1_PREFIX = "/api/v1/"


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
        return self.get_response(request)
