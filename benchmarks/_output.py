"""What a benchmark shows and keeps: result rows as a table, declared one column at a time,
and the results as JSON under ``benchmarks/out/``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.table import Table

OUT = Path(__file__).parent / "out"


@dataclass(frozen=True)
class Column:
    """A table column: its header, the row key it shows and how a value is written."""

    header: str
    key: str
    cell: Callable[[Any], str] = str


def rows_table(title: str, columns: Sequence[Column], rows: Iterable[Mapping[str, Any]]) -> Table:
    table = Table(*(c.header for c in columns), title=title)
    for row in rows:
        table.add_row(*(c.cell(row[c.key]) for c in columns))
    return table


def save(name: str, results: Any) -> Path:
    """``results`` as ``benchmarks/out/NAME-<UTC time>.json``; returns the file's path."""
    OUT.mkdir(exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    path = OUT / f"{name}-{stamp}.json"
    path.write_text(json.dumps(results, indent=1))
    return path
