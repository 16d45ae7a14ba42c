"""Reservations: stock promised to orders but not yet issued."""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Optional

from .errors import ReservationError
from .stock import DEFAULT_LOCATION, Ledger, Movement
from .units import Number, to_decimal


@dataclass(frozen=True)
class Reservation:
    id: str
    order: str
    sku: str
    quantity: Decimal
    location: str


def _require_positive(value: Number, what: str) -> Decimal:
    try:
        qty = to_decimal(value)
    except ValueError:
        raise ValueError(f"{what} is not a number: {value!r}") from None
    if qty <= 0:
        raise ValueError(f"{what} must be positive")
    return qty


class ReservationBook:
    """Reservations against one ledger, numbered ``R0001``, ``R0002``, ..."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self._reservations: dict[str, Reservation] = {}
        self._next_number = 1

    def reserved(self, sku: str, location: Optional[str] = None) -> Decimal:
        """Total quantity of a SKU held by open reservations."""
        key = self.ledger.catalog.get(sku).sku
        where = location.strip().upper() if location is not None else None
        total = Decimal(0)
        for reservation in self._reservations.values():
            if reservation.sku == key and (where is None or reservation.location == where):
                total += reservation.quantity
        return total

    def available(self, sku: str, location: Optional[str] = None) -> Decimal:
        """On-hand stock not promised to any order (negative when oversold on backorder)."""
        return self.ledger.balance(sku, location) - self.reserved(sku, location)

    def reserve(self, order: str, sku: str, quantity: Number, location: str = DEFAULT_LOCATION) -> Reservation:
        """Hold stock for an order at one location.

        Raises ReservationError when the free stock is too small and the item does not
        allow backorders.
        """
        if not order or not order.strip():
            raise ValueError("order reference is required")
        item = self.ledger.catalog.get(sku)
        qty = _require_positive(quantity, "reservation quantity")
        where = location.strip().upper()
        free = self.available(item.sku, where)
        if qty > free and not item.allow_backorder:
            raise ReservationError(
                f"cannot reserve {qty} {item.unit} of {item.sku} at {where}: only {max(free, Decimal(0))} available"
            )
        reservation = Reservation(f"R{self._next_number:04d}", order.strip(), item.sku, qty, where)
        self._next_number += 1
        self._reservations[reservation.id] = reservation
        return reservation

    def _allocation_plan(self, sku: str, quantity: Decimal) -> list[tuple[str, Decimal]]:
        """Split a quantity over locations, the location with most free stock first."""
        candidates = []
        for location in self.ledger.locations(sku):
            free = self.available(sku, location)
            if free > 0:
                candidates.append((location, free))
        candidates.sort(key=lambda candidate: (-candidate[1], candidate[0]))
        plan = []
        remaining = quantity
        for location, free in candidates:
            take = min(free, remaining)
            plan.append((location, take))
            remaining -= take
            if remaining == 0:
                return plan
        raise ReservationError(f"cannot allocate {quantity} of {sku}: short by {remaining}")

    def allocate(self, order: str, sku: str, quantity: Number) -> list[Reservation]:
        """Reserve a quantity for an order across as few locations as possible."""
        item = self.ledger.catalog.get(sku)
        qty = _require_positive(quantity, "allocation quantity")
        plan = self._allocation_plan(item.sku, qty)
        return [self.reserve(order, item.sku, part, location) for location, part in plan]

    def release(self, reservation_id: str) -> Reservation:
        try:
            return self._reservations.pop(reservation_id)
        except KeyError:
            raise ReservationError(f"unknown reservation: {reservation_id}") from None

    def fulfil(self, reservation_id: str, reference: str = "") -> Decimal:
        """Issue the reserved stock and close the reservation; returns the new balance.

        If the ledger refuses the issue the reservation stays open.
        """
        reservation = self.release(reservation_id)
        movement = Movement(
            "issue",
            reservation.sku,
            reservation.quantity,
            location=reservation.location,
            reference=reference or reservation.order,
        )
        try:
            return self.ledger.apply(movement)
        except Exception:
            self._reservations[reservation.id] = reservation
            raise
