"""Tables held by a connection, with the statistics the optimizer uses.

A table knows its schema and row count up front; a column's data is read from
its source (Arrow in memory, or Parquet on disk) the first time a query needs
it, converted once to a host column, and copied once to each device that reads
it (warm runs keep data resident). Statistics are computed per column on
first use.

>>> t = Table.from_arrow("t", pa.table({"a": [1, 2, 2, None], "b": ["x", "y", "z", "w"]}))
>>> t.num_rows, t.loaded_columns()
(4, [])
>>> t.stats("a").ndv, t.stats("a").null_count, t.loaded_columns()
(2, 1, ['a'])
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import pyarrow as pa
import torch

from .. import types as T
from ..errors import GlintError, NotSupported
from .column import Column


@dataclass(frozen=True, slots=True)
class ColumnStats:
    ndv: int
    null_count: int
    min: float | None = None
    max: float | None = None


class Table:
    __slots__ = ("name", "schema", "num_rows", "source", "_reader", "_unsupported", "_host",
                 "_device_cache", "_stats")

    def __init__(self, name: str, arrow_schema: pa.Schema, num_rows: int,
                 reader: Callable[[Sequence[str]], pa.Table], source: str = "memory"):
        self.name = name
        self.num_rows = num_rows
        self.source = source
        self._reader = reader
        self.schema: dict[str, T.DataType] = {}       # column name -> type, in table order
        self._unsupported: dict[str, str] = {}
        seen = set()
        for field in arrow_schema:
            if field.name.lower() in seen:
                raise NotSupported(f"duplicate column name {field.name!r} in table {name!r}")
            seen.add(field.name.lower())
            try:
                self.schema[field.name] = T.from_arrow(field.type)
            except NotSupported as e:
                # kept in the schema so the table loads; a query that reads it is refused
                self.schema[field.name] = T.VARCHAR
                self._unsupported[field.name] = f"column {name}.{field.name}: {e.construct}"
        self._host: dict[str, Column] = {}
        self._device_cache: dict[tuple[str, str], Column] = {}
        self._stats: dict[str, ColumnStats] = {}

    @staticmethod
    def from_arrow(name: str, tbl: pa.Table, source: str = "memory") -> "Table":
        return Table(name, tbl.schema, tbl.num_rows, lambda cols: tbl.select(list(cols)), source)

    @staticmethod
    def from_source(name: str, src, source: str) -> "Table":
        """From a lazy source with .schema, .num_rows and .read(columns)."""
        return Table(name, src.schema, src.num_rows, src.read, source)

    def check_readable(self, columns: Sequence[str]) -> None:
        for c in columns:
            if c in self._unsupported:
                raise NotSupported(self._unsupported[c])

    def loaded_columns(self) -> list[str]:
        on_device = {c for c, _ in self._device_cache}
        return [c for c in self.schema if c in self._host or c in on_device]

    def load(self, columns: Sequence[str]) -> None:
        """Read the columns that are not on the host yet, in one pass over the source."""
        on_device = {c for c, _ in self._device_cache}
        missing = [c for c in columns if c not in self._host and c not in on_device]
        if not missing:
            return
        self.check_readable(missing)
        data = self._reader(missing)
        if data.num_rows != self.num_rows:
            raise GlintError(f"table {self.name!r} changed on disk: {data.num_rows} rows, expected {self.num_rows}")
        for c in missing:
            self._host[c] = Column.from_arrow(data.column(c), self.schema[c])

    def host_column(self, name: str) -> Column:
        if name not in self._host:
            self.load([name])
        return self._host[name]

    def column(self, name: str, device: torch.device) -> Column:
        """The column on `device`, read and copied there once and then kept.
        Once on a GPU, the host copy is dropped (the source can be re-read)."""
        if device.type == "cpu":
            return self.host_column(name)
        key = (name, str(device))
        c = self._device_cache.get(key)
        if c is None:
            c = self.host_column(name).to(device)
            self._device_cache[key] = c
            self._host.pop(name, None)
        return c

    def _any_copy(self, name: str) -> Column:
        if name in self._host:
            return self._host[name]
        for (col, _), c in self._device_cache.items():
            if col == name:
                return c
        return self.host_column(name)

    def device_bytes(self, device: torch.device | None = None) -> int:
        total = 0
        for (_, dev), c in self._device_cache.items():
            if device is None or dev == str(device):
                total += c.data.numel() * c.data.element_size()
                if c.valid is not None:
                    total += c.valid.numel()
        return total

    def evict(self, device: torch.device | None = None) -> None:
        """Drop device copies (all devices when device is None)."""
        for k in list(self._device_cache):
            if device is None or k[1] == str(device):
                del self._device_cache[k]

    def stats(self, name: str) -> ColumnStats:
        s = self._stats.get(name)
        if s is None:
            s = self._stats[name] = _compute_stats(self._any_copy(name))
        return s


def _compute_stats(c: Column) -> ColumnStats:
    valid = c.valid
    nulls = 0 if valid is None else int((~valid).sum())
    data = c.data if valid is None else c.data[valid]
    if data.numel() == 0:
        return ColumnStats(0, nulls)
    if c.dtype.is_string:
        return ColumnStats(min(len(c.dictionary), data.shape[0]), nulls)
    if data.dtype == torch.bool:
        return ColumnStats(int(torch.unique(data).numel()), nulls, 0, 1)
    # distinct counts on a sample keep statistics cheap: repeated positions are
    # dropped (a sample without replacement), and Haas & Stokes' Duj1 estimator
    # scales the sample's count up, d / (1 - (1 - r/n) * f1 / r) with f1 the
    # values seen once (linear scaling overestimated foreign keys up to 12x)
    n = data.shape[0]
    d = int(torch.unique(data).numel()) if n <= 200_000 else 0
    if n > 200_000:
        pick = torch.unique(torch.randint(0, n, (200_000,), generator=torch.Generator().manual_seed(0)))
        counts = torch.unique(data[pick.to(data.device)], return_counts=True)[1]
        r, f1 = pick.numel(), int((counts == 1).sum())
        d = int(counts.numel() / (1 - (1 - r / n) * f1 / r))
    return ColumnStats(max(1, min(d, n)), nulls, float(data.min()), float(data.max()))
