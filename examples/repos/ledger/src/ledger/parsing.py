"""Text movement records, one per line::

    ; comments start with a semicolon
    RECV  BLT-100 50 @MAIN ref=PO-7
    ISSUE BLT-100 8 ea @MAIN ref="SO 12"
    MOVE  BLT-100 10 @MAIN>SHOP
    ADJ   BLT-100 -2 @SHOP ref=count

Fields: record type, SKU, quantity, optional unit, ``@LOCATION`` (``@FROM>TO`` for a
move) and an optional ``ref=``. Adjustments carry an explicit sign.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Optional

from .errors import ParseError
from .stock import Movement
from .units import to_decimal

RECORD_TYPES = {
    "RECV": "receive",
    "IN": "receive",
    "ISSUE": "issue",
    "OUT": "issue",
    "ADJ": "adjust",
    "MOVE": "transfer",
}


def _split_fields(line: str) -> list[str]:
    """Split on whitespace, honouring double or single quotes; ``;`` starts a comment."""
    fields: list[str] = []
    current: list[str] = []
    quote: Optional[str] = None
    pending = False
    for char in line:
        if quote is not None:
            if char == quote:
                quote = None
            else:
                current.append(char)
        elif char in "\"'":
            quote = char
            pending = True
        elif char == ";":
            break
        elif char.isspace():
            if pending:
                fields.append("".join(current))
                current = []
                pending = False
        else:
            current.append(char)
            pending = True
    if quote is not None:
        raise ParseError("unterminated quote")
    if pending:
        fields.append("".join(current))
    return fields


def _parse_quantity(token: str, kind: str) -> Decimal:
    """Quantities are plain positive numbers, except adjustments which need a sign."""
    try:
        qty = to_decimal(token)
    except (ValueError, TypeError):
        raise ParseError(f"bad quantity {token!r}") from None
    signed = token.startswith(("+", "-"))
    if kind == "adjust":
        if not signed:
            raise ParseError("an adjustment needs an explicit sign, e.g. +3 or -2")
        if qty == 0:
            raise ParseError("an adjustment must not be zero")
    elif signed or qty <= 0:
        raise ParseError(f"{kind} quantity must be a plain positive number, got {token!r}")
    return qty


def _parse_location(token: str) -> tuple[str, Optional[str]]:
    """``@MAIN`` -> ``("MAIN", None)``; ``@main>shop`` -> ``("MAIN", "SHOP")``."""
    if not token.startswith("@"):
        raise ParseError(f"expected @LOCATION, got {token!r}")
    source, arrow, destination = token[1:].partition(">")
    source = source.strip().upper()
    destination = destination.strip().upper()
    if not source or (arrow and not destination):
        raise ParseError(f"incomplete location {token!r}")
    for name in (source, destination):
        if name and not name.replace("-", "").isalnum():
            raise ParseError(f"bad location name {name!r}")
    return source, destination or None


def parse_line(line: str, lineno: int = 1) -> Optional[Movement]:
    """Parse one record; returns None for blank and comment-only lines.

    Every ParseError raised carries ``lineno``.
    """
    try:
        fields = _split_fields(line)
        if not fields:
            return None
        if len(fields) < 4:
            raise ParseError(f"expected at least 4 fields, got {len(fields)}")
        kind = RECORD_TYPES.get(fields[0].upper())
        if kind is None:
            raise ParseError(f"unknown record type {fields[0]!r} (expected one of {', '.join(sorted(RECORD_TYPES))})")
        quantity = _parse_quantity(fields[2], kind)
        rest = fields[3:]
        unit = None if rest[0].startswith("@") else rest.pop(0)
        if not rest:
            raise ParseError("missing @LOCATION")
        location, destination = _parse_location(rest.pop(0))
        reference = ""
        for extra in rest:
            key, equals, value = extra.partition("=")
            if key.lower() != "ref" or not equals:
                raise ParseError(f"unexpected field {extra!r}")
            reference = value
        if (kind == "transfer") != (destination is not None):
            raise ParseError("MOVE records, and only they, use @FROM>TO")
    except ParseError as exc:
        raise ParseError(exc.message, lineno) from None
    return Movement(kind, fields[1], quantity, location, destination, unit, reference)


def parse_records(text: str) -> list[Movement]:
    """Parse a whole file of records.

    All lines are checked before failing, so the error reports how many lines are bad;
    its ``lineno`` is the first bad line.
    """
    movements = []
    errors = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        try:
            movement = parse_line(line, lineno)
        except ParseError as exc:
            errors.append(exc)
            continue
        if movement is not None:
            movements.append(movement)
    if len(errors) == 1:
        raise errors[0]
    if errors:
        lines = ", ".join(str(error.lineno) for error in errors)
        raise ParseError(f"{len(errors)} bad records (lines {lines}); first: {errors[0].message}", errors[0].lineno)
    return movements
