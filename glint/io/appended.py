"""Rows appended to a table (INSERT, COPY ... FROM): the table's source as it
was, followed by the appended Arrow tables.

The base source's fragments keep their indexes and their statistics, so the
chunks made of them (and the copies of those chunks cached on the device)
stay valid; the appended rows are fragments after them. Appended rows are
held in glint's canonical Arrow types (``canonical_type``), which a base read
from a file need not have (an ``int8`` Parquet column is an INTEGER column):
the few places that put fragments of both kinds into one Arrow table cast the
differing columns (``unify``).

>>> import pyarrow as pa
>>> from glint.columnar import types as T
>>> from glint.io.fragments import ArrowSource
>>> types = {"a": T.INTEGER, "s": T.VARCHAR}
>>> src = AppendedSource.of(ArrowSource(pa.table({"a": pa.array([1, 2], pa.int8()), "s": ["x", "y"]})),
...                         pa.table({"a": [3], "s": ["z"]}), types)
>>> src.num_rows, [f.rows for f in src.fragments]
(3, [2, 1])
>>> src.read_run([0, 1], ["a", "s"]).to_pydict()
{'a': [1, 2, 3], 's': ['x', 'y', 'z']}
>>> src = src.appended(pa.table({"a": [4], "s": [None]}))     # a small last part grows in place
>>> [f.rows for f in src.fragments], src.column_arrow("a").to_pylist()
([2, 2], [1, 2, 3, 4])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from glint.columnar import types as T
from glint.io.fragments import ARROW_FRAGMENT_ROWS, Fragment

COALESCE_ROWS = 1 << 16  # a last appended part smaller than this absorbs the next append


def canonical_type(t: T.DataType) -> pa.DataType:
    """The Arrow type appended rows of a glint column type are held in."""
    return pa.large_string() if t.is_string else T.to_arrow(t)


def conform(data: pa.Table, types: dict[str, T.DataType]) -> pa.Table:
    """``data`` (columns in the table's order) in the canonical types.

    >>> conform(pa.table({"a": pa.array([1], pa.int64())}), {"a": T.INTEGER}).schema.types
    [DataType(int32)]
    """
    names = list(types)
    cols = []
    for name, col in zip(names, data.columns):
        want = canonical_type(types[name])
        cols.append(col if col.type == want else col.cast(want))
    return pa.Table.from_arrays(cols, names=names)


def unify(tables: list[pa.Table], types: dict[str, T.DataType]) -> list[pa.Table]:
    """The tables with each column in one Arrow type (the canonical one where
    they differ), so that they concatenate."""
    if len(tables) < 2 or all(t.schema.equals(tables[0].schema) for t in tables[1:]):
        return tables
    out = []
    for t in tables:
        cols = []
        for name, col in zip(t.column_names, t.columns):
            first = tables[0].schema.field(name).type
            same = all(x.schema.field(name).type == first for x in tables)
            want = first if same else canonical_type(types[name])
            cols.append(col if col.type == want else col.cast(want))
        out.append(pa.Table.from_arrays(cols, names=t.column_names))
    return out


@dataclass(frozen=True)
class Appended:
    """What an append changed (Table.append): the (chunk size, chunk index)
    of the chunks whose rows changed, and the fragments that grew."""

    chunks: frozenset
    fragments: frozenset


def drop_stale(memory, table, changed: Appended) -> None:
    """Drops the cached copies an append made stale: device chunks keyed
    ("table", uid, chunk size, chunk index, column) and host-tier pieces
    keyed ("table", uid, fragments, first row, end row, column)."""

    def stale(k) -> bool:
        if k[0] != "table" or k[1] != table.uid:
            return False
        if isinstance(k[2], tuple):
            return bool(changed.fragments.intersection(k[2]))
        return (k[2], k[3]) in changed.chunks

    memory.cache_drop(stale)
    host = getattr(memory, "host", None)
    if host is not None:
        host.drop(stale)


class AppendedSource:
    """``base``'s fragments, then those of ``parts`` (Arrow tables in the
    canonical types, cut into fragments of ARROW_FRAGMENT_ROWS rows)."""

    def __init__(self, base, parts: tuple[pa.Table, ...], types: dict[str, T.DataType]):
        self.base = base
        self.parts = parts
        self.types = types
        self.schema = base.schema
        self.num_rows = base.num_rows + sum(p.num_rows for p in parts)
        nb = len(base.fragments)
        self._n_base = nb if base.num_rows else 0
        self.fragments = list(base.fragments[: self._n_base])
        self._where: list[tuple[int, int]] = []  # appended fragment -> (part, first row)
        for pi, p in enumerate(parts):
            for s in range(0, p.num_rows, ARROW_FRAGMENT_ROWS):
                self._where.append((pi, s))
                self.fragments.append(Fragment(min(ARROW_FRAGMENT_ROWS, p.num_rows - s)))
        if not self.fragments:
            self.fragments = [Fragment(0)]
        if not self._n_base or hasattr(base, "column_arrow"):
            # only when every row is in memory (Table's statistics check for it)
            self.column_arrow = self._column_arrow

    @staticmethod
    def of(src, data: pa.Table, types: dict[str, T.DataType]) -> AppendedSource:
        """``src`` with the rows of ``data`` appended."""
        if isinstance(src, AppendedSource):
            return src.appended(data)
        return AppendedSource(src, (conform(data, types),), types)

    def appended(self, data: pa.Table) -> AppendedSource:
        data = conform(data, self.types)
        parts = list(self.parts)
        if parts and parts[-1].num_rows < COALESCE_ROWS:
            # many small INSERTs would make as many one-row fragments: the last part grows instead
            parts[-1] = pa.concat_tables([parts[-1], data]).combine_chunks()
        else:
            parts.append(data)
        return AppendedSource(self.base, tuple(parts), self.types)

    # ------------------------------------------------------------ reading
    def _tail(self, i: int, columns: Sequence[str]) -> pa.Table:
        pi, start = self._where[i - self._n_base]
        return self.parts[pi].select(list(columns)).slice(start, self.fragments[i].rows)

    def read(self, fragments, columns: Sequence[str], parallel: bool = True) -> list[pa.Table]:
        fragments = list(fragments)
        base = [i for i in fragments if i < self._n_base]
        got = dict(zip(base, self.base.read(base, columns, parallel))) if base else {}
        return [got[i] if i < self._n_base else self._tail(i, columns) for i in fragments]

    def read_run(self, fragments: Sequence[int], columns: Sequence[str]) -> pa.Table:
        """Consecutive fragments' rows as one table. A run of the base's
        fragments is the base's own read (a Parquet source's fast path may
        give DECIMALs as unscaled integers); a run that crosses into the
        appended rows reads the base's fragments one by one (decoded values)
        and casts to one type per column."""
        base = [i for i in fragments if i < self._n_base]
        tail = [self._tail(i, columns) for i in fragments if i >= self._n_base]
        if not tail:
            return self.base.read_run(base, columns)
        parts = (self.base.read(base, columns, parallel=False) if base else []) + tail
        if len(parts) == 1:
            return parts[0]
        return pa.concat_tables(unify(parts, {c: self.types[c] for c in columns}))

    def _column_arrow(self, name: str) -> pa.ChunkedArray:
        """A column's values over all rows (for statistics)."""
        arrays = ([self.base.column_arrow(name)] if self._n_base else []) + [p.column(name) for p in self.parts]
        types = {a.type for a in arrays}
        want = arrays[0].type if len(types) == 1 else canonical_type(self.types[name])
        return pa.chunked_array([c for a in arrays for c in (a if a.type == want else a.cast(want)).chunks], type=want)

    def bytes_of(self, fragments, columns) -> int:
        base = [i for i in fragments if i < self._n_base]
        return self.base.bytes_of(base, columns) if base else 0
