"""One error body for every API failure: {"error": {"code", "message", "details"}}."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler

from curation.models import ReleaseImmutable

_CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "throttled",
}


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The resource changed since you read it."
    default_code = "conflict"


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "payload_too_large"


def error_body(status_code: int, message: str, details=None, code: str | None = None) -> dict:
    return {
        "error": {
            "code": code or _CODES.get(status_code, "error"),
            "message": message,
            "details": details if details is not None else {},
        }
    }


def error_handler(exc, context):
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or "Permission denied.")
    elif isinstance(exc, ReleaseImmutable):
        exc = Conflict(str(exc).removeprefix("release_immutable: "))
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    response = exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(exc, exceptions.ValidationError):
        message = "The request is not valid."
        details = data if isinstance(data, dict) else {"non_field_errors": data}
    else:
        detail = data.get("detail") if isinstance(data, dict) else data
        message = str(detail) if detail is not None else response.status_text
        details = {k: v for k, v in data.items() if k != "detail"} if isinstance(data, dict) else {}
    code = getattr(getattr(exc, "detail", None), "code", None)
    body = error_body(
        response.status_code, message, details, code=_CODES.get(response.status_code, code)
    )
    return Response(body, status=response.status_code, headers=dict(response.items()))


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def page_not_found(request, exception):
    """Django's 404 (no route matched), in the API's error body under /api/."""
    if _is_api(request):
        return JsonResponse(error_body(404, "No such endpoint or object."), status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request, exception):
    """Django's 400 (a disallowed Host header, a malformed request), in the API's error body
    under /api/."""
    if _is_api(request):
        return JsonResponse(error_body(400, "The request is malformed."), status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if _is_api(request):
        return JsonResponse(error_body(403, "Permission denied."), status=403)
    return defaults.permission_denied(request, exception)


def server_error(request):
    if _is_api(request):
        return JsonResponse(
            error_body(500, "Something went wrong on our side.", code="server_error"), status=500
        )
    return defaults.server_error(request)
