'''Writing query results to files (COPY ... TO): Parquet and CSV as DuckDB
writes them.

CSV: values arrive already as text (the query's columns cast to VARCHAR by
glint's own CAST, which prints numbers, decimals, dates and booleans as
DuckDB does); a value is quoted when it holds the delimiter, the quote or a
line break, or is the NULL string (the empty string by default, so that it
does not read back as NULL), with quotes doubled inside. NULL is written as ``nullstr``
(empty by default). Parquet: pyarrow's writer, snappy-compressed row groups
of DuckDB's default size.

>>> import tempfile, os
>>> p = os.path.join(tempfile.mkdtemp(), "t.csv")
>>> write_csv(p, pa.table({"a": ["1", None, "x,y"], "b": ['say "hi"', "", "z"]}))
>>> print(open(p).read(), end="")
a,b
1,"say ""hi"""
,""
"x,y",z
'''

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from glint.errors import GlintIOError

PARQUET_ROW_GROUP_ROWS = 122_880  # DuckDB's default row group size
PARQUET_COMPRESSIONS = ("snappy", "zstd", "gzip", "lz4", "brotli", "uncompressed", "none")
_CSV_SLICE_ROWS = 1 << 18  # rows formatted at a time


def _io_error(path: str, e: BaseException) -> GlintIOError:
    reason = getattr(e, "strerror", None) or str(e).strip() or type(e).__name__
    return GlintIOError(f"Cannot write file {path!r}: {reason}")


def write_parquet(
    path: str, table: pa.Table, compression: str = "snappy", row_group_size: int = PARQUET_ROW_GROUP_ROWS
) -> None:
    compression = compression.lower()
    try:
        pq.write_table(
            table,
            path,
            compression="none" if compression == "uncompressed" else compression,
            row_group_size=max(1, int(row_group_size)),
        )
    except (OSError, pa.ArrowException) as e:
        raise _io_error(path, e) from None


def _quoted(values: pa.Array, delimiter: str, quote: str, nullstr: str) -> pa.Array:
    """Text values as CSV fields (NULL as nullstr)."""
    if pa.types.is_large_string(values.type):
        values = values.cast(pa.string()) if values.nbytes < (1 << 31) else values
    needs = pc.equal(values, nullstr)  # a value that reads as NULL (the empty string by default)
    for s in {delimiter, quote, "\n", "\r"}:
        needs = pc.or_(needs, pc.match_substring(values, s))
    escaped = pc.replace_substring(values, quote, quote + quote)
    wrapped = pc.binary_join_element_wise(quote, escaped, quote, "")
    return pc.fill_null(pc.if_else(needs, wrapped, values), nullstr)


def csv_lines(table: pa.Table, delimiter: str = ",", quote: str = '"', nullstr: str = "") -> pa.Array:
    """One CSV line (without its line break) per row of a table of text columns."""
    fields = [
        _quoted(c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c, delimiter, quote, nullstr)
        for c in table.columns
    ]
    if len(fields) == 1:
        return fields[0]
    return pc.binary_join_element_wise(*fields, delimiter)


def write_csv(
    path: str, table: pa.Table, header: bool = True, delimiter: str = ",", quote: str = '"', nullstr: str = ""
) -> None:
    """Write a table of text columns (NULLs allowed) as CSV."""
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            if header:
                names = pa.array(table.column_names, pa.string())
                f.write(delimiter.join(_quoted(names, delimiter, quote, nullstr).to_pylist()) + "\n")
            for start in range(0, table.num_rows, _CSV_SLICE_ROWS):
                lines = csv_lines(table.slice(start, _CSV_SLICE_ROWS), delimiter, quote, nullstr)
                f.write("\n".join(lines.to_pylist()) + "\n")
    except OSError as e:
        raise _io_error(path, e) from None


def check_target(path: str) -> None:
    """A clear error before a query runs whose result could not be written."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise GlintIOError(f"Cannot write file {path!r}: directory {d!r} does not exist")
    if os.path.isdir(path):
        raise GlintIOError(f"Cannot write file {path!r}: it is a directory")
