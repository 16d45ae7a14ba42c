from decimal import Decimal

import pytest

from ledger import InsufficientStockError, Ledger, Movement, UnknownSKUError
from ledger.errors import UnitError
from ledger.stock import _movement_deltas, _validate_movement


class TestApply:
    def test_receive_adds_stock_and_returns_the_new_balance(self, empty_ledger):
        assert empty_ledger.apply(Movement("receive", "BLT-100", 40)) == Decimal(40)
        assert empty_ledger.apply(Movement("receive", "blt100", "2.5")) == Decimal("42.5")

    def test_issue_takes_stock(self, ledger):
        assert ledger.apply(Movement("issue", "BLT-100", 30)) == Decimal(70)
        assert ledger.balance("BLT-100") == Decimal(70)

    def test_issue_beyond_stock_is_refused_and_changes_nothing(self, ledger):
        with pytest.raises(
            InsufficientStockError, match="insufficient stock of BLT-100 at MAIN: requested 101, available 100"
        ) as excinfo:
            ledger.apply(Movement("issue", "BLT-100", 101))
        assert (excinfo.value.available, excinfo.value.requested) == (Decimal(100), Decimal(101))
        assert ledger.balance("BLT-100") == Decimal(100)
        assert len(ledger.history("BLT-100")) == 1

    def test_negative_adjustment_cannot_go_below_zero(self, ledger):
        with pytest.raises(InsufficientStockError, match="requested 51"):
            ledger.apply(Movement("adjust", "CAB-300", -51))
        assert ledger.apply(Movement("adjust", "CAB-300", -50)) == Decimal(0)

    def test_backorder_items_may_go_negative(self, ledger):
        assert ledger.apply(Movement("issue", "CAF-410", 3)) == Decimal(-3)
        assert ledger.apply(Movement("receive", "CAF-410", 5)) == Decimal(2)

    def test_transfer_moves_stock_between_locations(self, ledger):
        assert ledger.apply(Movement("transfer", "PNT-200", 6, location="main", to_location="shop")) == Decimal(4)
        assert ledger.locations("PNT-200") == {"MAIN": Decimal(4), "SHOP": Decimal(10)}
        assert ledger.balance("PNT-200") == Decimal(14)

    def test_failed_transfer_changes_neither_location(self, ledger):
        with pytest.raises(InsufficientStockError, match="at SHOP"):
            ledger.apply(Movement("transfer", "PNT-200", 5, location="SHOP", to_location="MAIN"))
        assert ledger.locations("PNT-200") == {"MAIN": Decimal(10), "SHOP": Decimal(4)}

    def test_quantities_are_converted_to_the_item_unit(self, empty_ledger):
        assert empty_ledger.apply(Movement("receive", "CAF-410", 500, unit="g")) == Decimal("0.5")
        assert empty_ledger.history()[0].quantity == Decimal("0.5")
        assert empty_ledger.history()[0].unit == "kg"

    def test_incompatible_units_are_refused(self, empty_ledger):
        with pytest.raises(UnitError, match="cannot convert l"):
            empty_ledger.apply(Movement("receive", "CAF-410", 1, unit="l"))

    def test_unknown_skus_are_refused(self, empty_ledger):
        with pytest.raises(UnknownSKUError, match="unknown SKU: ZZ-999"):
            empty_ledger.apply(Movement("receive", "ZZ-999", 1))


@pytest.mark.parametrize(
    "movement, message",
    [
        (Movement("steal", "BLT-100", 1), "unknown movement kind: 'steal'"),
        (Movement("issue", "BLT-100", 0), "issue quantity must be positive"),
        (Movement("receive", "BLT-100", "-4"), "receive quantity must be positive"),
        (Movement("adjust", "BLT-100", "0.000"), "adjustment quantity must not be zero"),
        (Movement("transfer", "BLT-100", 1), "needs a destination"),
        (Movement("receive", "BLT-100", 1, to_location="SHOP"), "only transfers have a destination"),
        (Movement("transfer", "BLT-100", 1, location="Main", to_location="MAIN "), "are the same location"),
    ],
    ids=["unknown kind", "zero issue", "negative receive", "zero adjust", "transfer [no destination]", "receive -> SHOP", "MAIN -> main"],
)
def test_validate_movement_errors(catalog, movement, message):
    with pytest.raises(ValueError, match=message):
        _validate_movement(catalog, movement)


def test_validate_movement_returns_item_and_converted_quantity(catalog):
    item, qty = _validate_movement(catalog, Movement("issue", "caf_410", "1250", unit="g"))
    assert item.sku == "CAF-410"
    assert qty == Decimal("1.25")


def test_movement_deltas():
    assert _movement_deltas("transfer", "BLT-100", "MAIN", "SHOP", Decimal(5)) == [
        (("BLT-100", "MAIN"), Decimal(-5)),
        (("BLT-100", "SHOP"), Decimal(5)),
    ]
    assert _movement_deltas("issue", "BLT-100", "MAIN", None, Decimal(2)) == [(("BLT-100", "MAIN"), Decimal(-2))]
    assert _movement_deltas("adjust", "BLT-100", "MAIN", None, Decimal(-1)) == [(("BLT-100", "MAIN"), Decimal(-1))]
    with pytest.raises(ValueError, match="unknown movement kind"):
        _movement_deltas("lose", "BLT-100", "MAIN", None, Decimal(1))


class TestApplyAll:
    def test_it_returns_the_number_of_movements(self, empty_ledger):
        count = empty_ledger.apply_all(
            [Movement("receive", "BLT-100", 10), Movement("issue", "BLT-100", 4), Movement("adjust", "BLT-100", -1)]
        )
        assert count == 3
        assert empty_ledger.balance("BLT-100") == Decimal(5)

    def test_a_failing_movement_rolls_back_the_whole_batch(self, ledger):
        before = {sku: ledger.locations(sku) for sku in ("BLT-100", "PNT-200")}
        batch = [
            Movement("issue", "BLT-100", 10),
            Movement("transfer", "PNT-200", 4, location="SHOP", to_location="MAIN"),
            Movement("issue", "PNT-200", 15),
        ]
        with pytest.raises(InsufficientStockError, match="PNT-200 at MAIN: requested 15, available 14"):
            ledger.apply_all(batch)
        assert {sku: ledger.locations(sku) for sku in ("BLT-100", "PNT-200")} == before
        assert len(ledger.history()) == 4

    def test_a_later_batch_still_works_after_a_rollback(self, ledger):
        with pytest.raises(ValueError):
            ledger.apply_all([Movement("issue", "BLT-100", 1), Movement("issue", "BLT-100", 0)])
        assert ledger.apply_all([Movement("issue", "BLT-100", 1)]) == 1
        assert ledger.balance("BLT-100") == Decimal(99)


def test_balance_per_location_and_in_total(ledger):
    assert ledger.balance("PNT-200") == Decimal(14)
    assert ledger.balance("PNT-200", "shop") == Decimal(4)
    assert ledger.balance("PNT-200", "ATTIC") == Decimal(0)
    assert ledger.balance("CAF-410") == Decimal(0)


def test_locations_hide_empty_places(ledger):
    ledger.apply(Movement("issue", "PNT-200", 4, location="SHOP"))
    assert ledger.locations("PNT-200") == {"MAIN": Decimal(10)}
    assert ledger.locations("BK-5001") == {}


def test_history_filters_by_sku_and_kind(ledger):
    ledger.apply(Movement("issue", "PNT-200", 1, reference="SO-9"))
    assert [m.quantity for m in ledger.history("pnt200")] == [Decimal(10), Decimal(4), Decimal(1)]
    assert [m.reference for m in ledger.history(kind="issue")] == ["SO-9"]
    assert [m.sku for m in ledger.history(kind="receive")] == ["BLT-100", "PNT-200", "PNT-200", "CAB-300"]
    with pytest.raises(ValueError, match="unknown movement kind: 'sell'"):
        ledger.history(kind="sell")


def test_ledgers_share_nothing(catalog):
    first, second = Ledger(catalog), Ledger(catalog)
    first.apply(Movement("receive", "BLT-100", 3))
    assert second.balance("BLT-100") == Decimal(0)
