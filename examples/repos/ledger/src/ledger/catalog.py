"""The item catalog: what can be stocked, in which unit, at which list price."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Iterable, Iterator, Mapping, Union

from .errors import DuplicateSKUError, InvalidSKUError, UnknownSKUError
from .units import Number, parse_money, round_money, unit_info

SKU_RE = re.compile(r"^[A-Z]{2,5}-\d{3,6}$")

TAX_CATEGORIES = ("standard", "reduced", "zero")

_TRUE_WORDS = {"1", "true", "yes", "y"}
_FALSE_WORDS = {"", "0", "false", "no", "n"}


@dataclass(frozen=True)
class Item:
    sku: str
    name: str
    unit: str = "ea"
    unit_price: Union[Decimal, Number] = Decimal("0.00")
    tax_category: str = "standard"
    allow_backorder: bool = False


def normalize_sku(raw: str) -> str:
    """Return the canonical form of a SKU: ``" ab_123 "`` and ``"AB123"`` become ``"AB-123"``.

    Raises InvalidSKUError when the result is not two to five letters, a dash and
    three to six digits.
    """
    if not isinstance(raw, str):
        raise TypeError(f"SKU must be a string, not {type(raw).__name__}")
    text = raw.strip().upper().replace("_", "-").replace(" ", "-")
    while "--" in text:
        text = text.replace("--", "-")
    text = re.sub(r"^([A-Z]+)(\d+)$", r"\1-\2", text)
    if not SKU_RE.match(text):
        raise InvalidSKUError(f"invalid SKU {raw!r}: expected letters, a dash and digits, e.g. 'AB-123'")
    return text


def _validate_item(item: Item) -> Item:
    """Check an item and return it in canonical form (SKU, unit, name spacing, price)."""
    sku = normalize_sku(item.sku)
    name = " ".join(str(item.name).split())
    if not name:
        raise ValueError(f"item {sku} needs a name")
    unit, _dimension, _factor = unit_info(item.unit)
    price = round_money(item.unit_price)
    if price < 0:
        raise ValueError(f"unit price of {sku} must not be negative")
    if item.tax_category not in TAX_CATEGORIES:
        raise ValueError(
            f"unknown tax category {item.tax_category!r} for {sku}; "
            f"expected one of {', '.join(TAX_CATEGORIES)}"
        )
    return replace(item, sku=sku, name=name, unit=unit, unit_price=price)


def _match_score(item: Item, tokens: list[str]) -> int:
    """Score how well an item matches every search token (0 means it does not match).

    A whole word of the name scores 3, a word prefix 2, a part of the SKU 1.
    """
    words = [word for word in re.split(r"[\W_]+", item.name.casefold()) if word]
    sku = item.sku.casefold()
    score = 0
    for token in tokens:
        if token in words:
            score += 3
        elif any(word.startswith(token) for word in words):
            score += 2
        elif token in sku:
            score += 1
        else:
            return 0
    return score


class Catalog:
    """Items by canonical SKU. Iteration yields items sorted by SKU."""

    def __init__(self, items: Iterable[Item] = ()) -> None:
        self._items: dict[str, Item] = {}
        for item in items:
            self.add(item)

    def __iter__(self) -> Iterator[Item]:
        return iter([self._items[sku] for sku in sorted(self._items)])

    def __contains__(self, sku: object) -> bool:
        if not isinstance(sku, str):
            return False
        try:
            return normalize_sku(sku) in self._items
        except InvalidSKUError:
            return False

    def add(self, item: Item) -> Item:
        """Validate and store an item; returns the stored (canonical) item."""
        clean = _validate_item(item)
        if clean.sku in self._items:
            raise DuplicateSKUError(f"SKU already in catalog: {clean.sku}")
        self._items[clean.sku] = clean
        return clean

    def get(self, sku: str) -> Item:
        """Look an item up by SKU in any accepted spelling."""
        key = normalize_sku(sku)
        try:
            return self._items[key]
        except KeyError:
            raise UnknownSKUError(key) from None

    def search(self, query: str, limit: int = 10) -> list[Item]:
        """Items matching every word of ``query``, best matches first, then by SKU."""
        if limit < 1:
            raise ValueError("limit must be at least 1")
        tokens = [token for token in re.split(r"[\W_]+", query.casefold()) if token]
        if not tokens:
            raise ValueError("search query is empty")
        scored = []
        for item in self._items.values():
            score = _match_score(item, tokens)
            if score:
                scored.append((-score, item.sku, item))
        scored.sort(key=lambda entry: (entry[0], entry[1]))
        return [item for _score, _sku, item in scored[:limit]]


def _parse_bool(value: object) -> bool:
    """Read yes/no flags as written in spreadsheets (``"Yes"``, ``"0"``, empty)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE_WORDS:
        return True
    if text in _FALSE_WORDS:
        return False
    raise ValueError(f"not a yes/no value: {value!r}")


def _row_to_item(row: Mapping[str, str], index: int) -> Item:
    missing = [key for key in ("sku", "name") if not (row.get(key) or "").strip()]
    if missing:
        raise ValueError(f"row {index}: missing {', '.join(missing)}")
    try:
        return Item(
            sku=row["sku"],
            name=row["name"],
            unit=(row.get("unit") or "ea").strip(),
            unit_price=parse_money(row.get("price") or "0"),
            tax_category=(row.get("tax") or "standard").strip().lower(),
            allow_backorder=_parse_bool(row.get("backorder", "")),
        )
    except ValueError as exc:
        raise ValueError(f"row {index}: {exc}") from None


def load_catalog(rows: Iterable[Mapping[str, str]]) -> Catalog:
    """Build a catalog from rows with keys ``sku, name, unit, price, tax, backorder``.

    Errors name the (1-based) row they come from.
    """
    catalog = Catalog()
    for index, row in enumerate(rows, start=1):
        item = _row_to_item(row, index)
        try:
            catalog.add(item)
        except (DuplicateSKUError, InvalidSKUError) as exc:
            raise type(exc)(f"row {index}: {exc}") from None
    return catalog
