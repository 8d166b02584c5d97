"""What a table's source is made of: *fragments*, the units it reads at once
(Parquet row groups; slices of an in-memory Arrow table), each with its row
count and, where the file has them, per-column min/max statistics in glint's
value representation (:func:`to_internal`); and the *chunks* a table is
scanned in, runs of consecutive fragments' rows.

>>> src = ArrowSource(pa.table({"a": [1, 2, 3]}), fragment_rows=2)
>>> [f.rows for f in src.fragments], src.read_run([0, 1], ["a"]).num_rows
([2, 1], 3)
"""

from __future__ import annotations

import datetime as _dt
import decimal
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from glint.columnar import types as T

ARROW_FRAGMENT_ROWS = 1 << 20  # in-memory tables are cut into fragments of this many rows


@dataclass(frozen=True, slots=True)
class Fragment:
    """A unit a source reads at once: a Parquet row group, a slice of an Arrow table.
    ``stats``: column -> (min, max, null count) in glint's value representation
    (DECIMAL scaled ints, DATE days), for the columns the file has statistics for."""

    rows: int
    stats: dict | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """Consecutive rows of a table: pieces (fragment index, first row, end row).
    ``part``: some of chunk ``index``'s pieces only, the others ruled out by
    their fragments' statistics (glint.exec.scan): cached apart from the
    whole chunk."""

    index: int
    pieces: tuple[tuple[int, int, int], ...]
    rows: int
    part: bool = False


class ArrowSource:
    """An in-memory Arrow table as fragments of ARROW_FRAGMENT_ROWS rows."""

    def __init__(self, tbl: pa.Table, fragment_rows: int = ARROW_FRAGMENT_ROWS):
        self.table = tbl
        self.schema = tbl.schema
        self.num_rows = tbl.num_rows
        self.fragment_rows = fragment_rows
        n = tbl.num_rows
        self.fragments = [Fragment(min(fragment_rows, n - s)) for s in range(0, n, fragment_rows)] or [Fragment(0)]

    def read(self, fragments: Sequence[int], columns: Sequence[str], parallel: bool = True) -> list[pa.Table]:
        sub = self.table.select(list(columns))
        return [sub.slice(i * self.fragment_rows, self.fragments[i].rows) for i in fragments]

    def read_run(self, fragments: Sequence[int], columns: Sequence[str]) -> pa.Table:
        """Consecutive fragments' rows as one table (zero-copy)."""
        start = fragments[0] * self.fragment_rows
        rows = sum(self.fragments[i].rows for i in fragments)
        return self.table.select(list(columns)).slice(start, rows)

    def column_arrow(self, name: str) -> pa.ChunkedArray:
        return self.table.column(name)

    def bytes_of(self, fragments, columns) -> int:
        return 0  # nothing to read from a file


_EPOCH = _dt.date(1970, 1, 1)
_EPOCH_DT = _dt.datetime(1970, 1, 1)


def to_internal(v, dtype: T.DataType):
    """A Python value (from Parquet statistics or pyarrow) in glint's literal
    representation: DECIMAL as a scaled int, DATE as days since 1970,
    TIMESTAMP as microseconds since 1970."""
    if v is None:
        return None
    if dtype.is_decimal:
        if isinstance(v, decimal.Decimal):
            return int(v.scaleb(dtype.scale))
        return None
    if dtype.kind in ("DATE", "TIMESTAMP") and isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)  # already days / microseconds
    if dtype.kind == "DATE":
        if isinstance(v, _dt.datetime):
            v = v.date()
        return (v - _EPOCH).days if isinstance(v, _dt.date) else None
    if dtype.kind == "TIMESTAMP":
        if hasattr(v, "value") and hasattr(v, "nanosecond"):  # pandas.Timestamp: nanoseconds
            ns = int(v.value)
            return abs(ns) // 1000 * (1 if ns >= 0 else -1)
        if isinstance(v, _dt.datetime) and v.tzinfo is None:
            return (v - _EPOCH_DT) // _dt.timedelta(microseconds=1)
        return None
    if dtype.is_string:
        return v if isinstance(v, str) else (v.decode("utf-8", "replace") if isinstance(v, bytes) else None)
    if dtype.kind == "DOUBLE":
        return float(v) if isinstance(v, (int, float)) and v == v else None  # NaN bounds say nothing
    if dtype.kind in ("INTEGER", "BIGINT", "HUGEINT"):
        return int(v) if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else None
    if dtype.kind == "BOOLEAN":
        return bool(v) if isinstance(v, (bool, np.bool_)) else None
    return None
