"""Stock reports: rows per SKU and location, valuation, low stock, CSV export."""
from __future__ import annotations

import re
from decimal import Decimal
from typing import Iterable, Mapping, Optional, Sequence

from .catalog import Item, normalize_sku
from .errors import UnknownSKUError
from .stock import Ledger
from .units import Number, round_money, to_decimal

STOCK_COLUMNS = ("sku", "name", "location", "quantity", "unit", "value")

_NUMERIC_RE = re.compile(r"^[+-]?\d+(\.\d+)?$")


def _item_value(item: Item, quantity: Decimal) -> Decimal:
    """Stock value at list price. Backordered (negative) stock is worth nothing, not less."""
    if quantity <= 0:
        return Decimal("0.00")
    return round_money(to_decimal(item.unit_price) * quantity)


def stock_rows(ledger: Ledger, include_zero: bool = False) -> list[dict[str, str]]:
    """One row per SKU and location holding stock, sorted by SKU then location.

    With ``include_zero`` items without any stock get a row with an empty location.
    """
    rows = []
    for item in ledger.catalog:
        locations = ledger.locations(item.sku)
        if not locations and include_zero:
            locations = {"": Decimal(0)}
        for location, qty in locations.items():
            rows.append(
                {
                    "sku": item.sku,
                    "name": item.name,
                    "location": location,
                    "quantity": str(qty),
                    "unit": item.unit,
                    "value": str(_item_value(item, qty)),
                }
            )
    return rows


def valuation(ledger: Ledger, by: str = "sku") -> dict[str, Decimal]:
    """Total stock value grouped ``by="sku"`` or ``by="location"``, sorted by key."""
    if by not in ("sku", "location"):
        raise ValueError(f"valuation can be grouped by 'sku' or 'location', not {by!r}")
    totals: dict[str, Decimal] = {}
    for item in ledger.catalog:
        for location, qty in ledger.locations(item.sku).items():
            key = item.sku if by == "sku" else location
            totals[key] = totals.get(key, Decimal("0.00")) + _item_value(item, qty)
    return dict(sorted(totals.items()))


def _csv_cell(value: object) -> str:
    """Quote a CSV cell when needed and defuse spreadsheet formulas (``=``, ``+``, ``-``, ``@``)."""
    text = "" if value is None else str(value)
    if text[:1] in ("=", "+", "-", "@") and not _NUMERIC_RE.match(text):
        text = "'" + text
    if any(char in text for char in ',"\n\r'):
        text = '"' + text.replace('"', '""') + '"'
    return text


def to_csv(rows: Iterable[Mapping[str, object]], columns: Sequence[str]) -> str:
    """Render rows as CSV text with a header line; lines end with ``\\n``."""
    if not columns:
        raise ValueError("at least one column is required")
    if len(set(columns)) != len(columns):
        raise ValueError("column names must be unique")
    lines = [",".join(_csv_cell(column) for column in columns)]
    for index, row in enumerate(rows, start=1):
        missing = [column for column in columns if column not in row]
        if missing:
            raise KeyError(f"row {index} lacks column(s): {', '.join(missing)}")
        lines.append(",".join(_csv_cell(row[column]) for column in columns))
    return "\n".join(lines) + "\n"


def stock_report_csv(ledger: Ledger, include_zero: bool = False, with_total: bool = False) -> str:
    """The stock rows as CSV; ``with_total`` appends a ``TOTAL`` row with the summed value."""
    rows = stock_rows(ledger, include_zero=include_zero)
    if with_total:
        total = round_money(sum((Decimal(row["value"]) for row in rows), Decimal(0)))
        rows.append({"sku": "TOTAL", "name": "", "location": "", "quantity": "", "unit": "", "value": str(total)})
    return to_csv(rows, STOCK_COLUMNS)


def low_stock(
    ledger: Ledger, thresholds: Optional[Mapping[str, Number]] = None, default: Number = 0
) -> list[tuple[str, Decimal, Decimal]]:
    """Items whose total stock is at or below their reorder threshold.

    Returns ``(sku, on_hand, threshold)`` sorted by SKU. ``thresholds`` may use any SKU
    spelling; a threshold for a SKU that is not in the catalog is an error.
    """
    limits = {}
    for raw_sku, value in (thresholds or {}).items():
        sku = normalize_sku(raw_sku)
        if sku not in ledger.catalog:
            raise UnknownSKUError(sku)
        limits[sku] = to_decimal(value)
    fallback = to_decimal(default)
    if fallback < 0 or any(limit < 0 for limit in limits.values()):
        raise ValueError("reorder thresholds must not be negative")
    result = []
    for item in ledger.catalog:
        limit = limits.get(item.sku, fallback)
        on_hand = ledger.balance(item.sku)
        if on_hand <= limit:
            result.append((item.sku, on_hand, limit))
    return result
