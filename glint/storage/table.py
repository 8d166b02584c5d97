"""Tables held by a connection, with the statistics the optimizer uses.

A table keeps its columns on the host as loaded and caches a copy per device
the first time a query reads a column there (warm runs keep data resident).

>>> t = Table.from_arrow("t", pa.table({"a": [1, 2, 2, None]}))
>>> t.num_rows, t.stats("a").ndv, t.stats("a").null_count
(4, 2, 1)
"""
from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import torch

from .. import types as T
from ..errors import NotSupported
from .column import Column


@dataclass(frozen=True, slots=True)
class ColumnStats:
    ndv: int
    null_count: int
    min: float | None = None
    max: float | None = None


class Table:
    __slots__ = ("name", "schema", "host", "num_rows", "_device_cache", "_stats", "source")

    def __init__(self, name: str, schema: dict[str, T.DataType], host: dict[str, Column], num_rows: int,
                 source: str = "memory"):
        self.name = name
        self.schema = schema          # column name -> DataType, in table order
        self.host = host              # column name -> host Column
        self.num_rows = num_rows
        self.source = source
        self._device_cache: dict[tuple[str, str], Column] = {}
        self._stats: dict[str, ColumnStats] = {}

    @staticmethod
    def from_arrow(name: str, tbl: pa.Table, source: str = "memory") -> "Table":
        schema, host = {}, {}
        seen = set()
        for field, col in zip(tbl.schema, tbl.columns):
            if field.name.lower() in seen:
                raise NotSupported(f"duplicate column name {field.name!r} in table {name!r}")
            seen.add(field.name.lower())
            dt = T.from_arrow(field.type)
            schema[field.name] = dt
            host[field.name] = Column.from_arrow(col, dt)
        return Table(name, schema, host, tbl.num_rows, source)

    def column(self, name: str, device: torch.device) -> Column:
        """The column on `device`, copied there once and then kept."""
        if device.type == "cpu":
            return self.host[name]
        key = (name, str(device))
        c = self._device_cache.get(key)
        if c is None:
            c = self.host[name].to(device)
            self._device_cache[key] = c
        return c

    def evict(self, device: torch.device | None = None) -> None:
        """Drop device copies (all devices when device is None)."""
        for k in list(self._device_cache):
            if device is None or k[1] == str(device):
                del self._device_cache[k]

    def stats(self, name: str) -> ColumnStats:
        s = self._stats.get(name)
        if s is None:
            s = self._stats[name] = _compute_stats(self.host[name])
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
    # distinct counts on a sample keep loading fast; scaled up when the sample is all-distinct
    n = data.shape[0]
    sample = data if n <= 200_000 else data[torch.randint(0, n, (200_000,), generator=torch.Generator().manual_seed(0))]
    d = int(torch.unique(sample).numel())
    if n > sample.shape[0]:
        frac = d / sample.shape[0]
        d = int(n * frac) if frac > 0.9 else max(d, int(d * (1 + frac * (n / sample.shape[0] - 1))))
    return ColumnStats(max(1, min(d, n)), nulls, float(data.min()), float(data.max()))
