"""A table whose rows are held as columns on the device: a rank's share of a
table that was hash-partitioned at load (glint.distributed.rank). The rows
arrive on the device from the load's exchange, and they stay there: no copy
to the host and back, no decoding at the first query.

The rows are held in *pieces* of the connection's chunk size, each made of
fragments of at most ARROW_FRAGMENT_ROWS rows, so that a scan at that chunk
size finds each chunk whole in one piece and takes it as views (no copy).
Each fragment has min / max statistics of the numeric columns, computed on
the device when the table is made, so that scans skip chunks and the planner
has bounds as it has for Parquet. VARCHAR columns are held as Parquet gives
them: a column of few distinct strings as codes into one sorted dictionary
(codes compare and group as the strings do), any other one as each piece's
strings in row order.

The bytes are held under a reservation of the device's memory manager,
released when the source is dropped with its table; a table that does not fit
beside what the device holds stays on the host instead (the caller's
choice: :func:`hold`).

>>> import torch, pyarrow as pa
>>> from glint.columnar import types as T
>>> from glint.columnar.column import Column
>>> from glint.runtime.memory import MemoryManager
>>> cols = {"k": Column.from_arrow(pa.array([3, 1, 2, 5, 4]), T.BIGINT), "s": Column.from_arrow(pa.array(list("baabb")).dictionary_encode())}
>>> src = hold(cols, {"k": T.BIGINT, "s": T.VARCHAR}, 5, piece_rows=2, memory=MemoryManager("cpu", 1 << 30))
>>> [f.rows for f in src.fragments], src.fragments[1].stats["k"]
([2, 2, 1], (2, 5, 0))
>>> src.read([1], ["k", "s"])[0].to_pydict()
{'k': [2, 5], 's': ['a', 'b']}
>>> c = src.columns([(2, 0, 1)], ["s"])["s"]
>>> c.dictionary.sorted_unique, c.dictionary.to_pylist(), c.data.tolist()
(True, ['a', 'b'], [1])
"""

from __future__ import annotations

import bisect
import weakref
from collections.abc import Sequence

import pyarrow as pa
import torch

from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary, concat_columns, sorted_dictionary
from glint.io.fragments import ARROW_FRAGMENT_ROWS, Fragment


def hold(columns: dict[str, Column], types: dict[str, T.DataType], rows: int, piece_rows: int, memory):
    """A HeldSource of ``columns`` (each ``rows`` long, on one device; the
    table's columns in order, of glint ``types``), or None when their bytes
    do not fit in ``memory`` (the device's memory manager) beside what it
    holds. ``piece_rows``: the chunk size scans will ask for."""
    piece_rows = max(1, int(piece_rows))
    held = {name: _held_column(c) for name, c in columns.items()}
    nbytes = sum(c.nbytes() for c in held.values())
    reservation = memory.reservation("held table")
    if not reservation.grow(nbytes):
        reservation.release()
        return None
    return HeldSource(held, types, rows, piece_rows, reservation)


def _held_column(c: Column) -> Column:
    """A VARCHAR column of few distinct strings (at most half as many
    dictionary entries as rows: TPC-H's flags and modes) as codes into one
    sorted dictionary of its distinct strings; any other column as it is."""
    if c.dtype.is_string and len(c) and len(c.dictionary) <= len(c) // 2:
        return sorted_dictionary(c)
    return c


class HeldSource:
    """A table source (fragments, ``read``) over columns held on one device;
    :meth:`columns` gives a chunk's columns there as views."""

    def __init__(
        self, columns: dict[str, Column], types: dict[str, T.DataType], rows: int, piece_rows: int, reservation
    ):
        self.types = dict(types)
        self.schema = pa.schema([(name, T.to_arrow(t)) for name, t in types.items()])
        self.num_rows = rows
        self.device = next(iter(columns.values())).device if columns else torch.device("cpu")
        self._starts = list(range(0, rows, piece_rows)) or [0]  # each piece's first row
        # VARCHAR columns whose codes are their rows (each row its own string, in order)
        own = {name for name, c in columns.items() if c.dtype.is_string and _codes_are_rows(c)}
        self._pieces = [
            {name: _piece(c, s, min(rows, s + piece_rows), name in own) for name, c in columns.items()}
            for s in self._starts
        ]
        frag_rows = min(ARROW_FRAGMENT_ROWS, piece_rows)
        bounds = [(s, min(e, rows)) for p in self._starts for s, e in _cuts(p, min(rows, p + piece_rows), frag_rows)]
        self._frag_starts = [s for s, _ in bounds] or [0]
        self.fragments = _fragments(columns, bounds) if bounds else [Fragment(0)]
        self._reservation = reservation
        weakref.finalize(self, reservation.release)

    def nbytes(self) -> int:
        return self._reservation.bytes

    # ------------------------------------------------------------ scans
    def columns(self, pieces: Sequence[tuple[int, int, int]], names: Sequence[str]) -> dict[str, Column]:
        """The rows of a chunk (its pieces: fragment, first row, end row) as
        columns on the device: views of one piece where the chunk's rows lie
        in one, else the rows put together. The pieces are one run of rows,
        or (a chunk read in part: glint.io.fragments.Chunk) several."""
        runs: list[list[int]] = []  # [start, stop) in the table's rows
        for f, s, e in pieces:
            a, b = self._frag_starts[f] + s, self._frag_starts[f] + e
            if runs and runs[-1][1] == a:
                runs[-1][1] = b
            else:
                runs.append([a, b])
        out = {}
        for name in names:
            parts = []
            for start, stop in runs:
                first = bisect.bisect_right(self._starts, start) - 1
                last = bisect.bisect_right(self._starts, max(start, stop - 1)) - 1
                parts += [
                    _slice(self._pieces[i][name], max(start, self._starts[i]) - self._starts[i], stop - self._starts[i])
                    for i in range(first, last + 1)
                ]
            out[name] = parts[0] if len(parts) == 1 else concat_columns(parts)
        return out

    # ------------------------------------------------------------ reading (host)
    def read(self, fragments: Sequence[int], columns: Sequence[str], parallel: bool = True) -> list[pa.Table]:
        """Fragments' rows as host Arrow tables (statistics' samples, a
        DELETE's rewrite, a scan on another device)."""
        out = []
        for f in fragments:
            cols = self.columns([(f, 0, self.fragments[f].rows)], columns) if self.fragments[f].rows else None
            arrays = [
                cols[c].to_arrow() if cols is not None else pa.array([], self.schema.field(c).type) for c in columns
            ]
            out.append(pa.Table.from_arrays(arrays, names=list(columns)))
        return out

    def read_run(self, fragments: Sequence[int], columns: Sequence[str]) -> pa.Table:
        parts = self.read(fragments, columns)
        return parts[0] if len(parts) == 1 else pa.concat_tables(parts)

    def bytes_of(self, fragments, columns) -> int:
        return 0  # nothing to read from a file


def _cuts(start: int, stop: int, size: int) -> list[tuple[int, int]]:
    return [(s, min(stop, s + size)) for s in range(start, stop, size)]


def _codes_are_rows(c: Column) -> bool:
    return len(c.dictionary) == len(c) and torch.equal(
        c.data, torch.arange(len(c), dtype=c.data.dtype, device=c.device)
    )


def _piece(c: Column, start: int, stop: int, own: bool) -> Column:
    """Rows start..stop-1 of a held column, for holding: a VARCHAR column
    that is not held as codes into a shared sorted dictionary keeps only its
    rows' strings, in row order (``own``: the column's codes are its rows,
    so the piece's dictionary is a slice of the column's, no byte copied)."""
    p = _slice(c, start, stop)
    if not c.dtype.is_string or c.dictionary.sorted_unique or len(p.dictionary) <= len(p):
        return p
    if own:
        d = c.dictionary
        codes = torch.arange(stop - start, dtype=c.data.dtype, device=c.device)
        return Column(c.dtype, codes, p.valid, Dictionary(d.offsets[start : stop + 1], d.data))
    return p.compact(force=True)


def _slice(c: Column, start: int, stop: int) -> Column:
    return Column(c.dtype, c.data[start:stop], None if c.valid is None else c.valid[start:stop], c.dictionary)


def _fragments(columns: dict[str, Column], bounds: list[tuple[int, int]]) -> list[Fragment]:
    """Fragments of the given row bounds, with (min, max, NULL count) of the
    integer-valued columns (glint's value representation: DECIMAL scaled,
    DATE days), computed on the device with one copy to the host a column."""
    stats: list[dict] = [{} for _ in bounds]
    starts = torch.tensor([s for s, _ in bounds], dtype=torch.int64)
    ends = torch.tensor([e for _, e in bounds], dtype=torch.int64)
    for name, c in columns.items():
        got = _bounds(c, starts, ends)
        if got is None:
            continue
        for st, v in zip(stats, got):
            st[name] = v
    return [Fragment(e - s, st) for (s, e), st in zip(bounds, stats)]


def _bounds(c: Column, starts: torch.Tensor, ends: torch.Tensor) -> list[tuple] | None:
    """Per fragment (min, max, NULL count) of a column, or None for the
    types whose bounds are not kept: VARCHAR (statistics without bounds
    would say the column is all NULL), DOUBLE (NaN), BOOLEAN, wide values."""
    if c.is_wide or c.dtype.kind not in _BOUNDED or c.data.dtype.is_floating_point or c.data.dtype == torch.bool:
        return None
    dev = c.device
    seg = torch.repeat_interleave(
        torch.arange(len(starts), device=dev), (ends - starts).to(dev), output_size=int(ends[-1] - starts[0])
    )
    nulls = (
        torch.zeros(len(starts), dtype=torch.int64, device=dev)
        if c.valid is None
        else torch.zeros(len(starts), dtype=torch.int64, device=dev).index_add_(0, seg, (~c.valid).long())
    )
    v = c.data
    big, small = torch.iinfo(v.dtype).max, torch.iinfo(v.dtype).min
    lo_v, hi_v = (v, v) if c.valid is None else (torch.where(c.valid, v, big), torch.where(c.valid, v, small))
    lo = torch.full((len(starts),), big, dtype=v.dtype, device=dev).scatter_reduce_(0, seg, lo_v, "amin")
    hi = torch.full((len(starts),), small, dtype=v.dtype, device=dev).scatter_reduce_(0, seg, hi_v, "amax")
    rows = (ends - starts).tolist()
    out = []
    for a, b, n, r in zip(lo.tolist(), hi.tolist(), nulls.tolist(), rows):
        out.append((None, None, n) if n == r else (a, b, n))
    return out


# the types whose fragments keep min / max (their values as the planner reads them)
_BOUNDED = frozenset({"INTEGER", "BIGINT", "DATE", "TIMESTAMP", "DECIMAL"})
