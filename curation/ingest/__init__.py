"""Trajectory import: parsing agent run files of several formats into plain records.

Plain Python on purpose (no Django): the service that writes rows calls ``iter_records`` and
decides what to store; see ``curation.ingest.formats`` for the contract.
"""

from .formats import (
    FORMATS,
    ParsedStep,
    ParsedTrajectory,
    RecordError,
    UnknownFormatError,
    detect_format,
    iter_records,
)

__all__ = [
    "FORMATS",
    "ParsedStep",
    "ParsedTrajectory",
    "RecordError",
    "UnknownFormatError",
    "detect_format",
    "iter_records",
]
