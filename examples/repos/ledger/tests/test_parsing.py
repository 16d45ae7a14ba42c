from decimal import Decimal

import pytest

from ledger import Ledger, Movement, ParseError, parse_line, parse_records
from ledger.parsing import _parse_location, _parse_quantity, _split_fields


@pytest.mark.parametrize(
    "line, expected",
    [
        ('RECV AB-123 5 @MAIN ref="SO 12" ; note', ["RECV", "AB-123", "5", "@MAIN", "ref=SO 12"]),
        ("  ISSUE\tAB-123   2 @MAIN  ", ["ISSUE", "AB-123", "2", "@MAIN"]),
        ("ref='a;b' ; real comment", ["ref=a;b"]),
        ('x "" y', ["x", "", "y"]),
        ("; only a comment", []),
    ],
    ids=["quoted ref + comment", "tabs and spaces", "semicolon in 'quotes'", 'empty ""', "comment only"],
)
def test_split_fields(line, expected):
    assert _split_fields(line) == expected


def test_split_fields_rejects_unterminated_quotes():
    with pytest.raises(ParseError, match="unterminated quote"):
        _split_fields('RECV AB-123 1 @MAIN ref="oops')


@pytest.mark.parametrize(
    "token, expected",
    [("@MAIN", ("MAIN", None)), ("@main>shop", ("MAIN", "SHOP")), ("@WH-2>Annex", ("WH-2", "ANNEX"))],
)
def test_parse_location(token, expected):
    assert _parse_location(token) == expected


@pytest.mark.parametrize(
    "token, message",
    [("MAIN", "expected @LOCATION"), ("@", "incomplete location"), ("@MAIN>", "incomplete location"), ("@MA IN", "bad location name")],
)
def test_parse_location_errors(token, message):
    with pytest.raises(ParseError, match=message):
        _parse_location(token)


def test_parse_quantity():
    assert _parse_quantity("12.5", "receive") == Decimal("12.5")
    assert _parse_quantity("-2", "adjust") == Decimal(-2)
    assert _parse_quantity("+3", "adjust") == Decimal(3)


@pytest.mark.parametrize(
    "token, kind, message",
    [
        ("3", "adjust", "needs an explicit sign"),
        ("+0", "adjust", "must not be zero"),
        ("-3", "issue", "issue quantity must be a plain positive number"),
        ("0", "receive", "receive quantity must be a plain positive number"),
        ("three", "issue", "bad quantity 'three'"),
    ],
)
def test_parse_quantity_errors(token, kind, message):
    with pytest.raises(ParseError, match=message):
        _parse_quantity(token, kind)


class TestParseLine:
    def test_it_parses_a_transfer(self):
        assert parse_line("MOVE PNT-200 6 @main>shop ref=T-1") == Movement(
            "transfer", "PNT-200", Decimal(6), "MAIN", "SHOP", None, "T-1"
        )

    def test_it_parses_units_and_quoted_references(self):
        assert parse_line('out caf-410 250 g @MAIN ref="Café order 7"') == Movement(
            "issue", "caf-410", Decimal(250), "MAIN", None, "g", "Café order 7"
        )

    @pytest.mark.parametrize("line", ["", "   ", "; stock take 2024", "\t; indented comment"])
    def test_blank_and_comment_lines_give_none(self, line):
        assert parse_line(line) is None

    @pytest.mark.parametrize(
        "line, message",
        [
            ("SELL AB-123 1 @MAIN", "line 7: unknown record type 'SELL'"),
            ("RECV AB-123 1", "line 7: expected at least 4 fields, got 3"),
            ("RECV AB-123 1 ea", "line 7: missing @LOCATION"),
            ("RECV AB-123 1 @MAIN>SHOP", "line 7: MOVE records, and only they"),
            ("MOVE AB-123 1 @MAIN", "line 7: MOVE records, and only they"),
            ("RECV AB-123 1 @MAIN note=x", "line 7: unexpected field 'note=x'"),
        ],
    )
    def test_errors_carry_the_line_number(self, line, message):
        with pytest.raises(ParseError, match=message) as excinfo:
            parse_line(line, lineno=7)
        assert excinfo.value.lineno == 7


def test_parse_records_skips_comments(records):
    movements = parse_records(records)
    assert [(m.kind, m.sku, m.quantity, m.location) for m in movements] == [
        ("receive", "BLT-100", Decimal(100), "MAIN"),
        ("receive", "PNT-200", Decimal(10), "MAIN"),
        ("receive", "PNT-200", Decimal(4), "SHOP"),
        ("receive", "CAB-300", Decimal(50), "MAIN"),
    ]
    assert movements[0].reference == "PO-1"


def test_parse_records_reports_every_bad_line():
    text = "RECV AB-123 1 @MAIN\nRECV AB-123 -1 @MAIN\n\nADJ AB-123 1 @MAIN\n"
    with pytest.raises(ParseError, match=r"line 2: 2 bad records \(lines 2, 4\); first: receive quantity") as excinfo:
        parse_records(text)
    assert excinfo.value.lineno == 2


def test_parse_records_reraises_a_single_error_as_is():
    with pytest.raises(ParseError, match="^line 3: unknown record type 'X'"):
        parse_records("RECV AB-123 1 @MAIN\n\nX AB-123 1 @MAIN")


def test_records_drive_a_ledger_end_to_end(catalog, records):
    ledger = Ledger(catalog)
    ledger.apply_all(parse_records(records))
    more = "MOVE PNT-200 6 @MAIN>SHOP\nISSUE pnt_200 10 @SHOP ref='SO 5'\nADJ CAB-300 -0.5 @MAIN ; offcut"
    assert ledger.apply_all(parse_records(more)) == 3
    assert ledger.locations("PNT-200") == {"MAIN": Decimal(4)}
    assert ledger.balance("CAB-300") == Decimal("49.5")
    assert ledger.history(kind="issue")[0].reference == "SO 5"
