"""Query parameters that views read by hand, read strictly: one value each, of the right type.

A parameter given twice (`?task=1&task=2`) is bad input, never "the last one wins"; a number
is a whole number within its range; a flag is true or false. The OpenAPI side of the same rules
is `int_schema` (a raw schema for `OpenApiParameter`).
"""

from __future__ import annotations

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}
# PostgreSQL's bigint: ids beyond it cannot exist, and would overflow the query.
MAX_ID = 2**63 - 1


def int_schema(*, minimum: int = 0, maximum: int = MAX_ID) -> dict:
    return {"type": "integer", "minimum": minimum, "maximum": maximum}


def query_param(request, name: str, default: str | None = None) -> str | None:
    values = request.query_params.getlist(name)
    if not values:
        return default
    if len(values) > 1:
        raise ValidationError({name: [f"Give '{name}' once, not {len(values)} times."]})
    return values[0]


def int_param(
    request, name: str, *, required: bool = False, minimum: int = 0, maximum: int = MAX_ID
) -> int | None:
    value = query_param(request, name)
    if value is None:
        if required:
            raise ValidationError({name: [f"'{name}' is required."]})
        return None
    if value == "":
        raise ValidationError({name: ["Give a value, or leave the parameter out."]})
    try:
        number = int(value)
    except ValueError:
        raise ValidationError({name: [f"'{name}' must be an integer, not {value!r}."]}) from None
    if not minimum <= number <= maximum:
        raise ValidationError({name: [f"'{name}' must be from {minimum} to {maximum}."]})
    return number


def bool_param(request, name: str, default: bool) -> bool:
    value = query_param(request, name)
    if value is None:
        return default
    if value == "":
        raise ValidationError({name: ["Give a value, or leave the parameter out."]})
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValidationError({name: [f"'{name}' must be true or false, not {value!r}."]})


def only_params(request, allowed: tuple[str, ...]) -> None:
    """400 naming any query parameter the view does not know (a typo would otherwise be
    silently ignored), or any it knows given twice."""
    unknown = sorted(set(request.query_params) - set(allowed))
    if unknown:
        raise ValidationError(
            {"unknown_parameters": unknown, "allowed_parameters": sorted(allowed)}
        )
    for name in allowed:
        query_param(request, name)


def exploded_object(properties: dict, **constraints) -> dict:
    """The schema of query parameters that constrain one another (exactly one of two, one only
    with another), described as one object parameter serialised the default way, `form` and
    exploded: each property is a parameter of its own in the URL, and the object's schema says
    what OpenAPI cannot say of separate parameters."""
    return {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
        **constraints,
    }


class JSONBooleanField(serializers.BooleanField):
    """A boolean of a JSON body: `true` or `false` only. DRF's field also takes 0, 1, "yes",
    "off" and the like (meant for forms), which the schema's `type: boolean` does not allow."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data
