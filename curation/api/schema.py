"""The OpenAPI schema documents the one error body on every operation, for every status the API
can answer with, so clients (and schemathesis) can rely on it."""

from __future__ import annotations

ERROR_COMPONENT = "Error"
ERROR_REF = {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}
ERROR_SCHEMA = {
    "type": "object",
    "description": 'Every 4xx answer: {"error": {"code", "message", "details"}}.',
    "properties": {
        "error": {
            "type": "object",
            "properties": {
                "code": {"type": "string", "example": "not_found"},
                "message": {"type": "string"},
                "details": {
                    "description": "Per-field messages or other specifics; may be empty.",
                    "oneOf": [{"type": "object", "additionalProperties": True}, {"type": "array"}],
                },
            },
            "required": ["code", "message", "details"],
        }
    },
    "required": ["error"],
}
_DESCRIPTIONS = {
    "400": "Bad input: an invalid body, an unknown or invalid query parameter.",
    "401": "No credentials, or an invalid or revoked token.",
    "403": "The role or the token's scope does not allow this.",
    "404": "No such object, or not visible to you.",
    "405": "This method is not allowed here.",
    "406": "The Accept header asks for a representation the API does not offer.",
    "409": "The request conflicts with the resource's state (e.g. a release never changes).",
    "413": "The request body is larger than the upload limit.",
    "415": "The request body's media type is not supported.",
    "414": (
        "The URL is longer than the HTTP server in front of the API accepts (gunicorn: 4 KiB "
        "for the request line); that server answers, in its own format."
    ),
    "429": (
        "Too many requests: failed token authentications from this address or for this token "
        "prefix (only invalid tokens are refused, a valid one always works), or a grading limit "
        "of the token (patches a minute, grades unfinished at once); see Retry-After."
    ),
}
_EVERY_OPERATION = ("400", "401", "403", "404", "405", "406", "429")
# Constraints between the fields of a request body that serializers cannot declare (one field
# only together with another), by component name; API modules add theirs at import.
COMPONENT_CONSTRAINTS: dict[str, dict] = {}
_WRITES = ("409", "413", "415")


# No text the API reads may hold a NUL character: PostgreSQL cannot store one, and the API
# answers 400 (curation.api.middleware for query parameters, DRF's fields for bodies).
NO_NUL = "^[^\\u0000]*$"


def _forbid_nul(schema) -> None:
    """Add NO_NUL to every free-text string of a request schema (in place)."""
    if isinstance(schema, list):
        for item in schema:
            _forbid_nul(item)
        return
    if not isinstance(schema, dict):
        return
    if (
        schema.get("type") == "string"
        and not {"pattern", "enum", "format", "const"} & set(schema)
        and not schema.get("readOnly")
    ):
        schema["pattern"] = NO_NUL
    for key in ("properties", "items", "additionalProperties", "allOf", "anyOf", "oneOf"):
        value = schema.get(key)
        if key == "properties" and isinstance(value, dict):
            for child in value.values():
                _forbid_nul(child)
        elif isinstance(value, dict | list):
            _forbid_nul(value)


def add_error_responses(result, generator, request, public):
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas[ERROR_COMPONENT] = ERROR_SCHEMA
    for name, constraints in COMPONENT_CONSTRAINTS.items():
        if name in schemas:
            schemas[name].update(constraints)
    for name, component in schemas.items():
        if name.endswith("Request"):
            _forbid_nul(component)
    for methods in result.get("paths", {}).values():
        for operation in methods.values():
            for parameter in operation.get("parameters", []) if isinstance(operation, dict) else []:
                _forbid_nul(parameter.get("schema"))
    ref = ERROR_REF
    for methods in result.get("paths", {}).values():
        for method, operation in methods.items():
            if method not in {"get", "post", "put", "patch", "delete", "head", "options"}:
                continue
            responses = operation.setdefault("responses", {})
            statuses = _EVERY_OPERATION + (
                _WRITES if method in {"post", "put", "patch", "delete"} else ()
            )
            for status in statuses:
                responses.setdefault(
                    status,
                    {
                        "description": _DESCRIPTIONS[status],
                        "content": {"application/json": {"schema": ref}},
                    },
                )
            # Not the API's own answer: no body is promised.
            responses.setdefault("414", {"description": _DESCRIPTIONS["414"]})
    return result
