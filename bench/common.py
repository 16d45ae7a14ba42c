"""Helpers shared by the benchmark scripts: timing, percentiles, the table and the JSON line.

Every script prints a readable table of figures and, as its very last line of standard output,
one JSON object of the same figures; progress notes go to standard error.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def parser(description: str) -> argparse.ArgumentParser:
    """An argument parser with the `--quick` flag every benchmark takes."""
    parsed = argparse.ArgumentParser(description=description)
    parsed.add_argument(
        "--quick", action="store_true", help="fewer repetitions; finishes within a minute"
    )
    return parsed


def note(message: str) -> None:
    """A progress line on standard error (standard output is kept for the figures)."""
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100), interpolated between the closest ranks."""
    if not values:
        return math.nan
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


@contextmanager
def stopwatch() -> Iterator[list[float]]:
    """`with stopwatch() as took:` ... `took[0]` is the block's wall-clock time in seconds."""
    took: list[float] = []
    started = time.perf_counter()
    try:
        yield took
    finally:
        took.append(time.perf_counter() - started)


def cpu_seconds() -> float:
    """CPU time (user + system) of this process and of its children that have been waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@contextmanager
def measured() -> Iterator[dict[str, float]]:
    """`with measured() as spent:` ... `spent["wall"]`, `spent["cpu"]` in seconds; the CPU time
    counts the block's child processes too, and moves far less than wall time on a busy
    machine."""
    spent: dict[str, float] = {}
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        yield spent
    finally:
        spent["wall"] = time.perf_counter() - wall
        spent["cpu"] = cpu_seconds() - cpu


def print_table(title: str, rows: Sequence[tuple[str, object]]) -> None:
    """A two-column table: label, value (None prints as "-")."""
    width = max((len(label) for label, _ in rows), default=0)
    print(title)
    print("-" * len(title))
    for label, value in rows:
        shown = "-" if value is None else value
        print(f"  {label:<{width}}  {shown}")
    print()


def print_json_line(figures: dict) -> None:
    """The script's last line: one JSON object (NaN becomes null)."""
    clean = {
        key: (None if isinstance(value, float) and math.isnan(value) else value)
        for key, value in figures.items()
    }
    print(json.dumps(clean, ensure_ascii=False), flush=True)
