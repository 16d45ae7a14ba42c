"""An inventory ledger: catalog, stock movements, reservations, pricing and reports."""
from .catalog import Catalog, Item, load_catalog, normalize_sku
from .errors import (
    DuplicateSKUError,
    InsufficientStockError,
    InvalidSKUError,
    LedgerError,
    ParseError,
    PricingError,
    ReservationError,
    UnitError,
    UnknownSKUError,
)
from .parsing import parse_line, parse_records
from .pricing import Discount, invoice_totals, parse_discount, price_line
from .reports import low_stock, stock_report_csv, stock_rows, to_csv, valuation
from .reservations import Reservation, ReservationBook
from .stock import Ledger, Movement
from .units import convert, format_money, parse_money, round_money, to_decimal

__version__ = "0.4.0"

__all__ = [
    "Catalog",
    "Discount",
    "DuplicateSKUError",
    "InsufficientStockError",
    "InvalidSKUError",
    "Item",
    "Ledger",
    "LedgerError",
    "Movement",
    "ParseError",
    "PricingError",
    "Reservation",
    "ReservationBook",
    "ReservationError",
    "UnitError",
    "UnknownSKUError",
    "convert",
    "format_money",
    "invoice_totals",
    "load_catalog",
    "low_stock",
    "normalize_sku",
    "parse_discount",
    "parse_line",
    "parse_money",
    "parse_records",
    "price_line",
    "round_money",
    "stock_report_csv",
    "stock_rows",
    "to_csv",
    "to_decimal",
    "valuation",
]
