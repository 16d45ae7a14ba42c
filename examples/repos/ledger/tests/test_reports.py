from decimal import Decimal

import pytest

from ledger import Item, Movement, UnknownSKUError, low_stock, stock_report_csv, stock_rows, to_csv, valuation
from ledger.reports import _csv_cell, _item_value


def test_stock_rows(ledger):
    rows = stock_rows(ledger)
    assert [(row["sku"], row["location"], row["quantity"], row["value"]) for row in rows] == [
        ("BLT-100", "MAIN", "100", "25.00"),
        ("CAB-300", "MAIN", "50", "55.00"),
        ("PNT-200", "MAIN", "10", "125.00"),
        ("PNT-200", "SHOP", "4", "50.00"),
    ]


def test_stock_rows_can_include_items_without_stock(ledger):
    rows = stock_rows(ledger, include_zero=True)
    assert [row["sku"] for row in rows if row["location"] == ""] == ["BK-5001", "CAF-410"]


def test_stock_report_csv(ledger):
    ledger.apply(Movement("receive", "BK-5001", 2))
    assert stock_report_csv(ledger) == (
        "sku,name,location,quantity,unit,value\n"
        "BK-5001,Book: Joinery basics,MAIN,2,ea,48.00\n"
        "BLT-100,Bolt M6 zinc,MAIN,100,ea,25.00\n"
        "CAB-300,Cable 3-core,MAIN,50,m,55.00\n"
        "PNT-200,Paint white matt,MAIN,10,l,125.00\n"
        "PNT-200,Paint white matt,SHOP,4,l,50.00\n"
    )


def test_stock_report_csv_with_total(ledger):
    ledger.apply(Movement("issue", "CAF-410", 2))
    report = stock_report_csv(ledger, with_total=True)
    assert report.splitlines()[-1] == "TOTAL,,,,,255.00"
    assert stock_report_csv(ledger.__class__(ledger.catalog), with_total=True) == (
        "sku,name,location,quantity,unit,value\nTOTAL,,,,,0.00\n"
    )


@pytest.mark.parametrize(
    "value, expected",
    [
        ("plain", "plain"),
        ("a,b", '"a,b"'),
        ('say "hi"', '"say ""hi"""'),
        ("=SUM(A1:A9)", "'=SUM(A1:A9)"),
        ("-3.5", "-3.5"),
        ("@home, sweet", "\"'@home, sweet\""),
        (None, ""),
        ("crème brûlée", "crème brûlée"),
    ],
    ids=["plain text", "comma", "quotes", "formula =SUM(A1:A9)", "negative number", "at-sign [and comma]", "None", "ünïcödé crème"],
)
def test_csv_cell(value, expected):
    assert _csv_cell(value) == expected


def test_to_csv_quotes_cells_and_checks_columns():
    rows = [{"a": "x,y", "b": 1}, {"a": "line\nbreak", "b": None}]
    assert to_csv(rows, ["a", "b"]) == 'a,b\n"x,y",1\n"line\nbreak",\n'
    with pytest.raises(KeyError, match="row 1 lacks column\\(s\\): c"):
        to_csv(rows, ["a", "c"])


@pytest.mark.parametrize("columns, message", [([], "at least one column"), (["a", "a"], "must be unique")])
def test_to_csv_rejects_bad_columns(columns, message):
    with pytest.raises(ValueError, match=message):
        to_csv([], columns)


def test_item_value_ignores_backorders(catalog):
    item = catalog.get("CAF-410")
    assert _item_value(item, Decimal("1.5")) == Decimal("27.00")
    assert _item_value(item, Decimal(-2)) == Decimal("0.00")


def test_valuation_by_sku_and_by_location(ledger):
    ledger.apply(Movement("issue", "CAF-410", 2))
    assert valuation(ledger) == {"BLT-100": Decimal("25.00"), "CAB-300": Decimal("55.00"), "CAF-410": Decimal("0.00"), "PNT-200": Decimal("175.00")}
    assert valuation(ledger, by="location") == {"MAIN": Decimal("205.00"), "SHOP": Decimal("50.00")}
    with pytest.raises(ValueError, match="grouped by 'sku' or 'location', not 'colour'"):
        valuation(ledger, by="colour")


class TestLowStock:
    def test_default_threshold_lists_empty_items(self, ledger):
        assert low_stock(ledger) == [("BK-5001", Decimal(0), Decimal(0)), ("CAF-410", Decimal(0), Decimal(0))]

    def test_thresholds_accept_any_sku_spelling(self, ledger):
        result = low_stock(ledger, {"pnt_200": 20, "blt100": "99.5"}, default=-0)
        assert [sku for sku, _on_hand, _limit in result] == ["BK-5001", "CAF-410", "PNT-200"]
        assert result[-1] == ("PNT-200", Decimal(14), Decimal(20))

    def test_backorders_count_as_low(self, ledger):
        ledger.apply(Movement("issue", "CAF-410", 1))
        assert ("CAF-410", Decimal(-1), Decimal(0)) in low_stock(ledger)

    def test_thresholds_for_unknown_skus_are_errors(self, ledger):
        with pytest.raises(UnknownSKUError, match="unknown SKU: ZZ-999"):
            low_stock(ledger, {"ZZ-999": 1})

    def test_negative_thresholds_are_errors(self, ledger):
        with pytest.raises(ValueError, match="must not be negative"):
            low_stock(ledger, {"BLT-100": -1})


def test_stock_report_csv_quotes_names_and_lists_empty_items(catalog, empty_ledger):
    catalog.add(Item("GLU-010", 'Glue "extra", 50 ml', unit_price="3.20"))
    empty_ledger.apply(Movement("receive", "GLU-010", 3, location="shop"))
    report = stock_report_csv(empty_ledger, include_zero=True)
    assert 'GLU-010,"Glue ""extra"", 50 ml",SHOP,3,ea,9.60' in report.splitlines()
    assert report.count(",,0,") == 5


class TestValuation:
    def test_empty_ledger(self, empty_ledger):
        assert valuation(empty_ledger) == {}
        assert valuation(empty_ledger, by="location") == {}

    def test_transfers_move_value_between_locations(self, ledger):
        ledger.apply(Movement("transfer", "BLT-100", 40, location="MAIN", to_location="VAN"))
        assert valuation(ledger, by="location") == {"MAIN": Decimal("195.00"), "SHOP": Decimal("50.00"), "VAN": Decimal("10.00")}

    def test_fractional_quantities_are_rounded_per_line(self, empty_ledger):
        empty_ledger.apply(Movement("receive", "CAB-300", "0.35"))
        empty_ledger.apply(Movement("receive", "CAB-300", "0.35", location="VAN"))
        assert valuation(empty_ledger) == {"CAB-300": Decimal("0.78")}
        assert valuation(empty_ledger, by="location") == {"MAIN": Decimal("0.39"), "VAN": Decimal("0.39")}
