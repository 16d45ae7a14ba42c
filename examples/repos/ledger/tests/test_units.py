from decimal import Decimal

import pytest

from ledger.errors import UnitError
from ledger.units import (
    _group_thousands,
    _strip_currency,
    convert,
    format_money,
    parse_money,
    round_money,
    to_decimal,
    unit_info,
)


@pytest.mark.parametrize(
    "value, expected",
    [("12", Decimal(12)), ("  1_000 ", Decimal(1000)), (Decimal("0.5"), Decimal("0.5")), (7, Decimal(7))],
)
def test_to_decimal_accepts_ints_strings_and_decimals(value, expected):
    assert to_decimal(value) == expected


@pytest.mark.parametrize(
    "value, error, message",
    [
        (1.5, TypeError, "floats are not accepted"),
        (True, TypeError, "booleans"),
        ("abc", ValueError, "not a number: 'abc'"),
        ("   ", ValueError, "empty number"),
        ("NaN", ValueError, "must be finite"),
        ([1], TypeError, "unsupported number type: list"),
    ],
)
def test_to_decimal_rejects_bad_input(value, error, message):
    with pytest.raises(error, match=message):
        to_decimal(value)


def test_round_money_rounds_halves_away_from_zero():
    assert round_money("2.345") == Decimal("2.35")
    assert round_money("-2.345") == Decimal("-2.35")
    assert round_money("2.344") == Decimal("2.34")


def test_round_money_never_returns_negative_zero():
    assert str(round_money("-0.001")) == "0.00"


def test_strip_currency_splits_symbol_and_code():
    assert _strip_currency("$1,234.50") == ("1234.50", "USD")
    assert _strip_currency(" 99 gbp ") == ("99", "GBP")
    assert _strip_currency("(12.00)") == ("-12.00", None)


@pytest.mark.parametrize(
    "text, currency, expected",
    [
        ("$1,234.5", "USD", "1234.50"),
        ("12 usd", "USD", "12.00"),
        ("(3.10)", "USD", "-3.10"),
        ("€7", "EUR", "7.00"),
        ("£ 0.125", "gbp", "0.13"),
    ],
    ids=["dollar sign", "code suffix", "accounting (negative)", "euro € sign", "pound [lower-case code]"],
)
def test_parse_money(text, currency, expected):
    assert parse_money(text, currency) == Decimal(expected)


@pytest.mark.parametrize(
    "text, message",
    [
        ("€5", "expected a USD amount, got EUR"),
        ("$5 EUR", "conflicting currencies"),
        ("twelve", "not a money amount: 'twelve'"),
    ],
)
def test_parse_money_rejects_bad_amounts(text, message):
    with pytest.raises(ValueError, match=message):
        parse_money(text)


def test_group_thousands():
    assert _group_thousands("1234567") == "1,234,567"
    assert _group_thousands("123") == "123"
    assert _group_thousands("1000", separator=" ") == "1 000"
    with pytest.raises(ValueError, match="expected digits"):
        _group_thousands("12a")


@pytest.mark.parametrize(
    "amount, expected",
    [
        (Decimal("1234.5"), "1,234.50 USD"),
        ("-0.004", "0.00 USD"),
        (-1000000, "-1,000,000.00 USD"),
        ("999.999", "1,000.00 USD"),
    ],
)
def test_format_money(amount, expected):
    assert format_money(amount) == expected


def test_format_money_rejects_bad_currency_codes():
    assert format_money(5, "eur") == "5.00 EUR"
    with pytest.raises(ValueError, match="three-letter code"):
        format_money(5, "euro")


def test_unit_info_resolves_aliases_case_insensitively():
    assert unit_info(" PCS ") == ("ea", "count", Decimal(1))
    assert unit_info("Litre") == ("l", "volume", Decimal(1000))


@pytest.mark.parametrize("unit", ["furlong", "", "   "])
def test_unit_info_rejects_unknown_units(unit):
    with pytest.raises(UnitError, match="unit"):
        unit_info(unit)


@pytest.mark.parametrize(
    "quantity, source, target, expected",
    [
        ("2.5", "kg", "g", "2500"),
        ("250", "g", "kg", "0.25"),
        (3, "dozen", "ea", "36"),
        ("150", "cm", "m", "1.5"),
        ("7", "pcs", "ea", "7"),
    ],
)
def test_convert(quantity, source, target, expected):
    result = convert(quantity, source, target)
    assert result == Decimal(expected)
    assert str(result) == expected


def test_convert_refuses_incompatible_dimensions():
    with pytest.raises(UnitError, match=r"cannot convert kg \(mass\) to l \(volume\)"):
        convert(1, "kg", "l")
