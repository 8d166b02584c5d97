"""Reading user data into Arrow tables: Parquet and CSV files, directories and
globs, and in-memory objects (pandas, polars, Arrow, dicts).

Every failure a user can cause (a missing path, a directory with no matching
files, a file that is not Parquet or not valid CSV) raises
:class:`~glint.errors.GlintIOError` naming the path and the reason, never a raw
pyarrow exception.

>>> to_arrow_table({"a": [1, 2]}).num_rows
2
>>> sniff_delimiter("a|b|c\\n1|2|3\\n")
'|'
"""
from __future__ import annotations

import csv
import json
import glob as _glob
import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from collections.abc import Mapping
from typing import Iterator, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from glint.errors import GlintError, GlintIOError
from glint.io.parquet_pages import plan_column_chunk
from glint.io.raw_chunks import RawSet, raw_index, raw_readable, read_raw

__all__ = ["load_parquet", "load_csv", "to_arrow_table", "tables_in_directory", "resolve_files",
           "sniff_delimiter", "table_to_ipc", "table_from_ipc", "PARQUET_SUFFIXES", "CSV_SUFFIXES"]

PARQUET_SUFFIXES = (".parquet", ".parq")
CSV_SUFFIXES = (".csv", ".tsv", ".tbl", ".txt", ".dat")
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".lz4")
_GLOB_CHARS = "*?["
_DELIMITERS = (",", "|", "\t", ";")   # sniffing order; an earlier one wins a tie


# ------------------------------------------------------------------ file lists
def _has_suffix(name: str, suffixes: Sequence[str]) -> bool:
    low = name.lower()
    for comp in _COMPRESSION_SUFFIXES:
        if low.endswith(comp):
            low = low[: -len(comp)]
            break
    return low.endswith(tuple(suffixes))


def _hidden(name: str) -> bool:
    # Spark/Hadoop markers (_SUCCESS, _metadata) and dot files (.crc, editors' temp files)
    return name.startswith((".", "_"))


def _files_under(directory: Path, suffixes: Sequence[str]) -> list[Path]:
    out = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not _hidden(d))
        out.extend(Path(root) / f for f in files if not _hidden(f) and _has_suffix(f, suffixes))
    return sorted(out)


def resolve_files(path: str | os.PathLike, suffixes: Sequence[str], kind: str = "Parquet") -> list[Path]:
    """The files `path` names: itself when a file, every file with one of
    `suffixes` below it (recursively, sorted) when a directory, the sorted
    matches when a glob (``**`` recurses); for a list, each one's files in
    turn (as DuckDB's read_parquet([...]), a file listed twice twice). Raises GlintIOError when nothing matches.
    """
    if isinstance(path, (list, tuple)):
        if not path:
            raise GlintIOError("an empty list of files")
        return [f for p in path for f in resolve_files(p, suffixes, kind)]      # a file listed twice is read twice
    if not isinstance(path, (str, os.PathLike)):
        raise GlintError(f"expected a path (str), got {type(path).__name__}: {path!r}")
    text = os.path.expanduser(os.fspath(path))
    if any(c in text for c in _GLOB_CHARS) and not os.path.exists(text):
        matches = sorted(_glob.glob(text, recursive=True))
        if not matches:
            raise GlintIOError(f"No files match {text!r}")
        files: list[Path] = []
        for m in matches:
            p = Path(m)
            if p.is_dir():
                files.extend(_files_under(p, suffixes))
            elif p.is_file():
                files.append(p)
        if not files:
            raise GlintIOError(f"No {kind} files match {text!r}")
        return sorted(dict.fromkeys(files))
    p = Path(text)
    if p.is_dir():
        files = _files_under(p, suffixes)
        if not files:
            raise GlintIOError(f"No {kind} files ({', '.join('*' + s for s in suffixes)}) "
                               f"in directory {text!r}")
        return files
    if p.is_file():
        return [p]
    if p.exists():
        raise GlintIOError(f"Not a regular file or directory: {text!r}")
    raise GlintIOError(f"No such file or directory: {text!r}")


# ------------------------------------------------------------------ progress
def _want_progress(progress: bool | None, n_files: int) -> bool:
    if progress is None:
        return n_files > 1 and sys.stderr is not None and sys.stderr.isatty()
    return bool(progress)


@contextmanager
def _progress_bar(enabled: bool, total: int, description: str) -> Iterator:
    """Yields advance(n=1); a rich bar on stderr when enabled, else a no-op."""
    if not enabled:
        yield lambda n=1: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)


def _short(path: Path | str) -> str:
    return os.fspath(path)


def _concat(tables: list[pa.Table], files: list[Path], kind: str) -> pa.Table:
    if len(tables) == 1:
        return tables[0]
    first = tables[0].schema
    out = [tables[0]]
    for t, f in zip(tables[1:], files[1:]):
        if not t.schema.equals(first, check_metadata=False):
            if [fld.name for fld in t.schema] == [fld.name for fld in first]:
                try:   # e.g. int32 vs int64, string vs string_view: cast to the first file's types
                    t = t.cast(first)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                    raise GlintIOError(f"{kind} file {_short(f)!r} has a schema that does not match "
                                       f"{_short(files[0])!r}: {e}") from None
            else:
                raise GlintIOError(
                    f"{kind} file {_short(f)!r} has columns {t.schema.names} but {_short(files[0])!r} "
                    f"has {first.names}")
        else:
            t = t.replace_schema_metadata(first.metadata)
        out.append(t)
    return pa.concat_tables(out)


def _read_all(files: list[Path], read_one, progress: bool | None, what: str) -> list[pa.Table]:
    show = _want_progress(progress, len(files))
    with _progress_bar(show, len(files), f"reading {what}") as advance:
        if len(files) == 1:
            t = read_one(files[0])
            advance()
            return [t]
        workers = min(8, len(files), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as ex:
            futures = [ex.submit(read_one, f) for f in files]
            out = []
            for fut in futures:
                out.append(fut.result())
                advance()
            return out


# ------------------------------------------------------------------ Parquet
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
    """

    def __init__(self, path: str | os.PathLike):
        from glint.columnar import types as T
        from glint.io.table import Fragment, to_internal

        self.path = str(path)
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
                raise GlintIOError(f"Parquet file {_short(f)!r} has columns {names}, "
                                   f"but {_short(self.files[0])!r} has {self.schema.names}")
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
        self._raw_bound_kinds: dict = {}    # (file, column) -> whether its min/max are glint's values as stored
        self.fragments = []
        self._where = []                    # fragment -> (file index, row group)
        for fi, m in enumerate(metas):
            for g in range(m.num_row_groups):
                i = len(self._where)
                self._where.append((fi, g))
                self.fragments.append(Fragment(m.row_group(g).num_rows, _RowGroupStats(self, i)))
        self._dict_columns = self._dictionary_columns(metas)
        self._raw: dict[int, tuple] = {}        # file index -> (raw footer, columns it may read)
        self._device_ok: dict[str, bool] = {}   # column -> decodable from its pages by torch
        self._raw_cols: dict[str, bool] = {}    # column -> decoded as stored by the device (raw_decodable)
        self._raw_lock = threading.Lock()
        self._leaves: dict = {}                 # (file index, column) -> (leaf, raw index), see _leaf_index
        self._raw_names: dict = {}              # file index -> (its path, its raw chunks' error prefix)
        self._where_np = None                   # _where as two arrays (file index, row group), see raw_set

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
                        ok = frozenset(f.name for f in self.schema
                                       if f.name in patched.names and _raw_compatible(
                                           f, patched.field(f.name), f.name in raw.raw_decimals))
                        types = {c: patched.field(c).type for c in ok}
                got = self._raw[fi] = (raw, ok, types)
        return got

    def read(self, fragments, columns: Sequence[str], parallel: bool = True) -> list[pa.Table]:
        """One Arrow table per fragment (row group), decoded in parallel
        (``parallel=False``: on the calling thread, for callers that are
        already one of many decoding threads)."""
        if len(fragments) <= 1 or not parallel:
            return [self._read_groups([i], columns, parallel) for i in fragments]
        return list(_decode_pool().map(lambda i: self._read_groups([i], columns, False), fragments))

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
        raw = all(self._raw_ok(fi, columns) for fi in files) and \
            len({tuple(self._raw_footer(fi)[2][c] for c in columns) for fi in files}) == 1
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
                names = ", ".join(repr(_short(self.files[self._where[r[0]][0]])) for r in runs)
                raise GlintIOError(f"Parquet files {names} have columns of types that do not match: {e}") from None
        return pa.concat_tables(parts)

    def _read_groups(self, fragments: Sequence[int], columns: Sequence[str], threads: bool,
                     raw: bool = False) -> pa.Table:
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
            raise GlintIOError(f"No such file: {_short(f)!r} (it was there when the table was registered)"
                               ) from None
        except (pa.ArrowException, OSError, ValueError, KeyError) as e:
            reason = str(e).strip() or type(e).__name__
            where = f"row group {groups[0]}" if len(groups) == 1 else f"row groups {groups[0]}-{groups[-1]}"
            raise GlintIOError(f"Cannot read Parquet file {_short(f)!r}, {where}: {reason}") from None

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
        from glint.columnar import types as T
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
        if dtype.is_decimal and dtype.precision <= T.MAX_INT64_DECIMAL_PRECISION and phys in ("INT32", "INT64") \
                and lt == "Decimal" and logical.get("scale") == dtype.scale:
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
                return read_raw(str(self.files[fi]), index[g],
                                where=f"Parquet file {_short(self.files[fi])!r}, row group {g}")
            return plan_column_chunk(str(self.files[fi]), g, leaf, metadata=meta)
        except GlintIOError as e:        # bad page data: which file and row group
            raise GlintIOError(f"Cannot read Parquet file {_short(self.files[fi])!r}, row group {g}: "
                               f"{e}") from None
        except FileNotFoundError:
            raise GlintIOError(f"No such file: {_short(self.files[fi])!r} (it was there when the table "
                               f"was registered)") from None
        except OSError as e:
            raise GlintIOError(f"Cannot read Parquet file {_short(self.files[fi])!r}, row group {g}: "
                               f"{e}") from None

    def raw_decodable(self, name: str, dtype) -> bool:
        """Whether column ``name`` is one the device decodes from its bytes
        as stored (see raw_chunk), by each file's first row group (a look at
        every row group costs ~3 us each, 16 ms a column of TPC-H SF 100's
        lineitem, on the query's critical path; a later row group that is not
        is still decoded on the device, its pages planned by the host; a
        string column's, by pyarrow: see has_raw). Strings: the
        low-cardinality VARCHAR columns read as dictionaries
        (_dictionary_columns), without NULLs; the device decodes their codes
        (GLINT_RAW_STRINGS=0: pyarrow decodes them)."""
        ok = self._raw_cols.get(name)
        if ok is None:
            if dtype.kind == "VARCHAR":
                ok = name in self._dict_columns and os.environ.get("GLINT_RAW_STRINGS", "1") != "0"
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
        return leaf if json.loads(sch.column(leaf).logical_type.to_json()).get("Type") in ("String", "None") \
            else None

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
            named = self._raw_names[fi] = (str(self.files[fi]), f"Parquet file {_short(self.files[fi])!r}, row group ")
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
        fields = np.empty((6, n), dtype=np.int64)
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
        return RawSet(kind[0], paths, file_of, *fields, where, gs, kind[1])

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
                    got = self._leaves[(fi, name)] = (leaf, None if leaf is None else raw_index(meta, leaf))
        return got

    def describe_fragments(self, fragments) -> str:
        """The files (and row groups) of some fragments, for error messages."""
        where = [self._where[f] for f in fragments]
        files = sorted({fi for fi, _ in where})
        if len(files) == 1:
            groups = [g for _, g in where]
            rg = f"row group {groups[0]}" if len(groups) == 1 else f"row groups {min(groups)}-{max(groups)}"
            return f"Parquet file {_short(self.files[files[0]])!r}, {rg}"
        return f"Parquet files {_short(self.files[files[0]])!r} ... {_short(self.files[files[-1]])!r}"

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

    def __init__(self, src: "ParquetSource", i: int):
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


def _decode_pool():
    """Threads that decode row groups side by side (pyarrow releases the GIL):
    one per core, or GLINT_DECODE_THREADS."""
    global _POOL
    if _POOL is None:
        n = os.environ.get("GLINT_DECODE_THREADS")
        n = int(n) if n and n.isdigit() and int(n) > 0 else max(2, os.cpu_count() or 2)
        from glint.runtime.priority_pool import PriorityPool
        _POOL = PriorityPool(n, "glint-decode")     # a scan's tasks carry its priority (see ChunkReader)
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


def load_parquet(path: str | os.PathLike, columns: Sequence[str] | None = None, *,
                 progress: bool | None = None, files: list[Path] | None = None,
                 read_dictionary: Sequence[str] | None = None) -> pa.Table:
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
            raise GlintIOError(f"No such file: {_short(f)!r}") from None
        except PermissionError:
            raise GlintIOError(f"Cannot read Parquet file {_short(f)!r}: permission denied") from None
        except IsADirectoryError:
            raise GlintIOError(f"Cannot read Parquet file {_short(f)!r}: is a directory") from None
        except (pa.ArrowException, OSError, ValueError, KeyError) as e:
            reason = str(e).strip() or type(e).__name__
            if "magic bytes" in reason.lower() or "parquet file size is 0" in reason.lower():
                reason = f"not a Parquet file ({reason})"
            raise GlintIOError(f"Cannot read Parquet file {_short(f)!r}: {reason}") from None

    tables = _read_all(files, read_one, progress, f"{len(files)} Parquet files" if len(files) > 1
                       else _short(files[0]))
    return _concat(tables, files, "Parquet")


# ------------------------------------------------------------------ CSV
def _open_text_sample(f: Path, nbytes: int = 1 << 16) -> str:
    try:
        with pa.input_stream(os.fspath(f), compression="detect") as s:
            raw = s.read(nbytes)
    except (pa.ArrowException, OSError) as e:
        raise GlintIOError(f"Cannot read CSV file {_short(f)!r}: {e}") from None
    return raw.decode("utf-8", errors="replace")


def sniff_delimiter(sample: str) -> str:
    """The delimiter (one of , | tab ;) that splits the sample's lines into the
    same number (> 1) of fields most often; ',' when none does.

    >>> sniff_delimiter("a;b\\n1;2\\n"), sniff_delimiter("a\\tb\\tc,d\\n1\\t2\\t3,4\\n"), sniff_delimiter("x\\n1\\n")
    (';', '\\t', ',')
    """
    lines = sample.splitlines()
    if len(lines) > 1 and not sample.endswith(("\n", "\r")):
        lines = lines[:-1]          # the last line may be cut off by the sample size
    lines = [ln for ln in lines[:50] if ln.strip()]
    if not lines:
        return ","
    best, best_score = ",", (0, 0)
    for d in _DELIMITERS:
        try:
            counts = [len(row) for row in csv.reader(lines, delimiter=d)]
        except csv.Error:
            continue
        if not counts:
            continue
        mode = max(set(counts), key=counts.count)
        if mode <= 1:
            continue
        consistent = counts.count(mode)
        score = (consistent, mode)
        if score > best_score:
            best, best_score = d, score
    return best


def _csv_types(types) -> dict[str, pa.DataType] | None:
    if types is None:
        return None
    if not isinstance(types, dict):
        raise GlintError(f"types must be a dict of column name to type, got {type(types).__name__}")
    out = {}
    for name, t in types.items():
        out[name] = t if isinstance(t, pa.DataType) else _sql_type_to_arrow(str(t))
    return out


def _sql_type_to_arrow(text: str) -> pa.DataType:
    from glint.columnar import types as T

    s = text.strip()
    params: list[int] = []
    if "(" in s and s.endswith(")"):
        s, inner = s[: s.index("(")].strip(), s[s.index("(") + 1: -1]
        try:
            params = [int(x) for x in inner.split(",") if x.strip()]
        except ValueError:
            raise GlintError(f"invalid type {text!r}") from None
    return T.to_arrow(T.from_sql_name(s, params))


def load_csv(path: str | os.PathLike, header: bool = True, delimiter: str | None = None,
             columns: Sequence[str] | None = None, types: dict | None = None, *,
             progress: bool | None = None) -> pa.Table:
    """Read a CSV file (or all ``*.csv``/``*.tsv``/``*.tbl``/``*.txt`` files below
    a directory, or a glob's matches; ``.gz`` etc. are decompressed) into one
    Arrow table.

    - ``header``: the first line names the columns; otherwise they are named
      ``column0``, ``column1``... (DuckDB's convention).
    - ``delimiter``: sniffed from the first file when None (one of , | tab ;).
    - ``columns``: keep only these columns; ``types``: column name -> Arrow
      type or SQL type name ("DECIMAL(15,2)", "DATE"...) overriding inference.
    - Empty unquoted fields are NULL. A trailing delimiter on every line (the
      dbgen ``.tbl`` layout) does not make an extra column.
    - All files of a directory or glob must have the same columns; types are
      inferred from the first file.
    """
    files = resolve_files(path, CSV_SUFFIXES, "CSV")
    if delimiter is not None and len(delimiter) != 1:
        raise GlintError(f"delimiter must be one character, got {delimiter!r}")
    sample = _open_text_sample(files[0])
    delim = delimiter or sniff_delimiter(sample)
    sample_lines = [ln for ln in sample.splitlines()[:-1 if not sample.endswith("\n") else None] if ln.strip()]
    trailing = bool(sample_lines) and all(ln.rstrip("\r").endswith(delim) for ln in sample_lines[:50])
    col_types = _csv_types(types)

    def read_one(f: Path, column_types=None) -> pa.Table:
        ropts = pacsv.ReadOptions(use_threads=True, autogenerate_column_names=not header)
        popts = pacsv.ParseOptions(delimiter=delim)
        copts = pacsv.ConvertOptions(column_types=column_types or {}, strings_can_be_null=True,
                                     quoted_strings_can_be_null=False)
        try:
            return pacsv.read_csv(os.fspath(f), read_options=ropts, parse_options=popts, convert_options=copts)
        except FileNotFoundError:
            raise GlintIOError(f"No such file: {_short(f)!r}") from None
        except PermissionError:
            raise GlintIOError(f"Cannot read CSV file {_short(f)!r}: permission denied") from None
        except (pa.ArrowException, OSError, ValueError, UnicodeDecodeError) as e:
            reason = str(e).strip() or type(e).__name__
            if "empty csv" in reason.lower():
                reason = "the file is empty"
            raise GlintIOError(f"Cannot read CSV file {_short(f)!r}: {reason}") from None

    def fix(t: pa.Table) -> pa.Table:
        if not header:
            t = t.rename_columns([f"column{i}" for i in range(t.num_columns)])
        if trailing and t.num_columns > 1:
            last = t.column(t.num_columns - 1)
            if last.null_count == len(last) and (not header or t.schema.names[-1] in ("", f"f{t.num_columns - 1}")):
                t = t.remove_column(t.num_columns - 1)
        return t

    if col_types and not header:   # pyarrow names headerless columns f0, f1...
        col_types = {(f"f{k[6:]}" if k.startswith("column") and k[6:].isdigit() else k): v
                     for k, v in col_types.items()}
    first = fix(read_one(files[0], col_types))
    if header and len(set(first.schema.names)) != len(first.schema.names):
        dup = [n for n in first.schema.names if first.schema.names.count(n) > 1][0]
        raise GlintIOError(f"CSV file {_short(files[0])!r} has the column {dup!r} twice")
    tables = [first]
    if len(files) > 1:
        # the other files get the first file's types (inference on a file whose
        # column happens to be all empty would give another type)
        fixed = {(f"f{i}" if not header else f.name): f.type for i, f in enumerate(first.schema)}
        tables.extend(_read_all(files[1:], lambda f: fix(read_one(f, fixed)), progress,
                                f"{len(files)} CSV files"))
    t = _concat(tables, files, "CSV")
    if columns is not None:
        missing = [c for c in columns if c not in t.schema.names]
        if missing:
            raise GlintIOError(f"CSV file {_short(files[0])!r} has no column {missing[0]!r} "
                               f"(columns: {', '.join(t.schema.names)})")
        t = t.select(list(columns))
    return t


# ------------------------------------------------------------------ in-memory objects
def to_arrow_table(obj) -> pa.Table:
    """An Arrow table from a pyarrow Table / RecordBatch / RecordBatchReader /
    Dataset, a pandas or polars DataFrame, a dict of columns, a list of row
    dicts, or any object exporting the Arrow C stream interface.

    >>> to_arrow_table([{"a": 1}, {"a": 2}]).column("a").to_pylist()
    [1, 2]
    >>> to_arrow_table(42)
    Traceback (most recent call last):
    ...
    glint.errors.GlintError: cannot register an object of type int: expected a pyarrow Table, \
a pandas or polars DataFrame or a dict of columns
    """
    try:
        if isinstance(obj, pa.Table):
            return obj
        if isinstance(obj, pa.RecordBatch):
            return pa.Table.from_batches([obj])
        if isinstance(obj, pa.RecordBatchReader):
            return obj.read_all()
        mod = type(obj).__module__ or ""
        if mod.startswith("pandas"):
            import pandas as pd

            if isinstance(obj, pd.Series):
                obj = obj.to_frame()
            if isinstance(obj, pd.DataFrame):
                return pa.Table.from_pandas(obj, preserve_index=False)
        if mod.startswith("polars"):
            if hasattr(obj, "collect") and not hasattr(obj, "to_arrow"):   # LazyFrame
                obj = obj.collect()
            if hasattr(obj, "to_arrow"):
                t = obj.to_arrow()
                return t if isinstance(t, pa.Table) else pa.table(t)
        if mod.startswith("pyarrow.dataset") or mod.startswith("pyarrow._dataset"):
            return obj.to_table()
        if isinstance(obj, dict):
            return pa.table(obj)
        if isinstance(obj, list) and obj and all(isinstance(r, dict) for r in obj):
            return pa.Table.from_pylist(obj)
        if hasattr(obj, "__arrow_c_stream__"):
            return pa.table(obj)
        if hasattr(obj, "arrow") and mod.startswith("duckdb"):
            t = obj.arrow()
            return t.read_all() if isinstance(t, pa.RecordBatchReader) else t
    except GlintError:
        raise
    except (pa.ArrowException, TypeError, ValueError) as e:
        raise GlintError(f"cannot convert {type(obj).__name__} to a table: {e}") from None
    raise GlintError(f"cannot register an object of type {type(obj).__name__}: expected a pyarrow Table, "
                     f"a pandas or polars DataFrame or a dict of columns")


def table_to_ipc(table: pa.Table) -> bytes:
    """An Arrow table as Arrow IPC stream bytes (to another process).

    >>> table_from_ipc(table_to_ipc(pa.table({"a": [1, None]}))).column("a").to_pylist()
    [1, None]
    """
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def table_from_ipc(buf: bytes) -> pa.Table:
    return pa.ipc.open_stream(pa.py_buffer(buf)).read_all()


# ------------------------------------------------------------------ directories of tables
def _table_stem(name: str) -> str:
    low = name.lower()
    for comp in _COMPRESSION_SUFFIXES:
        if low.endswith(comp):
            name, low = name[: -len(comp)], low[: -len(comp)]
            break
    for s in PARQUET_SUFFIXES + CSV_SUFFIXES:
        if low.endswith(s):
            return name[: -len(s)]
    return name


def tables_in_directory(directory: str | os.PathLike) -> dict[str, str]:
    """Tables in a directory, name -> path: each ``*.parquet`` file (named after
    its stem) and each subdirectory holding Parquet files (named after the
    subdirectory, e.g. tpchgen-cli's ``--parts`` layout ``lineitem/lineitem.1.parquet``).

    Raises GlintIOError when the directory is missing or holds no tables, or
    when a file and a subdirectory claim the same name.
    """
    text = os.path.expanduser(os.fspath(directory))
    d = Path(text)
    if not d.exists():
        raise GlintIOError(f"No such directory: {text!r}")
    if not d.is_dir():
        raise GlintIOError(f"Not a directory: {text!r}")
    found: dict[str, str] = {}
    try:
        entries = sorted(d.iterdir())
    except OSError as e:
        raise GlintIOError(f"Cannot list directory {text!r}: {e.strerror or e}") from None
    for entry in entries:
        if _hidden(entry.name):
            continue
        if entry.is_file() and _has_suffix(entry.name, PARQUET_SUFFIXES):
            name = _table_stem(entry.name)
        elif entry.is_dir() and _files_under(entry, PARQUET_SUFFIXES):
            name = entry.name
        else:
            continue
        if name in found:
            raise GlintIOError(f"Two sources for table {name!r} in {text!r}: {found[name]!r} and {str(entry)!r}")
        found[name] = str(entry)
    if not found:
        raise GlintIOError(f"No Parquet files or directories of Parquet files in {text!r}")
    return found
