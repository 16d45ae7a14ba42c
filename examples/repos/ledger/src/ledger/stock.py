"""Stock movements and the ledger that keeps balances per SKU and location."""
from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Iterable, Optional, Union

from .catalog import Catalog, Item
from .errors import InsufficientStockError
from .units import Number, convert, to_decimal

MOVEMENT_KINDS = ("receive", "issue", "adjust", "transfer")
DEFAULT_LOCATION = "MAIN"

Key = tuple[str, str]


@dataclass(frozen=True)
class Movement:
    kind: str
    sku: str
    quantity: Union[Decimal, Number]
    location: str = DEFAULT_LOCATION
    to_location: Optional[str] = None
    unit: Optional[str] = None
    reference: str = ""


def _validate_movement(catalog: Catalog, movement: Movement) -> tuple[Item, Decimal]:
    """Check a movement against the catalog; return its item and its quantity in the item's unit."""
    if movement.kind not in MOVEMENT_KINDS:
        raise ValueError(f"unknown movement kind: {movement.kind!r}")
    item = catalog.get(movement.sku)
    qty = to_decimal(movement.quantity)
    if movement.unit is not None:
        qty = convert(qty, movement.unit, item.unit)
    if movement.kind == "adjust":
        if qty == 0:
            raise ValueError("adjustment quantity must not be zero")
    elif qty <= 0:
        raise ValueError(f"{movement.kind} quantity must be positive")
    if movement.kind == "transfer":
        if not movement.to_location:
            raise ValueError("a transfer needs a destination location")
        if movement.to_location.strip().upper() == movement.location.strip().upper():
            raise ValueError("transfer source and destination are the same location")
    elif movement.to_location:
        raise ValueError(f"only transfers have a destination, not {movement.kind}")
    return item, qty


def _movement_deltas(kind: str, sku: str, location: str, to_location: Optional[str], qty: Decimal) -> list[tuple[Key, Decimal]]:
    """How a movement changes balances: a list of ``((sku, location), delta)``."""
    if kind == "receive":
        return [((sku, location), qty)]
    if kind == "issue":
        return [((sku, location), -qty)]
    if kind == "adjust":
        return [((sku, location), qty)]
    if kind == "transfer":
        if to_location is None:
            raise ValueError("a transfer needs a destination location")
        return [((sku, location), -qty), ((sku, to_location), qty)]
    raise ValueError(f"unknown movement kind: {kind!r}")


class Ledger:
    """Balances per (SKU, location) and the history of accepted movements."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._balances: dict[Key, Decimal] = {}
        self._history: list[Movement] = []

    def _check_balance(self, item: Item, location: str, delta: Decimal) -> Decimal:
        """Return the balance after ``delta``; refuse to go below zero without backorders."""
        current = self._balances.get((item.sku, location), Decimal(0))
        new = current + delta
        if delta < 0 and new < 0 and not item.allow_backorder:
            raise InsufficientStockError(item.sku, location, available=current, requested=-delta)
        return new

    def apply(self, movement: Movement) -> Decimal:
        """Record one movement and return the new balance at its (source) location.

        A rejected movement leaves every balance unchanged.
        """
        item, qty = _validate_movement(self.catalog, movement)
        location = movement.location.strip().upper()
        destination = movement.to_location.strip().upper() if movement.to_location else None
        deltas = _movement_deltas(movement.kind, item.sku, location, destination, qty)
        new_values: dict[Key, Decimal] = {}
        for (sku, where), delta in deltas:
            new_values[(sku, where)] = self._check_balance(item, where, delta)
        self._balances.update(new_values)
        self._history.append(
            replace(movement, sku=item.sku, quantity=qty, unit=item.unit, location=location, to_location=destination)
        )
        return self._balances[(item.sku, location)]

    def apply_all(self, movements: Iterable[Movement]) -> int:
        """Apply movements in order, all or nothing; returns how many were applied."""
        saved_balances = dict(self._balances)
        saved_length = len(self._history)
        count = 0
        try:
            for movement in movements:
                self.apply(movement)
                count += 1
        except Exception:
            self._balances = saved_balances
            del self._history[saved_length:]
            raise
        return count

    def balance(self, sku: str, location: Optional[str] = None) -> Decimal:
        """On-hand quantity of a SKU at one location, or across all locations."""
        item = self.catalog.get(sku)
        if location is not None:
            return self._balances.get((item.sku, location.strip().upper()), Decimal(0))
        total = Decimal(0)
        for (key_sku, _where), qty in self._balances.items():
            if key_sku == item.sku:
                total += qty
        return total

    def locations(self, sku: str) -> dict[str, Decimal]:
        """Non-zero balances of a SKU by location, sorted by location name."""
        item = self.catalog.get(sku)
        found = {
            where: qty for (key_sku, where), qty in self._balances.items() if key_sku == item.sku and qty != 0
        }
        return dict(sorted(found.items()))

    def history(self, sku: Optional[str] = None, kind: Optional[str] = None) -> list[Movement]:
        if kind is not None and kind not in MOVEMENT_KINDS:
            raise ValueError(f"unknown movement kind: {kind!r}")
        wanted = self.catalog.get(sku).sku if sku is not None else None
        return [
            movement
            for movement in self._history
            if (wanted is None or movement.sku == wanted) and (kind is None or movement.kind == kind)
        ]
