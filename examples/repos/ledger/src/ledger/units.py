"""Money amounts and quantities with units.

Amounts and quantities are :class:`decimal.Decimal` values; floats are refused because
their binary rounding errors end up in invoices.
"""
from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Optional, Union

from .errors import UnitError

Number = Union[int, str, Decimal]

CENT = Decimal("0.01")

# unit -> (dimension, how many base units of that dimension it holds)
UNITS: dict[str, tuple[str, Decimal]] = {
    "ea": ("count", Decimal(1)),
    "pair": ("count", Decimal(2)),
    "dozen": ("count", Decimal(12)),
    "g": ("mass", Decimal(1)),
    "kg": ("mass", Decimal(1000)),
    "ml": ("volume", Decimal(1)),
    "l": ("volume", Decimal(1000)),
    "cm": ("length", Decimal(1)),
    "m": ("length", Decimal(100)),
}

_UNIT_ALIASES = {
    "each": "ea",
    "pc": "ea",
    "pcs": "ea",
    "kilo": "kg",
    "litre": "l",
    "liter": "l",
}

_CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}


def to_decimal(value: Number) -> Decimal:
    """Convert an int, a numeric string or a Decimal to a finite Decimal.

    Strings may contain surrounding spaces and ``_`` digit separators.
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not quantities")
    if isinstance(value, float):
        raise TypeError("floats are not accepted; pass a string or a Decimal")
    if isinstance(value, Decimal):
        result = value
    elif isinstance(value, int):
        result = Decimal(value)
    elif isinstance(value, str):
        text = value.strip().replace("_", "")
        if not text:
            raise ValueError("empty number")
        try:
            result = Decimal(text)
        except InvalidOperation:
            raise ValueError(f"not a number: {value!r}") from None
    else:
        raise TypeError(f"unsupported number type: {type(value).__name__}")
    if not result.is_finite():
        raise ValueError(f"number must be finite: {value!r}")
    return result


def round_money(amount: Number) -> Decimal:
    """Round to whole cents, halves away from zero (commercial rounding)."""
    value = to_decimal(amount)
    rounded = value.quantize(CENT, rounding=ROUND_HALF_UP)
    if rounded == 0:
        # Never report "-0.00".
        rounded = abs(rounded)
    return rounded


def _strip_currency(text: str) -> tuple[str, Optional[str]]:
    """Split ``"$1,234.50"`` or ``"1234.50 usd"`` into the bare number and a currency code.

    Accounting negatives written in parentheses, ``"(12.00)"``, become ``"-12.00"``.
    """
    cleaned = text.strip()
    currency = None
    for symbol, code in _CURRENCY_SYMBOLS.items():
        if symbol in cleaned:
            currency = code
            cleaned = cleaned.replace(symbol, "").strip()
    parts = cleaned.split()
    if len(parts) == 2 and parts[1].isalpha() and len(parts[1]) == 3:
        code = parts[1].upper()
        if currency is not None and currency != code:
            raise ValueError(f"conflicting currencies in {text!r}: {currency} and {code}")
        currency = code
        cleaned = parts[0]
    if cleaned.startswith("(") and cleaned.endswith(")"):
        cleaned = "-" + cleaned[1:-1].strip()
    return cleaned.replace(",", ""), currency


def parse_money(text: str, currency: str = "USD") -> Decimal:
    """Parse a money amount written by a human, rounded to cents.

    >>> parse_money("$1,234.5")
    Decimal('1234.50')
    """
    if not isinstance(text, str):
        raise TypeError("money must be given as text")
    number, found = _strip_currency(text)
    if found is not None and found != currency.upper():
        raise ValueError(f"expected a {currency.upper()} amount, got {found}")
    try:
        return round_money(to_decimal(number))
    except ValueError:
        raise ValueError(f"not a money amount: {text!r}") from None


def _group_thousands(digits: str, separator: str = ",") -> str:
    if not digits or not digits.isdigit():
        raise ValueError(f"expected digits, got {digits!r}")
    groups = []
    while len(digits) > 3:
        groups.append(digits[-3:])
        digits = digits[:-3]
    groups.append(digits)
    return separator.join(reversed(groups))


def format_money(amount: Number, currency: str = "USD") -> str:
    """Format an amount as ``"1,234.50 USD"``; negative amounts get a leading minus."""
    if len(currency) != 3 or not currency.isalpha():
        raise ValueError(f"currency must be a three-letter code, got {currency!r}")
    value = round_money(amount)
    sign = "-" if value < 0 else ""
    whole, _, cents = f"{abs(value):.2f}".partition(".")
    return f"{sign}{_group_thousands(whole)}.{cents} {currency.upper()}"


def unit_info(unit: str) -> tuple[str, str, Decimal]:
    """Return ``(canonical name, dimension, factor to the base unit)`` for a unit name.

    Unit names are case-insensitive and a few aliases are accepted (``"pcs"`` -> ``"ea"``).
    """
    if not isinstance(unit, str) or not unit.strip():
        raise UnitError("unit must be a non-empty string")
    key = unit.strip().lower()
    key = _UNIT_ALIASES.get(key, key)
    try:
        dimension, factor = UNITS[key]
    except KeyError:
        raise UnitError(f"unknown unit: {unit!r}") from None
    return key, dimension, factor


def convert(quantity: Number, from_unit: str, to_unit: str) -> Decimal:
    """Convert a quantity between two units of the same dimension.

    Whole results come back without a fractional part (``convert("2.5", "kg", "g") == 2500``).
    """
    qty = to_decimal(quantity)
    source, source_dim, source_factor = unit_info(from_unit)
    target, target_dim, target_factor = unit_info(to_unit)
    if source_dim != target_dim:
        raise UnitError(f"cannot convert {source} ({source_dim}) to {target} ({target_dim})")
    if source == target:
        return qty
    result = qty * source_factor / target_factor
    if result == result.to_integral_value():
        return result.quantize(Decimal(1))
    return result.normalize()
