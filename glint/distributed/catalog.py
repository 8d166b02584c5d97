"""Which rows of each table a rank holds.

A table is registered with a partitioning:

- ``range``: each rank reads a contiguous share of the rows. With at least as
  many row groups (Parquet) as ranks, whole row groups in contiguous runs,
  balanced by rows; with fewer, row ranges cut through row groups (each rank
  then decodes the row groups it shares and keeps its slice). An Arrow table
  is sliced by rows.
- ``hash(key)``: the ranks read their range shares, then shuffle the rows on
  the key once, at load time (the paper's tables pre-partitioned on their
  join keys); joins and aggregates on that key need no exchange.
- ``replicated``: every rank holds every row (small dimension tables: a
  join against them needs no exchange).

>>> assign([10], 3)
[[(0, 0, 3)], [(0, 3, 6)], [(0, 6, 10)]]
>>> assign([5, 5, 5, 5, 0, 5], 2)
[[(0, 0, 5), (1, 0, 5)], [(2, 0, 5), (3, 0, 5), (5, 0, 5)]]
>>> assign([4], 1), assign([0], 2)
([[(0, 0, 4)]], [[], []])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa

from glint.io.fragments import Fragment

KINDS = ("range", "hash", "replicated")


@dataclass(frozen=True, slots=True)
class TablePartitioning:
    kind: str  # range | hash | replicated
    key: str | None = None  # the column of a hash partitioning

    def __repr__(self) -> str:
        return f"hash({self.key})" if self.kind == "hash" else self.kind


def assign(fragment_rows: Sequence[int], ranks: int) -> list[list[tuple[int, int, int]]]:
    """Each rank's pieces (fragment, first row, end row): contiguous shares of
    about total / ranks rows."""
    total = sum(fragment_rows)
    out: list[list[tuple[int, int, int]]] = [[] for _ in range(ranks)]
    if total == 0:
        return out
    if sum(1 for r in fragment_rows if r) >= ranks:
        # whole fragments: each to the rank its middle row falls to
        acc = 0
        for i, r in enumerate(fragment_rows):
            if r:
                out[min(ranks - 1, int((acc + r / 2) * ranks / total))].append((i, 0, r))
                acc += r
        return out
    bounds = [total * k // ranks for k in range(ranks + 1)]
    acc = 0
    for i, r in enumerate(fragment_rows):
        for k in range(ranks):
            lo, hi = max(bounds[k], acc), min(bounds[k + 1], acc + r)
            if lo < hi:
                out[k].append((i, lo - acc, hi - acc))
        acc += r
    return out


class PartitionSource:
    """Some rows of a source (ParquetSource or ArrowSource): its pieces
    (fragment, first row, end row), consecutive in the source, each a
    fragment here. A piece of a fragment keeps the fragment's min/max
    statistics (bounds of a superset still rule chunks out safely)."""

    def __init__(self, src, pieces: list[tuple[int, int, int]]):
        self.src = src
        self.pieces = list(pieces)
        self.schema = src.schema
        self.num_rows = sum(e - s for _, s, e in self.pieces)
        self.fragments = [Fragment(e - s, src.fragments[f].stats) for f, s, e in self.pieces] or [Fragment(0)]
        # every piece a whole fragment of the source: decoded as the source's own (below)
        self.whole = bool(self.pieces) and all(s == 0 and e == src.fragments[f].rows for f, s, e in self.pieces)

    def _empty(self, columns) -> pa.Table:
        return self.schema.empty_table().select(list(columns))

    def read(self, fragments, columns: Sequence[str], parallel: bool = True) -> list[pa.Table]:
        if not self.pieces:
            return [self._empty(columns) for _ in fragments]
        src = [self.pieces[i][0] for i in fragments]
        tables = self.src.read(src, columns, parallel)
        return [t.slice(self.pieces[i][1], self.pieces[i][2] - self.pieces[i][1]) for t, i in zip(tables, fragments)]

    def read_run(self, fragments: Sequence[int], columns: Sequence[str]) -> pa.Table:
        """Consecutive pieces' rows as one table."""
        if not self.pieces:
            return self._empty(columns)
        t = self.src.read_run([self.pieces[i][0] for i in fragments], columns)
        rows = sum(self.pieces[i][2] - self.pieces[i][1] for i in fragments)
        return t.slice(self.pieces[fragments[0]][1], rows)

    def bytes_of(self, fragments, columns) -> int:
        if not self.pieces:
            return 0
        return self.src.bytes_of(sorted({self.pieces[i][0] for i in fragments}), columns)

    # ------------------------------------------------ decoding on the device
    # A share of whole row groups is decoded as the file's own row groups are: from their
    # pages on the scan's device (glint.io.chunk_reader; on a GPU from the bytes as stored),
    # not by pyarrow on the host. A share cut through row groups is read by pyarrow.
    def _theirs(self, fragments) -> list[int]:
        return [self.pieces[i][0] for i in fragments]

    def device_decodable(self, name: str, dtype) -> bool:
        f = getattr(self.src, "device_decodable", None)
        return f is not None and self.whole and f(name, dtype)

    def raw_decodable(self, name: str, dtype, strings: bool = True) -> bool:
        f = getattr(self.src, "raw_decodable", None)
        return f is not None and self.whole and f(name, dtype, strings)

    def has_raw(self, fragment: int, name: str, dtype) -> bool:
        return self.whole and self.src.has_raw(self.pieces[fragment][0], name, dtype)

    def plan_device(self, fragment: int, name: str, dtype, raw: bool = False):
        return self.src.plan_device(self.pieces[fragment][0], name, dtype, raw)

    def raw_chunk(self, fragment: int, name: str, dtype):
        if not self.whole or not hasattr(self.src, "raw_chunk"):
            return None
        return self.src.raw_chunk(self.pieces[fragment][0], name, dtype)

    def raw_chunks(self, fragments, name: str, dtype) -> list:
        return self.src.raw_chunks(self._theirs(fragments), name, dtype)

    def raw_set(self, fragments, name: str, dtype):
        f = getattr(self.src, "raw_set", None)
        return f(self._theirs(fragments), name, dtype) if f is not None and self.whole else None

    def describe_fragments(self, fragments) -> str:
        f = getattr(self.src, "describe_fragments", None)
        return f(self._theirs(fragments)) if f is not None else "a rank's share of a table"


class Projection:
    """A source seen through some of its columns (``read_parquet(columns=...)``)."""

    def __init__(self, src, columns: Sequence[str]):
        missing = [c for c in columns if c not in src.schema.names]
        if missing:
            from glint.errors import GlintIOError

            raise GlintIOError(f"no column {missing[0]!r} (columns: {', '.join(src.schema.names)})")
        self.src = src
        self.columns = list(columns)
        self.schema = pa.schema([src.schema.field(c) for c in columns])
        self.num_rows = src.num_rows
        self.fragments = src.fragments

    def read(self, fragments, columns, parallel: bool = True):
        return self.src.read(fragments, columns, parallel)

    def read_run(self, fragments, columns):
        return self.src.read_run(fragments, columns)

    def bytes_of(self, fragments, columns) -> int:
        return self.src.bytes_of(fragments, columns)

    def __getattr__(self, name: str):
        """The source's way of decoding its fragments on the device
        (device_decodable, raw_decodable, has_raw, plan_device, raw_chunk,
        raw_chunks, raw_set, describe_fragments): the same fragments."""
        if name in _DEVICE_DECODING:
            return getattr(self.src, name)
        raise AttributeError(name)


_DEVICE_DECODING = frozenset(
    (
        "device_decodable",
        "raw_decodable",
        "has_raw",
        "plan_device",
        "raw_chunk",
        "raw_chunks",
        "raw_set",
        "describe_fragments",
    )
)
