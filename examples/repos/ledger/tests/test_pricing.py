from decimal import Decimal

import pytest

from ledger import Discount, Item, PricingError, invoice_totals, parse_discount, price_line
from ledger.pricing import _parse_percent, _sum_money, discount_amount, tax_for


def test_parse_percent():
    assert _parse_percent("12.5%") == Decimal("0.125")
    assert _parse_percent(" 100% ") == Decimal(1)


@pytest.mark.parametrize(
    "text, message",
    [("0%", "out of range"), ("150%", "out of range"), ("abc%", "bad percentage: 'abc%'"), ("15", "must end with '%'")],
)
def test_parse_percent_errors(text, message):
    with pytest.raises(PricingError, match=message):
        _parse_percent(text)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("10%", Discount("percent", Decimal("0.1"))),
        ("$2.50", Discount("fixed", Decimal("2.50"))),
        ("5+:15%", Discount("percent", Decimal("0.15"), Decimal(5))),
        ("12+:1.99", Discount("fixed", Decimal("1.99"), Decimal(12))),
        ("", None),
        ("-", None),
        (None, None),
    ],
    ids=["percent", "fixed $", "bulk 5+ [percent]", "bulk 12+ [fixed]", "empty", "dash", "none"],
)
def test_parse_discount(text, expected):
    assert parse_discount(text) == expected


@pytest.mark.parametrize(
    "text, message",
    [
        ("0+:10%", "bulk threshold must be at least 1"),
        ("x+:10%", "bad bulk threshold: 'x'"),
        ("ten", "unrecognised discount: 'ten'"),
        ("-2", "fixed discount must be positive"),
        ("5+:200%", "out of range"),
    ],
)
def test_parse_discount_errors(text, message):
    with pytest.raises(PricingError, match=message):
        parse_discount(text)


class TestDiscountAmount:
    def test_percent(self):
        assert discount_amount(Decimal("19.99"), Decimal(1), Discount("percent", Decimal("0.15"))) == Decimal("3.00")

    def test_fixed_discount_is_capped_at_the_line(self):
        assert discount_amount(Decimal("4.00"), Decimal(1), Discount("fixed", Decimal("5.00"))) == Decimal("4.00")

    def test_bulk_discount_needs_the_threshold(self):
        bulk = Discount("percent", Decimal("0.5"), Decimal(10))
        assert discount_amount(Decimal("90.00"), Decimal(9), bulk) == Decimal("0.00")
        assert discount_amount(Decimal("100.00"), Decimal(10), bulk) == Decimal("50.00")

    def test_unknown_kind(self):
        with pytest.raises(PricingError, match="unknown discount kind: 'bogof'"):
            discount_amount(Decimal(1), Decimal(1), Discount("bogof", Decimal(1)))


@pytest.mark.parametrize(
    "amount, category, expected",
    [("10.00", "standard", "2.00"), ("12.50", "reduced", "0.63"), ("99.99", "zero", "0.00"), ("0.02", "standard", "0.00")],
)
def test_tax_for(amount, category, expected):
    assert tax_for(Decimal(amount), category) == Decimal(expected)


def test_tax_for_errors():
    with pytest.raises(PricingError, match="unknown tax category: 'luxury'"):
        tax_for(Decimal(1), "luxury")
    with pytest.raises(PricingError, match="cannot tax a negative amount"):
        tax_for(Decimal(-1), "standard")


def test_price_line_with_discount_and_reduced_tax(catalog):
    line = price_line(catalog.get("PNT-200"), 3, parse_discount("10%"))
    assert (line.gross, line.discount, line.net, line.tax, line.total) == (
        Decimal("37.50"),
        Decimal("3.75"),
        Decimal("33.75"),
        Decimal("1.69"),
        Decimal("35.44"),
    )


def test_price_line_rejects_non_positive_quantities():
    with pytest.raises(ValueError, match="quantity must be positive"):
        price_line(Item("AB-123", "Widget", unit_price=Decimal("1.00")), 0)


def test_sum_money():
    assert _sum_money([Decimal("0.10"), Decimal("0.20"), Decimal("0.005")]) == Decimal("0.31")
    assert _sum_money([]) == Decimal("0.00")
    with pytest.raises(TypeError, match="expected Decimal amounts, got float"):
        _sum_money([0.1])


class TestInvoiceTotals:
    def test_it_adds_up_lines_with_discounts_and_tax(self, catalog):
        totals = invoice_totals(catalog, [("BLT-100", 40, "5+:10%"), ("pnt200", 2), ("BK-5001", 1, "$30")])
        assert (totals.subtotal, totals.discount, totals.tax, totals.total) == (
            Decimal("59.00"),
            Decimal("25.00"),
            Decimal("3.05"),
            Decimal("37.05"),
        )
        assert [line.total for line in totals.lines] == [Decimal("10.80"), Decimal("26.25"), Decimal("0.00")]

    def test_it_refuses_the_same_sku_twice(self, catalog):
        with pytest.raises(PricingError, match="duplicate invoice line for PNT-200"):
            invoice_totals(catalog, [("PNT-200", 1), ("pnt_200", 2)])

    @pytest.mark.parametrize(
        "lines, message",
        [([], "at least one line"), ([("BLT-100",)], "must be \\(sku, quantity\\[, discount\\]\\)")],
        ids=["no lines", "(sku,) only"],
    )
    def test_it_rejects_malformed_invoices(self, catalog, lines, message):
        with pytest.raises(PricingError, match=message):
            invoice_totals(catalog, lines)

    def test_it_reports_bad_discounts(self, catalog):
        with pytest.raises(PricingError, match="unrecognised discount"):
            invoice_totals(catalog, [("BLT-100", 1, "half")])


@pytest.mark.parametrize(
    "sku, quantity, discount, expected_total",
    [
        ("BK-5001", 2, None, "48.00"),
        ("BK-5001", 2, "$5", "43.00"),
        ("CAF-410", "2.5", "2+:10%", "42.53"),
        ("CAF-410", "1.5", "2+:10%", "28.35"),
        ("BLT-100", 3, "100%", "0.00"),
    ],
    ids=["zero tax", "fixed $5 off", "bulk reached (2.5 kg)", "bulk not reached (1.5 kg)", "free [100%]"],
)
def test_price_line_totals(catalog, sku, quantity, discount, expected_total):
    line = price_line(catalog.get(sku), quantity, parse_discount(discount))
    assert line.total == Decimal(expected_total)
    assert line.net + line.tax == line.total


def test_invoice_totals_bulk_threshold_is_per_line(catalog):
    totals = invoice_totals(catalog, [("BLT-100", 4, "5+:10%"), ("CAB-300", "12.5", "5+:10%")])
    assert [line.discount for line in totals.lines] == [Decimal("0.00"), Decimal("1.38")]
    assert totals.total == Decimal("16.04")
