"""Parquet files as a table's source, read lazily row group by row group
(:class:`ParquetSource`), or whole into one Arrow table (:func:`load_parquet`).

Every failure a user can cause (a file that is not Parquet, files whose
columns differ) raises :class:`~glint.errors.GlintIOError` naming the file
and the reason, never a raw pyarrow exception.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from glint.columnar import types as T
from glint.errors import GlintError, GlintIOError
from glint.io.file_lists import (
    PARQUET_SUFFIXES,
    concat_file_tables,
    read_files,
    resolve_files,
    short_path,
)
from glint.io.fragments import Fragment, to_internal
from glint.io.parquet_pages import plan_column_chunk
from glint.io.raw_chunks import RawSet, raw_index, raw_readable, read_raw
from glint.runtime.priority_pool import PriorityPool
from glint.runtime.settings import Settings


class ParquetSource:
    """Parquet files read lazily, row group by row group: the schema, row
    counts and min/max statistics come from the footers now; column data is
    read when a query scans it. Each row group is a fragment of the table.

    >>> import tempfile, pyarrow.parquet as pq
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), d + "/t.parquet", row_group_size=2)
    >>> src = ParquetSource(d)
    >>> src.num_rows, src.schema.names, [f.rows for f in src.fragments]
    (3, ['a', 'b'], [2, 1])
    >>> src.fragments[1].stats["a"], src.read([1], ["b"])[0].column("b").to_pylist()
    ((3, 3, 0), ['z'])

    ``settings``: the connection's (the decoding threads' count, the raw
    index's blocks); default: the defaults.
    """

    def __init__(self, path: str | os.PathLike, settings: Settings | None = None):
        self.path = str(path)
        self._settings = settings if settings is not None else Settings()
        self.files = resolve_files(path, PARQUET_SUFFIXES, "Parquet")
        try:
            metas = [pq.read_metadata(f) for f in self.files]
            # (from the footer already parsed: pq.read_schema parses it again,
            # ~0.1 s for lineitem's 5,000 row groups at SF 100, per connection)
            self.schema = metas[0].schema.to_arrow_schema()
        except (pa.ArrowException, OSError, ValueError) as e:
            reason = str(e).strip() or type(e).__name__
            if "magic bytes" in reason.lower() or "file size is 0" in reason.lower():
                reason = f"not a Parquet file ({reason})"
            raise GlintIOError(f"Cannot read Parquet file {self.path!r}: {reason}") from None
        for f, m in zip(self.files, metas):
            names = m.schema.to_arrow_schema().names
            if names != self.schema.names:
                raise GlintIOError(
                    f"Parquet file {short_path(f)!r} has columns {names}, "
                    f"but {short_path(self.files[0])!r} has {self.schema.names}"
                )
        self.metas = metas
        self.num_rows = sum(m.num_rows for m in metas)
        types = {}
        for field in self.schema:
            try:
                types[field.name] = T.from_arrow(field.type)
            except GlintError:
                types[field.name] = None
        self._types = types
        self._to_internal = to_internal
        # column chunks' statistics and sizes are read from the footers when
        # first asked for (a scan's pruning, the planner's estimates): turning
        # every row group's statistics into Python values at registration cost
        # ~0.1 s a table at SF 10, on every fresh connection
        self._col_index: dict[str, int] = {}
        first = next((m for m in metas if m.num_row_groups), None)
        if first is not None:
            rg = first.row_group(0)
            self._col_index = {rg.column(ci).path_in_schema: ci for ci in range(rg.num_columns)}
        self._stat_cache: dict = {}
        self._size_cache: dict = {}
        self._raw_bound_kinds: dict = {}  # (file, column) -> whether its min/max are glint's values as stored
        self.fragments = []
        self._where = []  # fragment -> (file index, row group)
        for fi, m in enumerate(metas):
            for g in range(m.num_row_groups):
                i = len(self._where)
                self._where.append((fi, g))
                self.fragments.append(Fragment(m.row_group(g).num_rows, _RowGroupStats(self, i)))
        self._dict_columns = self._dictionary_columns(metas)
        self._raw: dict[int, tuple] = {}  # file index -> (raw footer, columns it may read)
        self._device_ok: dict[str, bool] = {}  # column -> decodable from its pages by torch
        self._raw_cols: dict[str, bool] = {}  # column -> decoded as stored by the device (raw_decodable)
        self._raw_lock = threading.Lock()
        self._leaves: dict = {}  # (file index, column) -> (leaf, raw index), see _leaf_index
        self._raw_names: dict = {}  # file index -> (its path, its raw chunks' error prefix)
        self._where_np = None  # _where as two arrays (file index, row group), see raw_set

    def _dictionary_columns(self, metas) -> set[str]:
        """String columns with few distinct values, read as dictionaries
        (per-row-group codes + entries): those whose first row group has a
        dictionary page of at most one entry per 8 rows. Columns whose writer
        made a large dictionary, or fell back to plain pages once it grew
        (comments, names, addresses), are read as plain strings: pyarrow would
        hash every value into a dictionary again, for nothing."""
        from glint.io.parquet_meta import dictionary_entries

        out = set()
        fi, m = next(((i, m) for i, m in enumerate(metas) if m.num_row_groups), (None, None))
        for field in self.schema:
            if not _is_stringish(field.type):
                continue
            if m is None:
                out.add(field.name)
                continue
            rg = m.row_group(0)
            ci = self._col_index.get(field.name)
            if ci is None:
                continue
            cc = rg.column(ci)
            if cc.has_dictionary_page and cc.dictionary_page_offset is not None:
                entries = dictionary_entries(str(self.files[fi]), cc.dictionary_page_offset)
                if entries is not None and entries * 8 <= max(rg.num_rows, 1):
                    out.add(field.name)
        return out

    def _raw_ok(self, fi: int, columns: Sequence[str]) -> bool:
        footer, ok, _ = self._raw_footer(fi)
        return footer is not None and all(c in ok for c in columns)

    def _raw_footer(self, fi: int):
        """(the file's rewritten footer, the columns a read may take through
        it, their Arrow types that way), see glint.io.parquet_meta: DECIMALs stored as INT32 / INT64
        come back as their unscaled integers and strings as plain ``string``
        columns; every other column it may read only where its type does not
        change."""
        got = self._raw.get(fi)
        if got is not None:
            return got
        from glint.io.parquet_meta import raw_footer

        with self._raw_lock:
            got = self._raw.get(fi)
            if got is None:
                raw = raw_footer(str(self.files[fi]))
                ok: frozenset = frozenset()
                types: dict = {}
                if raw is not None:
                    try:
                        patched = raw.metadata.schema.to_arrow_schema()
                    except (pa.ArrowException, ValueError):
                        raw = None
                    else:
                        ok = frozenset(
                            f.name
                            for f in self.schema
                            if f.name in patched.names
                            and _raw_compatible(f, patched.field(f.name), f.name in raw.raw_decimals)
                        )
                        types = {c: patched.field(c).type for c in ok}
                got = self._raw[fi] = (raw, ok, types)
        return got

    def read(self, fragments, columns: Sequence[str], parallel: bool = True) -> list[pa.Table]:
        """One Arrow table per fragment (row group), decoded in parallel
        (``parallel=False``: on the calling thread, for callers that are
        already one of many decoding threads)."""
        if len(fragments) <= 1 or not parallel:
            return [self._read_groups([i], columns, parallel) for i in fragments]
        return list(
            decode_pool(self._settings.decode_threads).map(lambda i: self._read_groups([i], columns, False), fragments)
        )

    def read_run(self, fragments: Sequence[int], columns: Sequence[str]) -> pa.Table:
        """Several fragments' rows as one table, decoded on the calling thread:
        row groups of one file in one call (far less overhead per row than a
        call per row group: 4 row groups of 114K rows per call read 5x faster
        than one on the device host). This is the scan's read: DECIMAL
        columns stored as integers come back as their unscaled integers, and
        strings as plain ``string`` (see :meth:`_raw_footer`); the table's
        column conversion (Column.from_arrow) takes both as they are."""
        runs: list[list[int]] = []
        for i in fragments:
            if runs and self._where[runs[-1][-1]][0] == self._where[i][0]:
                runs[-1].append(i)
            else:
                runs.append([i])
        # one way for every part, so that they concatenate: through the
        # rewritten footers only when each file's gives the same types
        files = {self._where[r[0]][0] for r in runs}
        raw = (
            all(self._raw_ok(fi, columns) for fi in files)
            and len({tuple(self._raw_footer(fi)[2][c] for c in columns) for fi in files}) == 1
        )
        parts = [self._read_groups(r, columns, False, raw=raw) for r in runs]
        if len(parts) == 1:
            return parts[0]
        first = parts[0].schema
        if any(not p.schema.equals(first) for p in parts[1:]):
            # files of a glob whose columns differ in type (INTEGER in one, BIGINT in
            # another): the first file's types, as the table's schema has them
            try:
                parts = [p if p.schema.equals(first) else p.cast(first) for p in parts]
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                names = ", ".join(repr(short_path(self.files[self._where[r[0]][0]])) for r in runs)
                raise GlintIOError(f"Parquet files {names} have columns of types that do not match: {e}") from None
        return pa.concat_tables(parts)

    def _read_groups(
        self, fragments: Sequence[int], columns: Sequence[str], threads: bool, raw: bool = False
    ) -> pa.Table:
        cols = list(columns)
        dict_cols = [c for c in cols if c in self._dict_columns]
        fi = self._where[fragments[0]][0]
        groups = [self._where[i][1] for i in fragments]
        f = self.files[fi]
        meta = self._raw_footer(fi)[0].metadata if raw else self.metas[fi]
        try:
            pf = pq.ParquetFile(f, metadata=meta, read_dictionary=dict_cols or None)
            if len(groups) == 1:
                return pf.read_row_group(groups[0], columns=cols, use_threads=threads)
            return pf.read_row_groups(groups, columns=cols, use_threads=threads)
        except FileNotFoundError:
            raise GlintIOError(
                f"No such file: {short_path(f)!r} (it was there when the table was registered)"
            ) from None
        except (pa.ArrowException, OSError, ValueError, KeyError) as e:
            reason = str(e).strip() or type(e).__name__
            where = f"row group {groups[0]}" if len(groups) == 1 else f"row groups {groups[0]}-{groups[-1]}"
            raise GlintIOError(f"Cannot read Parquet file {short_path(f)!r}, {where}: {reason}") from None

    # ------------------------------------------------------------- pages decoded by torch
    def device_decodable(self, name: str, dtype) -> bool:
        """Whether column ``name`` (glint type ``dtype``) can be decoded from
        its pages by glint.io.parquet_pages in every file: a flat INT32 /
        INT64 / FLOAT / DOUBLE column whose values are glint's as stored
        (signed integers, DATE days, DECIMAL(p <= 18) unscaled integers,
        floating point), no TIMESTAMP (units) or unsigned integers."""
        ok = self._device_ok.get(name)
        if ok is None:
            ok = self._device_ok[name] = all(self._device_leaf(m, name, dtype) is not None for m in self.metas)
        return ok

    @staticmethod
    def _device_leaf(meta, name: str, dtype):
        sch = meta.schema
        leaf = next((i for i in range(len(sch)) if sch.column(i).path == name), None)
        if leaf is None:
            return None
        col = sch.column(leaf)
        if col.max_repetition_level or col.max_definition_level > 1:
            return None
        logical = json.loads(col.logical_type.to_json())
        lt = logical.get("Type")
        phys, kind = col.physical_type, dtype.kind
        plain_int = lt == "None" or (lt == "Int" and logical.get("isSigned", True))
        if kind == "INTEGER" and phys == "INT32" and plain_int:
            return leaf
        if kind == "BIGINT" and phys in ("INT32", "INT64") and plain_int:
            return leaf
        if kind == "DATE" and phys == "INT32" and lt == "Date":
            return leaf
        if (
            dtype.is_decimal
            and dtype.precision <= T.MAX_INT64_DECIMAL_PRECISION
            and phys in ("INT32", "INT64")
            and lt == "Decimal"
            and logical.get("scale") == dtype.scale
        ):
            return leaf
        if kind == "DOUBLE" and phys in ("FLOAT", "DOUBLE") and lt == "None":
            return leaf
        return None

    def plan_device(self, fragment: int, name: str, dtype, raw: bool = False):
        """The host's part of decoding column ``name`` of one fragment (row
        group) from its pages (glint.io.parquet_pages.ChunkPlan: read,
        page headers, decompression); errors name the file and row group.
        ``raw``: where the chunk allows, only its bytes as stored
        (glint.io.raw_chunks.RawChunk: the device does the rest)."""
        fi, g = self._where[fragment]
        meta = self.metas[fi]
        leaf, index = self._leaf_index(fi, name, dtype)
        try:
            if raw and index is not None and index[g] is not None:
                return read_raw(
                    str(self.files[fi]), index[g], where=f"Parquet file {short_path(self.files[fi])!r}, row group {g}"
                )
            return plan_column_chunk(str(self.files[fi]), g, leaf, metadata=meta)
        except GlintIOError as e:  # bad page data: which file and row group
            raise GlintIOError(f"Cannot read Parquet file {short_path(self.files[fi])!r}, row group {g}: {e}") from None
        except FileNotFoundError:
            raise GlintIOError(
                f"No such file: {short_path(self.files[fi])!r} (it was there when the table was registered)"
            ) from None
        except OSError as e:
            raise GlintIOError(f"Cannot read Parquet file {short_path(self.files[fi])!r}, row group {g}: {e}") from None

    def raw_decodable(self, name: str, dtype, strings: bool = True) -> bool:
        """Whether column ``name`` is one the device decodes from its bytes
        as stored (see raw_chunk), by each file's first row group (a look at
        every row group costs ~3 us each, 16 ms a column of TPC-H SF 100's
        lineitem, on the query's critical path; a later row group that is not
        is still decoded on the device, its pages planned by the host; a
        string column's, by pyarrow: see has_raw). Strings: the
        low-cardinality VARCHAR columns read as dictionaries
        (_dictionary_columns); the device decodes their codes
        (``strings`` off, the raw_strings setting: pyarrow decodes them)."""
        if dtype.kind == "VARCHAR" and not strings:
            return False
        ok = self._raw_cols.get(name)
        if ok is None:
            if dtype.kind == "VARCHAR":
                ok = name in self._dict_columns
            else:
                ok = self.device_decodable(name, dtype)
            for meta in self.metas if ok else ():
                leaf = self._raw_leaf(meta, name, dtype)
                if leaf is None or (meta.num_row_groups and not raw_readable(meta, 0, leaf)):
                    ok = False
                    break
            self._raw_cols[name] = ok
        return ok

    def _raw_leaf(self, meta, name: str, dtype):
        """The leaf of column ``name`` that raw_decodable looks at: a
        numeric column's as _device_leaf says, a VARCHAR column's where it
        is BYTE_ARRAY (strings, or bytes without a logical type)."""
        if dtype.kind != "VARCHAR":
            return self._device_leaf(meta, name, dtype)
        sch = meta.schema
        leaf = next((i for i in range(len(sch)) if sch.column(i).path == name), None)
        if leaf is None or sch.column(leaf).physical_type != "BYTE_ARRAY":
            return None
        return leaf if json.loads(sch.column(leaf).logical_type.to_json()).get("Type") in ("String", "None") else None

    def has_raw(self, fragment: int, name: str, dtype) -> bool:
        """Whether raw_chunk gives a RawChunk for this fragment's column."""
        fi, g = self._where[fragment]
        index = self._leaf_index(fi, name, dtype)[1]
        return index is not None and index[g] is not None

    def raw_chunk(self, fragment: int, name: str, dtype):
        """Column ``name`` of one fragment as a lazy RawChunk (its bytes left
        in the file), or None where the device cannot decode it as stored."""
        return self.raw_chunks([fragment], name, dtype)[0]

    def raw_chunks(self, fragments, name: str, dtype) -> list:
        """raw_chunk of each fragment. A cold scan chunk asks for thousands,
        under the GIL: one loop, with the raw index, the file's path and the
        error prefix looked up once per file."""
        where, out = self._where, []
        last, index, named = None, None, None
        for fragment in fragments:
            fi, g = where[fragment]
            if fi != last:
                last = fi
                index = self._leaf_index(fi, name, dtype)[1]
                named = self._named(fi)
            entry = None if index is None else index[g]
            out.append(None if entry is None else read_raw(named[0], entry, where=named[1] + str(g), lazy=True))
        return out

    def _named(self, fi: int) -> tuple[str, str]:
        """(file ``fi``'s path, its raw chunks' error prefix), made once."""
        named = self._raw_names.get(fi)
        if named is None:
            named = self._raw_names[fi] = (
                str(self.files[fi]),
                f"Parquet file {short_path(self.files[fi])!r}, row group ",
            )
        return named

    def raw_set(self, fragments, name: str, dtype):
        """raw_chunks of these fragments as one
        glint.io.raw_chunks.RawSet (numpy arrays: no RawChunk, no
        Python, per fragment; a string column's as codes, see
        RawSet.with_strings), or None where that cannot be: a fragment the
        device cannot decode as stored, files that store the column in
        different types."""
        if self._where_np is None:
            w = np.array(self._where, dtype=np.int64).reshape(-1, 2)
            self._where_np = (w[:, 0].copy(), w[:, 1].copy())
        frags = np.asarray(fragments, dtype=np.int64)
        fis, gs = self._where_np[0][frags], self._where_np[1][frags]
        files = np.unique(fis).tolist()
        if not files:
            return None
        n = len(frags)
        fields = np.empty((7, n), dtype=np.int64)
        file_of = np.zeros(n, dtype=np.int64)
        kind, paths, where = None, [], []
        for k, fi in enumerate(files):
            index = self._leaf_index(fi, name, dtype)[1]
            if index is None or (kind is not None and (index.dtype, index.codes) != kind):
                return None
            kind = (index.dtype, index.codes)
            sel = slice(None) if len(files) == 1 else fis == fi
            ok, got = index.arrays(gs[sel])
            if not ok.all():
                return None
            fields[:, sel] = got
            file_of[sel] = k
            path, prefix = self._named(fi)
            paths.append(path)
            where.append(prefix)
        return RawSet(kind[0], paths, file_of, *fields[:6], where, gs, kind[1], fields[6].copy())

    def _leaf_index(self, fi: int, name: str, dtype):
        """(leaf index, glint.io.raw_chunks.raw_index) of a column in
        file ``fi``, made once."""
        got = self._leaves.get((fi, name))
        if got is None:
            with self._raw_lock:
                got = self._leaves.get((fi, name))
                if got is None:
                    meta = self.metas[fi]
                    leaf = self._raw_leaf(meta, name, dtype)
                    got = self._leaves[(fi, name)] = (
                        leaf,
                        None if leaf is None else raw_index(meta, leaf, self._settings.raw_index_block),
                    )
        return got

    def describe_fragments(self, fragments) -> str:
        """The files (and row groups) of some fragments, for error messages."""
        where = [self._where[f] for f in fragments]
        files = sorted({fi for fi, _ in where})
        if len(files) == 1:
            groups = [g for _, g in where]
            rg = f"row group {groups[0]}" if len(groups) == 1 else f"row groups {min(groups)}-{max(groups)}"
            return f"Parquet file {short_path(self.files[files[0]])!r}, {rg}"
        return f"Parquet files {short_path(self.files[files[0]])!r} ... {short_path(self.files[files[-1]])!r}"

    def _column_chunk(self, i: int, name: str):
        ci = self._col_index.get(name)
        if ci is None:
            return None
        fi, g = self._where[i]
        return self.metas[fi].row_group(g).column(ci)

    def bytes_of(self, fragments, columns) -> int:
        """Compressed bytes of these columns in these fragments (the scan's
        IO counter: a cold scan asks once per chunk, for thousands of row
        groups, so each column's sizes are an array made once)."""
        idx = np.fromiter(fragments, dtype=np.int64)
        total = 0
        for c in columns:
            sizes = self._size_cache.get(c)
            if sizes is None:
                ci = self._col_index.get(c)
                sizes = np.zeros(len(self._where), dtype=np.int64)
                if ci is not None:
                    metas, where = self.metas, self._where
                    for i, (fi, g) in enumerate(where):
                        sizes[i] = metas[fi].row_group(g).column(ci).total_compressed_size
                self._size_cache[c] = sizes
            total += int(sizes[idx].sum())
        return total

    def _raw_bounds(self, fi: int, name: str, t) -> bool:
        """Whether file ``fi`` stores column ``name``'s min/max as glint's own
        values: a DATE as INT32 days, a DECIMAL as INT32/INT64 unscaled at
        the column's scale. Then the statistics' raw values are taken as
        they are: pyarrow's logical ``min`` builds a date or a Decimal first
        (2 us each), and a scan's chunks_to_read, on the query's thread
        before its scans start, reads every row group's bounds of each
        pruning column (15 us a row group and column; TPC-H Q6 at SF 100:
        three columns of 5,232 row groups)."""
        key = (fi, name)
        got = self._raw_bound_kinds.get(key)
        if got is None:
            got = False
            ci = self._col_index.get(name)
            if ci is not None and (t.kind == "DATE" or t.is_decimal):
                col = self.metas[fi].schema.column(ci)
                kind = col.logical_type.type
                if t.kind == "DATE":
                    got = kind == "DATE" and col.physical_type == "INT32"
                else:
                    got = kind == "DECIMAL" and col.physical_type in ("INT32", "INT64") and col.scale == t.scale
            self._raw_bound_kinds[key] = got
        return got

    def column_stats(self, i: int, name: str):
        """(min, max, null count) of a column in fragment i in glint's value
        representation, or None when the file has no usable statistics."""
        key = (i, name)
        if key in self._stat_cache:
            return self._stat_cache[key]
        out = None
        t = self._types.get(name)
        cc = self._column_chunk(i, name) if t is not None else None
        st = cc.statistics if cc is not None else None
        if st is not None and st.null_count is not None:
            if st.has_min_max and t.kind == "TIMESTAMP":
                lo, hi = _timestamp_bound(st, st.min_raw), _timestamp_bound(st, st.max_raw)
                if lo is not None and hi is not None:
                    out = (lo, hi, st.null_count)
            elif st.has_min_max and self._raw_bounds(self._where[i][0], name, t):
                lo, hi = int(st.min_raw), int(st.max_raw)
                out = (lo, hi, st.null_count)
            elif st.has_min_max:
                lo, hi = self._to_internal(st.min, t), self._to_internal(st.max, t)
                if lo is not None and hi is not None:
                    out = (lo, hi, st.null_count)
            elif st.null_count == self.fragments[i].rows:
                out = (None, None, st.null_count)
        self._stat_cache[key] = out
        return out


_TIME_UNIT_MICROS = {"milliseconds": 1000, "microseconds": 1}


def _timestamp_bound(st, raw) -> int | None:
    """A Parquet TIMESTAMP bound in microseconds (nanoseconds truncated toward
    zero, as the column's values are), from the raw int64 and the column's
    unit; None for INT96 or unknown units."""
    if st.physical_type != "INT64" or not isinstance(raw, int) or st.logical_type.type != "TIMESTAMP":
        return None
    unit = json.loads(st.logical_type.to_json()).get("timeUnit")
    if unit == "nanoseconds":
        return abs(raw) // 1000 * (1 if raw >= 0 else -1)
    scale = _TIME_UNIT_MICROS.get(unit)
    return None if scale is None else raw * scale


class _RowGroupStats(Mapping):
    """A row group's column statistics as a read-only mapping (column ->
    (min, max, null count)), each read from the footer on first use."""

    __slots__ = ("_src", "_i")

    def __init__(self, src: ParquetSource, i: int):
        self._src, self._i = src, i

    def __getitem__(self, name: str):
        v = self._src.column_stats(self._i, name)
        if v is None:
            raise KeyError(name)
        return v

    def __iter__(self):
        return (n for n in self._src._col_index if self._src.column_stats(self._i, n) is not None)

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return True


_POOL = None
_POOL_LOCK = threading.Lock()


def decode_pool(threads: int = 0):
    """Threads that decode row groups side by side (pyarrow releases the GIL),
    made once per process: ``threads`` of them (the decode_threads setting
    of the connection that first asks), 0: one per core, at least 2, the
    cores shared by the ranks this host runs (four ranks of a 64-core host
    with 64 threads each took 253 s of thread time to decode their shares
    of TPC-H SF 100's lineitem in a 19 s load)."""
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                from glint.runtime.memory import ranks_on_this_host

                n = threads or max(2, (os.cpu_count() or 2) // ranks_on_this_host())
                _POOL = PriorityPool(n, "glint-decode")  # a scan's tasks carry its priority (see ChunkReader)
    return _POOL


def _is_stringish(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _raw_compatible(orig: pa.Field, patched: pa.Field, raw_decimal: bool) -> bool:
    """Whether a column read through the rewritten footer means the same to
    glint as through the original one (see ParquetSource._raw_footer)."""
    a, b = orig.type, patched.type
    if raw_decimal:
        return pa.types.is_decimal(a) and a.precision <= 18 and (pa.types.is_int64(b) or pa.types.is_int32(b))
    if _is_stringish(a):
        return pa.types.is_string(b) or pa.types.is_large_string(b)
    return a.equals(b)


def load_parquet(
    path: str | os.PathLike,
    columns: Sequence[str] | None = None,
    *,
    progress: bool | None = None,
    files: list[Path] | None = None,
    read_dictionary: Sequence[str] | None = None,
) -> pa.Table:
    """Read a Parquet file, every ``*.parquet`` file below a directory
    (recursively, in sorted order) or every file matching a glob into one
    Arrow table. ``columns`` keeps only those columns. ``progress``: show a
    bar on stderr (default: when stderr is a terminal and there are several
    files).
    """
    files = files or resolve_files(path, PARQUET_SUFFIXES, "Parquet")
    cols = list(columns) if columns is not None else None

    def read_one(f: Path) -> pa.Table:
        try:
            return pq.read_table(f, columns=cols, use_threads=True, read_dictionary=read_dictionary or None)
        except FileNotFoundError:
            raise GlintIOError(f"No such file: {short_path(f)!r}") from None
        except PermissionError:
            raise GlintIOError(f"Cannot read Parquet file {short_path(f)!r}: permission denied") from None
        except IsADirectoryError:
            raise GlintIOError(f"Cannot read Parquet file {short_path(f)!r}: is a directory") from None
        except (pa.ArrowException, OSError, ValueError, KeyError) as e:
            reason = str(e).strip() or type(e).__name__
            if "magic bytes" in reason.lower() or "parquet file size is 0" in reason.lower():
                reason = f"not a Parquet file ({reason})"
            raise GlintIOError(f"Cannot read Parquet file {short_path(f)!r}: {reason}") from None

    tables = read_files(
        files, read_one, progress, f"{len(files)} Parquet files" if len(files) > 1 else short_path(files[0])
    )
    return concat_file_tables(tables, files, "Parquet")
