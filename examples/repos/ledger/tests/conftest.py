import pytest

from ledger import Catalog, Item, Ledger, Movement, ReservationBook

RECORDS = """\
; opening stock, counted on the first day
RECV BLT-100 100 @MAIN ref=PO-1
RECV PNT-200 10 @MAIN
RECV PNT-200 4 @SHOP
RECV CAB-300 50 @MAIN   ; cable comes by the metre
"""


@pytest.fixture
def items():
    return [
        Item("BLT-100", "Bolt M6 zinc", unit="ea", unit_price="0.25"),
        Item("PNT-200", "Paint white matt", unit="l", unit_price="12.50", tax_category="reduced"),
        Item("CAB-300", "Cable 3-core", unit="m", unit_price="1.10"),
        Item("CAF-410", "Café crème beans", unit="kg", unit_price="18.00", tax_category="reduced", allow_backorder=True),
        Item("BK-5001", "Book: Joinery basics", unit="ea", unit_price="24.00", tax_category="zero"),
    ]


@pytest.fixture
def catalog(items):
    return Catalog(items)


@pytest.fixture
def empty_ledger(catalog):
    return Ledger(catalog)


@pytest.fixture
def ledger(catalog):
    stocked = Ledger(catalog)
    stocked.apply_all(
        [
            Movement("receive", "BLT-100", 100, reference="PO-1"),
            Movement("receive", "PNT-200", 10),
            Movement("receive", "PNT-200", 4, location="SHOP"),
            Movement("receive", "CAB-300", 50),
        ]
    )
    return stocked


@pytest.fixture
def book(ledger):
    return ReservationBook(ledger)


@pytest.fixture
def records():
    return RECORDS
