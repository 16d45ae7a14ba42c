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


# The input of a JSON body, whose values keep their JSON types. DRF's fields coerce what a
# form would send (a number becomes a string, 0, 1 or "yes" a boolean, "3" an integer); the
# schema says string, boolean, integer, and a client sending 0 for a name has a bug that
# deserves a 400, not a release called "0". (No docstring: the schema would show it on every
# input that has none of its own.)
class JSONInputSerializer(serializers.Serializer):
    def to_internal_value(self, data):
        # A parsed JSON object is a plain dict; a form (a QueryDict) only ever holds text.
        wrong = {}
        if type(data) is dict:
            for field in self._writable_fields:
                value = data.get(field.field_name)
                if value is not None and (kind := _json_kind(field)) is not None:
                    base, has_type = kind
                    if not has_type(value):
                        # DRF's own words for a value of the wrong type ("Not a valid string.").
                        wrong[field.field_name] = [str(base.default_error_messages["invalid"])]
        try:
            validated = super().to_internal_value(data)
        except ValidationError as exc:
            # Every problem at once: a missing field is reported beside a wrongly typed one.
            raise ValidationError({**exc.detail, **wrong}) from None
        if wrong:
            raise ValidationError(wrong)
        return validated


_JSON_KINDS = (
    (serializers.BooleanField, lambda value: isinstance(value, bool)),
    (serializers.CharField, lambda value: isinstance(value, str)),
    (
        serializers.IntegerField,
        lambda value: isinstance(value, int) and not isinstance(value, bool),
    ),
    (
        serializers.FloatField,
        lambda value: isinstance(value, int | float) and not isinstance(value, bool),
    ),
)


def _json_kind(field):
    """(the DRF field class whose messages apply, the check of a JSON value), or None for
    fields that check their own input (lists, objects, choices...)."""
    return next(((base, check) for base, check in _JSON_KINDS if isinstance(field, base)), None)
