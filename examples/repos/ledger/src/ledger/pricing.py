"""Line pricing with discounts and tax, and invoice totals."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable, Optional, Sequence

from .catalog import Catalog, Item
from .errors import PricingError
from .units import Number, parse_money, round_money, to_decimal

TAX_RATES = {
    "standard": Decimal("0.20"),
    "reduced": Decimal("0.05"),
    "zero": Decimal("0"),
}

ZERO = Decimal("0.00")


@dataclass(frozen=True)
class Discount:
    kind: str  # "percent" (value is a fraction) or "fixed" (value is money off the line)
    value: Decimal
    min_quantity: Decimal = Decimal(0)


@dataclass(frozen=True)
class PricedLine:
    sku: str
    quantity: Decimal
    gross: Decimal
    discount: Decimal
    net: Decimal
    tax: Decimal
    total: Decimal


@dataclass(frozen=True)
class Totals:
    subtotal: Decimal
    discount: Decimal
    tax: Decimal
    total: Decimal
    lines: tuple[PricedLine, ...]


def _parse_percent(text: str) -> Decimal:
    """``"12.5%"`` -> ``Decimal("0.125")``; the percentage must be in (0, 100]."""
    number = text.strip()
    if not number.endswith("%"):
        raise PricingError(f"percentage must end with '%': {text!r}")
    try:
        value = to_decimal(number[:-1])
    except ValueError:
        raise PricingError(f"bad percentage: {text!r}") from None
    if not Decimal(0) < value <= Decimal(100):
        raise PricingError(f"percentage out of range (0, 100]: {number}")
    return value / 100


def parse_discount(text: Optional[str]) -> Optional[Discount]:
    """Parse a discount: ``"10%"``, a fixed amount ``"2.50"``, or a bulk rule ``"5+:15%"``.

    An empty text or ``"-"`` means no discount.
    """
    if text is None:
        return None
    spec = text.strip()
    if not spec or spec == "-":
        return None
    min_quantity = Decimal(0)
    if "+:" in spec:
        threshold, _, spec = spec.partition("+:")
        try:
            min_quantity = to_decimal(threshold)
        except ValueError:
            raise PricingError(f"bad bulk threshold: {threshold!r}") from None
        if min_quantity < 1:
            raise PricingError("bulk threshold must be at least 1")
    if spec.endswith("%"):
        return Discount("percent", _parse_percent(spec), min_quantity)
    try:
        amount = parse_money(spec)
    except ValueError:
        raise PricingError(f"unrecognised discount: {text!r}") from None
    if amount <= 0:
        raise PricingError("a fixed discount must be positive")
    return Discount("fixed", amount, min_quantity)


def discount_amount(gross: Decimal, quantity: Decimal, discount: Optional[Discount]) -> Decimal:
    """Money taken off a line: never negative and never more than the line itself."""
    if discount is None or quantity < discount.min_quantity:
        return ZERO
    if discount.kind == "percent":
        amount = gross * discount.value
    elif discount.kind == "fixed":
        amount = discount.value
    else:
        raise PricingError(f"unknown discount kind: {discount.kind!r}")
    return round_money(max(Decimal(0), min(amount, gross)))


def tax_for(amount: Decimal, category: str) -> Decimal:
    """Tax due on a net amount for a tax category, rounded to cents."""
    try:
        rate = TAX_RATES[category]
    except KeyError:
        raise PricingError(f"unknown tax category: {category!r}") from None
    if amount < 0:
        raise PricingError("cannot tax a negative amount")
    return round_money(amount * rate)


def price_line(item: Item, quantity: Number, discount: Optional[Discount] = None) -> PricedLine:
    """Price ``quantity`` of an item: gross, discount, net, tax and total."""
    qty = to_decimal(quantity)
    if qty <= 0:
        raise ValueError("quantity must be positive")
    gross = round_money(to_decimal(item.unit_price) * qty)
    off = discount_amount(gross, qty, discount)
    net = gross - off
    tax = tax_for(net, item.tax_category)
    return PricedLine(item.sku, qty, gross, off, net, tax, net + tax)


def _sum_money(values: Iterable[Decimal]) -> Decimal:
    total = ZERO
    for value in values:
        if not isinstance(value, Decimal):
            raise TypeError(f"expected Decimal amounts, got {type(value).__name__}")
        total += value
    return round_money(total)


def invoice_totals(catalog: Catalog, lines: Iterable[Sequence[object]]) -> Totals:
    """Totals of an invoice given ``(sku, quantity[, discount])`` lines.

    A SKU may appear only once; an invoice needs at least one line.
    """
    priced = []
    seen = set()
    for entry in lines:
        if len(entry) not in (2, 3):
            raise PricingError(f"invoice line must be (sku, quantity[, discount]), got {entry!r}")
        sku, quantity = entry[0], entry[1]
        discount_text = entry[2] if len(entry) == 3 else None
        item = catalog.get(str(sku))
        if item.sku in seen:
            raise PricingError(f"duplicate invoice line for {item.sku}")
        seen.add(item.sku)
        priced.append(price_line(item, quantity, parse_discount(discount_text)))
    if not priced:
        raise PricingError("an invoice needs at least one line")
    return Totals(
        subtotal=_sum_money(line.gross for line in priced),
        discount=_sum_money(line.discount for line in priced),
        tax=_sum_money(line.tax for line in priced),
        total=_sum_money(line.total for line in priced),
        lines=tuple(priced),
    )
