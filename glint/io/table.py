"""Tables held by a connection: schema, row count, statistics, and the data
as a sequence of chunks (a table is a sequence of batches).

A table's source is split into *fragments* (Parquet row groups; slices of an
in-memory Arrow table), each with its row count and, where the file has them,
per-column min/max statistics. For a given chunk size, consecutive fragments
are grouped into fixed *chunks* of at most that many rows (a fragment larger
than a chunk is cut into several). A query scans chunks; chunks whose
statistics rule out the query's filter are skipped without being read.

Nothing is read when a table is registered: statistics for the optimizer come
from the file footers (min/max, NULL counts) and from a small sample (distinct
counts) the first time a plan asks for them.

>>> t = Table.from_arrow("t", pa.table({"a": [1, 2, 2, None], "b": ["x", "y", "z", "w"]}))
>>> t.num_rows, [c.rows for c in t.chunks(3)]
(4, [3, 1])
>>> s = t.stats("a"); s.ndv, s.null_count, s.min, s.max
(2, 1, 1.0, 2.0)
>>> t.read_chunk(t.chunks(3)[1], ["a"])["a"].data.tolist()
[0]
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import GlintError, NotSupported
from glint.io.appended import Appended, AppendedSource, canonical_type, conform, unify
from glint.io.file_tables import HIDDEN_PREFIX
from glint.io.fragments import ArrowSource, Chunk, Fragment, to_internal

_uids = itertools.count(1)
SAMPLE_ROWS = 200_000  # rows read to estimate a column's distinct count
STATS_FRAGMENTS = 256  # fragments whose footer statistics a column's estimates look at


@dataclass(frozen=True, slots=True)
class ColumnStats:
    ndv: int
    null_count: int
    min: float | None = None
    max: float | None = None


class Table:
    """A named table: schema, row count, fragments and statistics. Column data
    is read per chunk by the executor's scans (see glint.io.chunk_reader)."""

    __slots__ = (
        "name",
        "schema",
        "num_rows",
        "source",
        "uid",
        "rules",
        "_src",
        "_unsupported",
        "_stats",
        "_chunk_stats",
        "_pruned",
        "_layouts",
        "_lock",
        "exact_decode",
        "_fragment_rows",
    )

    def __init__(
        self,
        name: str,
        src,
        source: str = "memory",
        rules: ColumnRules | None = None,
        types: dict[str, T.DataType] | None = None,
    ):
        self.name = name
        self.rules = rules or ColumnRules()
        self.num_rows = src.num_rows
        self.source = source
        self.uid = next(_uids)
        self._src = src
        # columns whose device decoding is checked chunk by chunk (a query found
        # a chunk with more pages than the page tables held: see glint.io.chunk_upload)
        self.exact_decode: set[str] = set()
        self.schema: dict[str, T.DataType] = {}  # column name -> type, in table order
        self._unsupported: dict[str, str] = {}
        seen = set()
        for field in src.schema:
            if field.name.lower() in seen:
                raise NotSupported(f"duplicate column name {field.name!r} in table {name!r}")
            seen.add(field.name.lower())
            if types is not None:
                # glint's own types (a table created in SQL): a HUGEINT or DECIMAL(38) column is
                # stored as decimal128, which a file's column of that type is not read as
                self.schema[field.name] = types[field.name]
                continue
            try:
                self.schema[field.name] = T.from_arrow(field.type)
            except NotSupported as e:
                # kept in the schema so the table loads; a query that reads it is refused
                self.schema[field.name] = T.VARCHAR
                # a table made for a file named in FROM has a hidden name: the message names the file
                where = source if name.startswith("__glint") and source != "memory" else name
                self._unsupported[field.name] = f"column {where}.{field.name}: {e.construct}"
        self._stats: dict[str, ColumnStats] = {}
        self._chunk_stats: dict[tuple, tuple | None] = {}  # chunk_stats' answers
        self._pruned: dict = {}  # (chunk rows, a scan's pruning conjuncts) -> pruned_chunks' answer
        self._layouts: dict[int, list[Chunk]] = {}
        self._lock = threading.Lock()
        self._fragment_rows = None  # each fragment's rows as an array (raw_set's check)

    @staticmethod
    def from_arrow(
        name: str,
        tbl: pa.Table,
        source: str = "memory",
        rules: ColumnRules | None = None,
        types: dict[str, T.DataType] | None = None,
    ) -> Table:
        return Table(name, ArrowSource(tbl), source, rules, types)

    @staticmethod
    def from_source(name: str, src, source: str) -> Table:
        """From a source with .schema, .num_rows, .fragments and .read(fragments, columns)."""
        return Table(name, src, source)

    @property
    def fragments(self) -> list[Fragment]:
        return self._src.fragments

    def to_arrow(self) -> pa.Table:
        """Every row as one Arrow table, in the canonical types of
        glint.io.appended (DELETE and UPDATE rewrite it)."""
        columns = list(self.schema)
        self.check_readable(columns)
        if self.num_rows == 0:
            return pa.schema([(c, canonical_type(t)) for c, t in self.schema.items()]).empty_table()
        # fragment by fragment: decoded values (a Parquet source's runs may hold unscaled DECIMALs)
        parts = [p for p in self._src.read(list(range(len(self.fragments))), columns) if p.num_rows]
        return conform(pa.concat_tables(unify(parts, self.schema)) if len(parts) > 1 else parts[0], self.schema)

    def append(self, data: pa.Table) -> Appended:
        """Add the rows of ``data`` (the table's columns, in order, in glint's
        types) after the table's rows. Returns what changed: the (chunk size,
        chunk index) of every chunk laid out before whose rows changed, and
        the fragments that grew (the caller drops cached copies of them:
        glint.io.appended.drop_stale); the other chunks and fragments
        keep their rows. Statistics are recomputed when next asked for."""
        self.check_readable(list(self.schema))
        with self._lock:
            old, before = dict(self._layouts), [f.rows for f in self.fragments]
            self._src = AppendedSource.of(self._src, data, self.schema)
            self.num_rows = self._src.num_rows
            self._layouts = {}
            self._stats = {}
            self._chunk_stats = {}
            self._pruned = {}
        stale = []
        for rows, chunks in old.items():
            new = self.chunks(rows)
            stale += [(rows, c.index) for c in chunks if c.index >= len(new) or new[c.index] != c]
        grown = {i for i, n in enumerate(before) if i < len(self.fragments) and self.fragments[i].rows != n}
        return Appended(frozenset(stale), frozenset(grown))

    def check_readable(self, columns: Sequence[str]) -> None:
        for c in columns:
            if c in self._unsupported:
                raise NotSupported(self._unsupported[c])

    # ------------------------------------------------------------------ chunks
    def chunks(self, chunk_rows: int) -> list[Chunk]:
        """The table's chunks for this chunk size (the same every time it is asked)."""
        layout = self._layouts.get(chunk_rows)
        if layout is None:
            with self._lock:
                layout = self._layouts.get(chunk_rows)
                if layout is None:
                    layout = self._layouts[chunk_rows] = _layout(self.fragments, chunk_rows)
        return layout

    def pruned_chunks(self, chunk_rows: int, key, prune):
        """``prune(chunks)`` of this chunk size (a scan's chunks that its
        statistics do not rule out), kept under ``key`` (the scan's pruning
        conjuncts; None: not kept) until the table changes: a warm query
        asks on every run, and a chunk of 2**28 rows has thousands of
        fragments to test."""
        if key is not None:
            try:
                got = self._pruned.get((chunk_rows, key))
            except TypeError:  # a conjunct's value that does not hash
                key = None
            else:
                if got is not None:
                    return got
        layout = self.chunks(chunk_rows)
        out = prune(layout)
        if key is not None:
            with self._lock:
                # kept only while the layout it came from is the table's (rows
                # appended meanwhile by another session made a new one)
                if self._layouts.get(chunk_rows) is layout:
                    if len(self._pruned) >= 256:
                        self._pruned.clear()
                    self._pruned[(chunk_rows, key)] = out
        return out

    def chunk_stats(self, chunk: Chunk, column: str):
        """(min, max, null count) over the chunk's fragments, or None when a
        fragment has no statistics for the column; kept once found (a scan's
        pruning and its narrow uploads ask for every chunk of every run: about
        60 fragments a chunk of TPC-H's lineitem, 5 ms of a warm query's host
        time at SF 10 in chunks of 2**23 rows)."""
        # (a whole chunk's rows run from its first piece to its last; a part
        # of one may leave out any of the pieces between)
        if not chunk.pieces:
            key = None
        elif chunk.part:
            key = (chunk.pieces, column)
        else:
            key = (chunk.pieces[0], chunk.pieces[-1], column)
        found = self._chunk_stats.get(key, False) if key is not None else False
        if found is not False:
            return found
        out = self._fragments_stats(chunk, column)
        if key is not None:
            self._chunk_stats[key] = out
        return out

    def _fragments_stats(self, chunk: Chunk, column: str):
        lo = hi = None
        nulls = 0
        for f, _, _ in chunk.pieces:
            st = self.fragments[f].stats
            s = st.get(column) if st else None
            if s is None:
                return None
            mn, mx, nn = s
            nulls += nn
            if mn is not None:
                lo = mn if lo is None else min(lo, mn)
                hi = mx if hi is None else max(hi, mx)
        return lo, hi, nulls

    def read_chunk(self, chunk: Chunk, columns: Sequence[str], fragment_cache: dict | None = None) -> dict[str, Column]:
        """Host columns of one chunk. ``fragment_cache`` (fragment -> Arrow table)
        keeps a fragment that feeds several chunks from being decoded twice."""
        self.check_readable(columns)
        frags = sorted({f for f, _, _ in chunk.pieces})
        cache = fragment_cache if fragment_cache is not None else {}
        missing = [f for f in frags if f not in cache or not set(columns) <= set(cache[f].column_names)]
        if missing:
            for f, t in zip(missing, self._src.read(missing, columns)):
                if t.num_rows != self.fragments[f].rows:
                    raise GlintError(
                        f"table {self.name!r} changed on disk: a part has {t.num_rows} rows, "
                        f"expected {self.fragments[f].rows}"
                    )
                cache[f] = t
        parts = [cache[f].slice(s, e - s).select(list(columns)) for f, s, e in chunk.pieces]
        if len(parts) > 1:
            parts = [pa.concat_tables(unify(parts, self.schema))]
        return self.convert(parts[0], columns)

    def read_fragments(self, fragments: Sequence[int], columns: Sequence[str]) -> pa.Table:
        """Consecutive fragments' columns as one Arrow table, decoded on the
        calling thread (the scan calls this from its decoding threads)."""
        t = self._src.read_run(list(fragments), list(columns))
        rows = sum(self.fragments[f].rows for f in fragments)
        if t.num_rows != rows:
            raise GlintError(f"table {self.name!r} changed on disk: a part has {t.num_rows} rows, expected {rows}")
        return t

    def convert(self, data: pa.Table, columns: Sequence[str], contiguous: bool = True) -> dict[str, Column]:
        """Host columns from decoded Arrow data, in glint's types (strided
        views allowed with ``contiguous=False``: see Column.from_arrow)."""
        return {c: self._column(c, data.column(c), contiguous) for c in columns}

    def _column(self, name: str, arr, contiguous: bool) -> Column:
        """One column from Arrow; a value glint cannot hold names the column."""
        try:
            return Column.from_arrow(arr, self.schema[name], contiguous)
        except NotSupported as e:
            raise NotSupported(f"column {self.name}.{name}: {e.construct}") from None

    def convert_parts(self, data: pa.Table, columns: Sequence[str]) -> dict[str, list[Column]]:
        """Host columns from decoded Arrow data, one per Arrow chunk (row
        group), each over Arrow's own memory where its layout allows: for a
        caller that copies them anyway (the scan's staged upload, which then
        puts them together on the device, so that the host copies each byte
        once, into the pinned buffer)."""
        out = {}
        for c in columns:
            arr = data.column(c)
            chunks = [x for x in arr.chunks if len(x)] or [arr.chunk(0) if arr.num_chunks else pa.array([], arr.type)]
            out[c] = [self._column(c, x, False) for x in chunks]
        return out

    def held_on(self, device):
        """The table's glint.io.held.HeldSource when its rows are held as
        columns on ``device`` (a scan there takes its chunks as they are)."""
        from glint.io.held import HeldSource

        src = self._src
        return src if isinstance(src, HeldSource) and src.device == torch.device(device) else None

    def device_columns(self, columns: Sequence[str]) -> list[str]:
        """The columns whose Parquet pages glint decodes with torch on the
        scan's device (GLINT_PARQUET_DECODE=device; see
        glint.io.parquet_pages): none unless the table is Parquet files
        as registered (no rows appended or changed)."""
        src = self._src
        if not hasattr(src, "device_decodable"):
            return []
        return [c for c in columns if self.schema[c] is not None and src.device_decodable(c, self.schema[c])]

    def raw_columns(self, columns: Sequence[str], strings: bool = True) -> list[str]:
        """The device_columns that the scan's device decodes from their
        bytes as stored (flat numeric columns, with NULLs or without, snappy or
        uncompressed, PLAIN or dictionary pages: see
        glint.io.raw_chunks.raw_index and the source's raw_decodable),
        and the low-cardinality string columns unless ``strings`` is off
        (the raw_strings setting)."""
        src = self._src
        if not hasattr(src, "raw_decodable"):
            return []
        numeric = set(self.device_columns(columns))
        return [
            c
            for c in columns
            if (c in numeric or (self.schema[c] is not None and self.schema[c].is_string))
            and src.raw_decodable(c, self.schema[c], strings)
        ]

    def has_raw(self, fragment: int, column: str) -> bool:
        """Whether raw_chunk gives a chunk for this fragment's column (of
        the raw_columns)."""
        return self._src.has_raw(fragment, column, self.schema[column])

    def device_plan(self, fragment: int, column: str, raw: bool = False):
        """The host's part of decoding a column of one fragment from its
        Parquet pages (see device_columns and glint.io.parquet_pages;
        ``raw``: only the chunk's bytes where the device can do the rest)."""
        plan = self._src.plan_device(fragment, column, self.schema[column], raw)
        if plan.rows != self.fragments[fragment].rows:
            raise GlintError(
                f"table {self.name!r} changed on disk: a part has {plan.rows} rows, "
                f"expected {self.fragments[fragment].rows}"
            )
        return plan

    def raw_chunk(self, fragment: int, column: str):
        """A fragment's column as a glint.io.raw_chunks.RawChunk whose
        bytes are still in the file (nothing is read: the scan's staging
        reads them into its pinned buffers), or None where the device cannot
        decode the chunk from its bytes as stored (device_plan then)."""
        f = getattr(self._src, "raw_chunk", None)
        if f is None:
            return None
        chunk = f(fragment, column, self.schema[column])
        if chunk is not None and chunk.rows != self.fragments[fragment].rows:
            raise GlintError(
                f"table {self.name!r} changed on disk: a part has {chunk.rows} rows, "
                f"expected {self.fragments[fragment].rows}"
            )
        return chunk

    def describe_fragments(self, fragments: Sequence[int]) -> str:
        """Where some fragments' rows come from, for error messages."""
        f = getattr(self._src, "describe_fragments", None)
        return f(fragments) if f is not None else f"table {self.name!r}"

    def decode_device(
        self,
        plans,
        column: str,
        device,
        data=None,
        layout=None,
        exact: bool = True,
        dictionary=None,
        split: bool = True,
    ):
        """Column ``column`` of consecutive fragments from their plans (see
        device_plan), decoded on ``device`` (``data``: the plans' buffer,
        laid out by ``layout``, already there): (Column, err) where err is
        None or a device flag for glint.io.parquet_pages.check_decoded.
        Fragments whose files store the column in different physical types
        are decoded in runs of one type. ``exact``: see
        glint.io.raw_decode.decode_raw. ``dictionary``: a VARCHAR
        column's (its plans decode to codes into it: string_codes).
        ``split``: the snappy_split setting (see decode_raw)."""
        from glint.io.parquet_pages import decode_plans
        from glint.io.raw_chunks import RawChunk
        from glint.io.raw_decode import decode_raw

        def kind(p):
            return type(p), p.dtype

        if any(kind(p) != kind(plans[0]) for p in plans):
            runs, errs = [], []
            for i, p in enumerate(plans):
                if i == 0 or kind(p) != kind(plans[i - 1]):
                    runs.append([])
                runs[-1].append(p)
            cols = []
            for run in runs:
                c, e = self.decode_device(run, column, device, split=split)
                cols.append(c)
                errs.append(e)
            from glint.columnar.column import concat_columns

            errs = [e for e in errs if e is not None]
            return concat_columns(cols), (sum(errs) if errs else None)
        if isinstance(plans[0], RawChunk):
            data_t, valid, err = decode_raw(
                plans, device, data=data, layout=layout, column=self._label(column), exact=exact, split=split
            )
        else:
            data_t, valid, err = decode_plans(
                plans, device, data=data, layout=layout, column=self._label(column), valid_when_no_nulls=False
            )
        return self.device_column(column, data_t, valid, dictionary), err

    def _label(self, column: str) -> str:
        """The column as errors name it: ``table.column``, or only the column
        of a file read by read_parquet (its table's name is glint's own;
        the error names the file)."""
        return column if self.name.startswith(HIDDEN_PREFIX) else f"{self.name}.{column}"

    def device_column(self, column: str, values, valid=None, dictionary=None) -> Column:
        """Column ``column`` of values decoded from its pages (converted to
        its type's layout where the file stores them narrower or wider; a
        VARCHAR column's values are codes into ``dictionary``)."""
        import torch

        dtype = self.schema[column]
        if dtype.is_string:
            # Codes are clamped into the dictionary: the scan checks a
            # chunk's decoding flags only at the query's end (a page the
            # GPU could not decode as codes, rows its page tables had no room
            # for), and until then every code must be one the string
            # kernels may look up (a wrong code gives a wrong string, which
            # the re-run replaces; a code past the dictionary would read
            # past its offsets)
            values = values.clamp_(0, max(len(dictionary) - 1, 0))
            return Column(dtype, values, valid, dictionary)
        want = (
            torch.int64
            if dtype.is_decimal or dtype.kind == "BIGINT"
            else torch.float64
            if dtype.kind == "DOUBLE"
            else torch.int32
        )
        if values.dtype != want:
            values = values.to(want)
        return Column(dtype, values, valid)

    def raw_set(self, fragments: Sequence[int], column: str):
        """raw_chunks of these fragments as one
        glint.io.raw_chunks.RawSet (arrays, not an object per
        fragment), or None where the source cannot make one (see
        ParquetSource.raw_set): then raw_chunks."""
        f = getattr(self._src, "raw_set", None)
        out = None if f is None else f(fragments, column, self.schema[column])
        if out is not None:
            if self._fragment_rows is None:
                self._fragment_rows = np.array([fr.rows for fr in self.fragments], dtype=np.int64)
            want = self._fragment_rows[np.asarray(fragments, dtype=np.int64)]
            bad = np.flatnonzero(out.rows != want)
            if len(bad):
                i = int(bad[0])
                raise GlintError(
                    f"table {self.name!r} changed on disk: a part has {int(out.rows[i])} rows, expected {int(want[i])}"
                )
        return out

    def raw_chunks(self, fragments: Sequence[int], column: str) -> list:
        """raw_chunk of each of these fragments (None where the device
        cannot decode one as stored), in one call."""
        f = getattr(self._src, "raw_chunks", None)
        if f is None:
            return [self.raw_chunk(g, column) for g in fragments]
        out = f(fragments, column, self.schema[column])
        frags = self.fragments
        for g, chunk in zip(fragments, out):
            if chunk is not None and chunk.rows != frags[g].rows:
                raise GlintError(
                    f"table {self.name!r} changed on disk: a part has {chunk.rows} rows, expected {frags[g].rows}"
                )
        return out

    def read_bytes(self, chunk: Chunk, columns: Sequence[str]) -> int:
        """Bytes the source reads from its files for these columns of the chunk."""
        return self._src.bytes_of(sorted({f for f, _, _ in chunk.pieces}), columns)

    # ------------------------------------------------------------------ statistics
    def stats(self, name: str) -> ColumnStats:
        s = self._stats.get(name)
        if s is None:
            s = self._stats[name] = self._compute_stats(name)
        return s

    def start_stats(self, names: Sequence[str]) -> list:
        """Starts computing these columns' statistics on the statistics
        threads: (table, column, Future) for each not computed yet (see
        :func:`prefetch_stats`)."""
        todo = [n for n in dict.fromkeys(names) if n not in self._stats and n in self.schema]
        return [(self, n, _stats_pool().submit(self._compute_stats, n)) for n in todo]

    def _compute_stats(self, name: str) -> ColumnStats:
        self.check_readable([name])
        dtype = self.schema[name]
        if self.num_rows == 0:
            return ColumnStats(0, 0)
        lo = hi = None
        nulls = 0
        have_all = True
        # the footers' statistics of at most STATS_FRAGMENTS fragments, spread
        # evenly (with the first and the last): these are estimates for the
        # planner, and each fragment's costs ~6 us of Python under the GIL
        # (TPC-H SF 100's lineitem has 5,000 row groups: 0.1-0.2 s a query)
        frs = self.fragments
        step = max(1, -(-len(frs) // STATS_FRAGMENTS))
        picked = list(range(0, len(frs), step))
        if picked[-1] != len(frs) - 1:
            picked.append(len(frs) - 1)
        rows = 0
        for i in picked:
            fr = frs[i]
            s = fr.stats.get(name) if fr.stats else None
            if s is None:
                have_all = False
                break
            nulls += s[2]
            rows += fr.rows
            if s[0] is not None:
                lo = s[0] if lo is None else min(lo, s[0])
                hi = s[1] if hi is None else max(hi, s[1])
        if have_all and rows and len(picked) < len(frs):
            nulls = round(nulls * self.num_rows / rows)
        if not have_all and hasattr(self._src, "column_arrow"):
            arr = self._src.column_arrow(name)
            nulls = arr.null_count
            if not dtype.is_string and dtype.kind != "BOOLEAN" and arr.null_count < len(arr):
                if dtype.kind in ("DATE", "TIMESTAMP"):  # as integers: Python's datetime stops at 9999
                    arr = pa.chunked_array(
                        [
                            Column.from_arrow(c, dtype)
                            .to_arrow()
                            .view(pa.int64() if dtype.kind == "TIMESTAMP" else pa.int32())
                            for c in arr.chunks
                        ],
                        pa.int64() if dtype.kind == "TIMESTAMP" else pa.int32(),
                    )
                mm = pc.min_max(arr)
                lo, hi = to_internal(mm["min"].as_py(), dtype), to_internal(mm["max"].as_py(), dtype)
            have_all = True
        ndv, sample_nulls, s_lo, s_hi = self._sample(name)
        if not have_all:
            nulls = int(round(sample_nulls * self.num_rows))
            lo, hi = s_lo, s_hi
        num = lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None  # noqa: E731
        if dtype.is_string or dtype.kind == "BOOLEAN":
            lo = hi = None
        return ColumnStats(
            max(1, min(ndv, self.num_rows - nulls)) if self.num_rows > nulls else 0, nulls, num(lo), num(hi)
        )

    def _sample(self, name: str):
        """(distinct count estimate, NULL fraction, min, max) from up to
        SAMPLE_ROWS rows taken from the first, middle and last fragments."""
        frs = self.fragments
        picks = sorted({0, len(frs) // 2, len(frs) - 1})
        per = max(1, SAMPLE_ROWS // len(picks))
        parts = unify(self._src.read(picks, [name]), self.schema)
        arrays = [t.column(name).slice(0, per) for t in parts]
        sample = (
            pa.chunked_array([c for a in arrays for c in a.chunks], type=arrays[0].type)
            if arrays
            else pa.chunked_array([], self._src.schema.field(name).type)
        )
        n = len(sample)
        if n == 0:
            return 0, 0.0, None, None
        lo = hi = None
        if self.schema[name].is_string:
            nulls = sample.null_count
            m = n - nulls
            if m == 0:
                return 0, nulls / n, None, None
            counts = _string_counts(sample)
            d, f1 = int(counts.size), int((counts == 1).sum())
        else:
            col = Column.from_arrow(sample, self.schema[name])
            valid = col.valid
            nulls = 0 if valid is None else int((~valid).sum())
            data = col.data if valid is None else col.data[valid]
            m = data.shape[0]
            if m == 0:
                return 0, nulls / n, None, None
            if data.dtype != torch.bool and data.dim() == 1:
                lo, hi = data.min().item(), data.max().item()
            d, f1 = _distinct_and_singles(data, lo, hi)
        total = self.num_rows * (1 - nulls / n)
        if total > m:
            # Haas & Stokes' Duj1 estimator: d / (1 - (1 - m/total) * f1/m), f1 the
            # values seen once (all distinct in the sample: a key, total values;
            # linear scaling overestimated TPC-H foreign keys up to 12x)
            d = int(d / (1 - (1 - m / total) * f1 / m))
        return d, nulls / n, lo, hi


def _string_counts(sample: pa.ChunkedArray) -> np.ndarray:
    """How often each distinct string of a sample occurs (NULLs left out).
    Dictionary-encoded: the row groups' dictionaries unified (each string
    once), then a count per entry, without decoding or hashing the strings
    again; else Arrow's hash table over the strings (C++, one pass).

    >>> a = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, None]), pa.array(["x", "x", "y"]))
    >>> b = pa.DictionaryArray.from_arrays(pa.array([0, 0]), pa.array(["y"]))
    >>> sorted(_string_counts(pa.chunked_array([a, b])).tolist()), sorted(_string_counts(pa.chunked_array([["x", None, "z"]])).tolist())
    ([2, 3], [1, 1])
    """
    if pa.types.is_dictionary(sample.type):
        u = sample.unify_dictionaries()
        idx = [pc.drop_null(c.indices).to_numpy(zero_copy_only=False) for c in u.chunks]
        counts = np.bincount(np.concatenate(idx).astype(np.int64, copy=False)) if idx else np.zeros(0, np.int64)
        return counts[counts > 0]
    return pc.value_counts(pc.drop_null(sample)).field("counts").to_numpy(zero_copy_only=False)


def _distinct_and_singles(data: torch.Tensor, lo, hi) -> tuple[int, int]:
    """(the distinct values, the values seen once) of a sample's values
    (``lo`` / ``hi``: their min and max, or None): by a count per value of
    the range when the integers span little more than the sample (dates,
    codes, most keys of a sample: one pass), else by sorting
    (torch.unique: the planner's statistics threads spent most of their
    time there).

    >>> _distinct_and_singles(torch.tensor([5, 3, 5, 9]), 3, 9), _distinct_and_singles(torch.tensor([0.5, 0.5]), None, None)
    ((3, 2), (1, 0))
    """
    if (
        isinstance(lo, int)
        and isinstance(hi, int)
        and not data.is_floating_point()
        and hi - lo < 4 * data.shape[0] + 4096
    ):
        counts = torch.bincount(data.long() - lo)
        return int((counts > 0).sum()), int((counts == 1).sum())
    counts = (
        torch.unique(data, dim=0, return_counts=True) if data.dim() == 2 else torch.unique(data, return_counts=True)
    )[1]
    return int(counts.numel()), int((counts == 1).sum())


_STATS_POOL = None


def _stats_pool():
    """Threads that compute columns' statistics side by side. Their own: a
    sample's Parquet read waits for the decoding pool, which must not be
    filled with tasks that wait for it."""
    global _STATS_POOL
    if _STATS_POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _STATS_POOL = ThreadPoolExecutor(
            max_workers=min(8, max(2, os.cpu_count() or 2)), thread_name_prefix="glint-stats"
        )
    return _STATS_POOL


def prefetch_stats(wanted) -> None:
    """Computes the statistics of the (table, columns) pairs side by side (a
    cold query's planner asks for a dozen columns' samples, each a Parquet
    read and a hash table, one after another), so that Table.stats finds
    them. Errors are left for Table.stats to raise where it is asked."""
    started = [x for t, names in wanted for x in t.start_stats(names)]
    for t, n, f in started:
        try:
            t._stats.setdefault(n, f.result())
        except Exception:  # noqa: BLE001 -- raised again by stats() when it matters
            pass


@dataclass(frozen=True, slots=True)
class ColumnRules:
    """What a table created in SQL checks on every insert: the columns that
    must not be NULL, and each column's DEFAULT (a constant expression;
    NULL when absent)."""

    not_null: frozenset = frozenset()
    defaults: tuple = ()  # ((column, Expr), ...)

    def default(self, column: str):
        return dict(self.defaults).get(column)


def _layout(fragments: list[Fragment], chunk_rows: int) -> list[Chunk]:
    """Group fragments into chunks of at most chunk_rows rows. Fragments
    without rows belong to no chunk, and a table without rows has no chunks
    (its scan yields one empty batch of its columns' types: ScanExec)."""
    chunks: list[Chunk] = []
    pieces: list[tuple[int, int, int]] = []
    rows = 0

    def flush():
        nonlocal pieces, rows
        if pieces:
            chunks.append(Chunk(len(chunks), tuple(pieces), rows))
        pieces, rows = [], 0

    for i, fr in enumerate(fragments):
        if fr.rows == 0:
            continue
        if fr.rows > chunk_rows:
            flush()
            for s in range(0, fr.rows, chunk_rows):
                e = min(fr.rows, s + chunk_rows)
                chunks.append(Chunk(len(chunks), ((i, s, e),), e - s))
            continue
        if rows + fr.rows > chunk_rows:
            flush()
        pieces.append((i, 0, fr.rows))
        rows += fr.rows
    flush()
    return chunks
