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
    "429": "Too many requests: failed token authentications from this address, or a grading "
    "limit of the token (patches a minute, grades unfinished at once); see Retry-After.",
}
_EVERY_OPERATION = ("400", "401", "403", "404", "405", "406", "429")
_WRITES = ("409", "413", "415")


def add_error_responses(result, generator, request, public):
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas[ERROR_COMPONENT] = ERROR_SCHEMA
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
    return result
