from decimal import Decimal

import pytest

from ledger import Catalog, Item, load_catalog, normalize_sku
from ledger.catalog import _match_score, _parse_bool
from ledger.errors import DuplicateSKUError, InvalidSKUError, UnitError, UnknownSKUError


@pytest.mark.parametrize(
    "raw, expected",
    [(" ab_123 ", "AB-123"), ("AB123", "AB-123"), ("ab--123", "AB-123"), ("xyz 004567", "XYZ-004567")],
    ids=["padded [underscore]", "no dash", "double dash", "space separated"],
)
def test_normalize_sku(raw, expected):
    assert normalize_sku(raw) == expected


@pytest.mark.parametrize("raw", ["A-1", "123-AB", "", "ABCDEF-123", "AB-12"])
def test_normalize_sku_rejects_malformed_skus(raw):
    with pytest.raises(InvalidSKUError, match="invalid SKU"):
        normalize_sku(raw)


def test_normalize_sku_requires_a_string():
    with pytest.raises(TypeError, match="SKU must be a string, not int"):
        normalize_sku(123)


class TestCatalogAdd:
    def test_it_stores_items_in_canonical_form(self):
        catalog = Catalog()
        stored = catalog.add(Item("blt 100", "  Bolt   M6 ", unit="PCS", unit_price="0.254"))
        assert stored == Item("BLT-100", "Bolt M6", unit="ea", unit_price=Decimal("0.25"))
        assert catalog.get("BLT100") is stored

    def test_it_rejects_duplicates_in_any_spelling(self, catalog):
        with pytest.raises(DuplicateSKUError, match="already in catalog: BLT-100"):
            catalog.add(Item("blt_100", "Another bolt"))

    @pytest.mark.parametrize(
        "item, error, message",
        [
            (Item("AB-123", "Widget", unit_price="-1"), ValueError, "must not be negative"),
            (Item("AB-123", "Widget", tax_category="luxury"), ValueError, "unknown tax category 'luxury'"),
            (Item("AB-123", "   "), ValueError, "AB-123 needs a name"),
            (Item("AB-123", "Widget", unit="furlong"), UnitError, "unknown unit"),
            (Item("AB1", "Widget"), InvalidSKUError, "invalid SKU"),
        ],
        ids=["negative price", "unknown tax", "blank name", "unknown unit", "bad SKU"],
    )
    def test_it_validates_items(self, item, error, message):
        with pytest.raises(error, match=message):
            Catalog().add(item)


def test_get_unknown_sku_raises_a_key_error(catalog):
    with pytest.raises(UnknownSKUError, match="unknown SKU: ZZ-999") as excinfo:
        catalog.get("zz999")
    assert isinstance(excinfo.value, KeyError)


def test_membership_accepts_any_spelling_and_ignores_garbage(catalog):
    assert "pnt_200" in catalog
    assert "ZZ-999" not in catalog
    assert "not a sku" not in catalog
    assert 42 not in catalog


def test_iteration_is_sorted_by_sku(catalog):
    assert [item.sku for item in catalog] == ["BK-5001", "BLT-100", "CAB-300", "CAF-410", "PNT-200"]


def test_match_score():
    item = Item("AB-123", "Red apple juice")
    assert _match_score(item, ["apple"]) == 3
    assert _match_score(item, ["app"]) == 2
    assert _match_score(item, ["123"]) == 1
    assert _match_score(item, ["apple", "juice"]) == 6
    assert _match_score(item, ["apple", "pear"]) == 0


class TestSearch:
    @pytest.mark.parametrize(
        "query, expected",
        [
            ("bolt", ["BLT-100"]),
            ("white pai", ["PNT-200"]),
            ("café", ["CAF-410"]),
            ("CRÈME beans", ["CAF-410"]),
            ("5001", ["BK-5001"]),
            ("paint bolt", []),
        ],
        ids=["whole word", "word prefix", "ünïcödé café", "upper-case CRÈME", "sku digits", "no match"],
    )
    def test_it_finds_items(self, catalog, query, expected):
        assert [item.sku for item in catalog.search(query)] == expected

    def test_it_ranks_whole_words_before_prefixes(self, catalog):
        catalog.add(Item("BLT-108", "Bolt M8 zinc"))
        catalog.add(Item("TL-900", "Boltcutter"))
        assert [item.sku for item in catalog.search("bolt")] == ["BLT-100", "BLT-108", "TL-900"]
        assert [item.sku for item in catalog.search("bolt", limit=1)] == ["BLT-100"]

    def test_it_rejects_empty_queries_and_bad_limits(self, catalog):
        with pytest.raises(ValueError, match="search query is empty"):
            catalog.search("  !! ")
        with pytest.raises(ValueError, match="limit must be at least 1"):
            catalog.search("bolt", limit=0)


@pytest.mark.parametrize("value, expected", [("Yes", True), ("0", False), ("", False), (True, True), (" N ", False)])
def test_parse_bool(value, expected):
    assert _parse_bool(value) is expected


def test_parse_bool_rejects_other_words():
    with pytest.raises(ValueError, match="not a yes/no value: 'maybe'"):
        _parse_bool("maybe")


def test_load_catalog_reads_spreadsheet_rows():
    catalog = load_catalog(
        [
            {"sku": "lmp_042", "name": "Lamp", "price": "$1,200.00", "backorder": "yes"},
            {"sku": "OIL-900", "name": "Oil", "unit": "ml", "price": "3.5", "tax": "Reduced"},
        ]
    )
    lamp = catalog.get("LMP-042")
    assert lamp.unit_price == Decimal("1200.00")
    assert lamp.allow_backorder is True
    assert catalog.get("OIL-900") == Item("OIL-900", "Oil", "ml", Decimal("3.50"), "reduced", False)


@pytest.mark.parametrize(
    "rows, error, message",
    [
        ([{"sku": "AB-123", "name": "A"}, {"sku": "AB-124"}], ValueError, "row 2: missing name"),
        ([{"sku": "AB-123", "name": "A"}, {"sku": "ab123", "name": "B"}], DuplicateSKUError, "row 2: SKU already in catalog: AB-123"),
        ([{"sku": "AB-123", "name": "A", "price": "cheap"}], ValueError, "row 1: not a money amount"),
        ([{"sku": "AB-123", "name": "A", "backorder": "perhaps"}], ValueError, "row 1: not a yes/no value"),
        ([{"sku": "A-1", "name": "A"}], InvalidSKUError, "row 1: invalid SKU"),
    ],
)
def test_load_catalog_reports_the_bad_row(rows, error, message):
    with pytest.raises(error, match=message):
        load_catalog(rows)
