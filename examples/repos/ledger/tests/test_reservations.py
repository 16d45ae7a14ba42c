from decimal import Decimal

import pytest

from ledger import InsufficientStockError, Movement, ReservationError


class TestReserve:
    def test_it_holds_stock_without_issuing_it(self, book, ledger):
        reservation = book.reserve("SO-1", "blt100", 30)
        assert (reservation.id, reservation.sku, reservation.location) == ("R0001", "BLT-100", "MAIN")
        assert book.available("BLT-100") == Decimal(70)
        assert ledger.balance("BLT-100") == Decimal(100)

    def test_ids_are_sequential(self, book):
        ids = [book.reserve("SO-1", "BLT-100", 1).id for _ in range(3)]
        assert ids == ["R0001", "R0002", "R0003"]

    def test_it_refuses_more_than_is_free(self, book):
        book.reserve("SO-1", "BLT-100", 60)
        with pytest.raises(ReservationError, match="cannot reserve 41 ea of BLT-100 at MAIN: only 40 available"):
            book.reserve("SO-2", "BLT-100", 41)
        assert book.reserved("BLT-100") == Decimal(60)

    def test_backorder_items_can_be_oversold(self, book):
        book.reserve("SO-1", "CAF-410", "2.5")
        assert book.available("CAF-410") == Decimal("-2.5")

    def test_reservations_are_per_location(self, book):
        book.reserve("SO-1", "PNT-200", 4, location="shop")
        assert book.available("PNT-200", "SHOP") == Decimal(0)
        assert book.available("PNT-200", "MAIN") == Decimal(10)
        assert book.available("PNT-200") == Decimal(10)

    @pytest.mark.parametrize(
        "order, quantity, message",
        [
            ("SO-1", "-1", "reservation quantity must be positive"),
            ("SO-1", 0, "reservation quantity must be positive"),
            ("SO-1", "lots", "reservation quantity is not a number: 'lots'"),
            ("   ", 1, "order reference is required"),
        ],
    )
    def test_it_rejects_bad_input(self, book, order, quantity, message):
        with pytest.raises(ValueError, match=message):
            book.reserve(order, "BLT-100", quantity)


class TestAllocate:
    def test_it_takes_the_fullest_location_first(self, book):
        reservations = book.allocate("SO-7", "PNT-200", 12)
        assert [(r.location, r.quantity) for r in reservations] == [("MAIN", Decimal(10)), ("SHOP", Decimal(2))]
        assert book.available("PNT-200") == Decimal(2)

    def test_it_respects_existing_reservations(self, book):
        book.reserve("SO-1", "PNT-200", 8)
        reservations = book.allocate("SO-2", "PNT-200", 5)
        assert [(r.location, r.quantity) for r in reservations] == [("SHOP", Decimal(4)), ("MAIN", Decimal(1))]

    def test_it_reserves_nothing_when_short(self, book):
        with pytest.raises(ReservationError, match="cannot allocate 16 of PNT-200: short by 2"):
            book.allocate("SO-7", "PNT-200", 16)
        assert book.reserved("PNT-200") == Decimal(0)

    def test_allocation_plan_breaks_ties_by_location_name(self, book, ledger):
        ledger.apply(Movement("receive", "CAB-300", 50, location="ANNEX"))
        assert book._allocation_plan("CAB-300", Decimal(60)) == [("ANNEX", Decimal(50)), ("MAIN", Decimal(10))]

    def test_it_rejects_bad_quantities(self, book):
        with pytest.raises(ValueError, match="allocation quantity must be positive"):
            book.allocate("SO-7", "PNT-200", 0)


class TestFulfil:
    def test_it_issues_the_stock_and_closes_the_reservation(self, book, ledger):
        reservation = book.reserve("SO-3", "BLT-100", 25)
        assert book.fulfil(reservation.id) == Decimal(75)
        assert book.reserved("BLT-100") == Decimal(0)
        issue = ledger.history(kind="issue")[-1]
        assert (issue.sku, issue.quantity, issue.reference) == ("BLT-100", Decimal(25), "SO-3")

    def test_a_refused_issue_keeps_the_reservation(self, book, ledger):
        reservation = book.reserve("SO-3", "PNT-200", 4, location="SHOP")
        ledger.apply(Movement("issue", "PNT-200", 1, location="SHOP"))
        with pytest.raises(InsufficientStockError, match="requested 4, available 3"):
            book.fulfil(reservation.id, reference="pick-1")
        assert book.reserved("PNT-200", "SHOP") == Decimal(4)

    def test_unknown_reservations_are_reported(self, book):
        with pytest.raises(ReservationError, match="unknown reservation: R9999"):
            book.fulfil("R9999")


def test_release_frees_the_stock(book):
    reservation = book.reserve("SO-4", "CAB-300", "12.5")
    assert book.release(reservation.id) == reservation
    assert book.available("CAB-300") == Decimal(50)
    with pytest.raises(ReservationError, match="unknown reservation"):
        book.release(reservation.id)


def test_allocate_uses_a_single_location_when_it_can(book):
    reservations = book.allocate("SO-8", "pnt_200", 3)
    assert [(r.id, r.order, r.sku, r.location, r.quantity) for r in reservations] == [
        ("R0001", "SO-8", "PNT-200", "MAIN", Decimal(3))
    ]


def test_allocate_never_backorders(book):
    with pytest.raises(ReservationError, match="cannot allocate 1 of CAF-410: short by 1"):
        book.allocate("SO-8", "CAF-410", 1)


def test_fulfil_uses_an_explicit_reference(book, ledger):
    reservation = book.allocate("SO-9", "PNT-200", 12)[1]
    assert book.fulfil(reservation.id, reference="pick-77") == Decimal(2)
    assert ledger.history(kind="issue")[-1].reference == "pick-77"
    assert book.available("PNT-200") == Decimal(2)
