"""Exceptions raised by the ledger.

Every error derives from :class:`LedgerError`; most also derive from the built-in
exception a caller would naturally expect (``ValueError`` for bad input, ``KeyError``
for a missing SKU), so ``except ValueError`` keeps working.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Optional


class LedgerError(Exception):
    """Base class of all ledger errors."""


class UnitError(LedgerError, ValueError):
    """An unknown unit, or a conversion between incompatible units."""


class InvalidSKUError(LedgerError, ValueError):
    """A SKU that does not look like ``AB-123``."""


class DuplicateSKUError(LedgerError, ValueError):
    """A SKU added twice to the same catalog."""


class UnknownSKUError(LedgerError, KeyError):
    """A well-formed SKU that is not in the catalog."""

    def __str__(self) -> str:
        # KeyError.__str__ would show the repr of the argument, quotes included.
        if not self.args:
            return "unknown SKU"
        return f"unknown SKU: {self.args[0]}"


class InsufficientStockError(LedgerError):
    """A movement would take a location's stock below zero."""

    def __init__(self, sku: str, location: str, available: Decimal, requested: Decimal) -> None:
        self.sku = sku
        self.location = location
        self.available = available
        self.requested = requested
        super().__init__(
            f"insufficient stock of {sku} at {location}: "
            f"requested {requested}, available {available}"
        )


class ReservationError(LedgerError):
    """A reservation that cannot be made, found or fulfilled."""


class PricingError(LedgerError, ValueError):
    """A malformed discount, an unknown tax category or an empty invoice."""


class ParseError(LedgerError, ValueError):
    """A movement record that cannot be parsed; knows its line number when it has one."""

    def __init__(self, message: str, lineno: Optional[int] = None) -> None:
        self.message = message
        self.lineno = lineno
        super().__init__(f"line {lineno}: {message}" if lineno is not None else message)
