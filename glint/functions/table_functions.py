"""The table functions of the registry: ``read_parquet`` and ``read_csv``,
whose calls in FROM become tables of the connection's catalog that read the
files (glint.io.file_tables; the SQL side is glint.sql.table_functions), and
``generate_series``, ``range`` and ``unnest``, which make rows from constants
(glint.functions.series; the SQL side is glint.sql.row_sources).

A table function's bind rule takes the file names (a name, a glob or a
list of them) and the named options as (name, a function giving the
constant value) pairs, in the order written, and returns the file format,
the files and the reader's options (DuckDB's read_csv defaults apply to
those not given).

>>> _bind_csv("x.csv", [("delim", lambda: "|"), ("header", lambda: "false"), ("auto_detect", lambda: True)],
...           "read_csv")
('csv', 'x.csv', {'delimiter': '|', 'header': False})
"""

from __future__ import annotations

from glint.errors import BinderError, NotSupported
from glint.functions.registry import TABLE, Function
from glint.functions.series import element_type, series

# read_csv's options -> the reader's names (None: accepted and ignored)
_CSV_OPTIONS = {
    "header": "header",
    "delim": "delimiter",
    "sep": "delimiter",
    "delimiter": "delimiter",
    "quote": "quote",
    "all_varchar": "all_varchar",
    "nullstr": "nullstr",
    "null": "nullstr",
    "sample_size": "sample_size",
    "skip": "skip",
    "columns": "columns",
    "types": "types",
    "dtypes": "types",
    "column_types": "types",
    "names": "names",
    "column_names": "names",
    "filename": "filename",
    "union_by_name": "union_by_name",
    "auto_detect": "auto_detect",
}
_FLAGS = ("header", "all_varchar", "filename", "union_by_name", "auto_detect")
_PARQUET_OPTIONS = ("filename", "union_by_name")


def _flag(v) -> bool:
    if isinstance(v, str):
        return v.lower() in ("true", "1", "t")
    return bool(v)


def _bind_parquet(paths, options, fn: str):
    out = {}
    for name, value in options:
        if name not in _PARQUET_OPTIONS:
            raise NotSupported(f"{fn} option {name}")
        out[name] = _flag(value())
    return "parquet", paths, {k: v for k, v in out.items() if v}


def _bind_csv(paths, options, fn: str):
    """Options are constants: text, numbers, booleans, tuples for lists and
    tuples of (key, value) pairs for structs ({'a': 'INTEGER'})."""
    out = {}
    for name, value in options:
        if name not in _CSV_OPTIONS:
            raise NotSupported(f"{fn} option {name}")
        key, v = _CSV_OPTIONS[name], value()
        if key in _FLAGS:
            v = _flag(v)
        elif key == "skip" and not (isinstance(v, int) and v >= 0):
            raise BinderError(f"{fn} option skip takes a number of lines, got {v!r}")
        elif key == "names" and not (isinstance(v, tuple) and all(isinstance(n, str) for n in v)):
            raise BinderError(f"{fn} option {name} takes a list of names")
        elif key in ("columns", "types") and not isinstance(v, tuple):
            raise BinderError(f"{fn} option {name} takes a struct of column types ({{'a': 'INTEGER'}}) or a list")
        out[key] = v
    if "columns" in out and not all(isinstance(p, tuple) for p in out["columns"]):
        raise BinderError(f"{fn} option columns takes a struct of column types ({{'a': 'INTEGER'}})")
    if out.pop("auto_detect", True) is False:
        if "columns" not in out:
            raise BinderError(
                f"{fn} requires columns to be specified through the 'columns' option. Use read_csv_auto or set "
                f"{fn}(..., AUTO_DETECT=TRUE) to automatically guess columns."
            )
        out.setdefault("header", False)
        out.setdefault("delimiter", ",")
    for k in ("filename", "union_by_name"):
        if out.get(k) is False:
            del out[k]
    return "csv", paths, out


FUNCTIONS = [
    Function(
        "read_parquet",
        TABLE,
        "files",
        "read_parquet(VARCHAR | VARCHAR[] files [, filename := BOOLEAN, union_by_name := BOOLEAN])",
        "The rows of Parquet files (a name, a glob or a list); also FROM 'x.parquet'.",
        aliases=("parquet_scan",),
        bind=_bind_parquet,
    ),
    Function(
        "read_csv",
        TABLE,
        "files",
        "read_csv(VARCHAR | VARCHAR[] files [, header := BOOLEAN, delim | sep := VARCHAR, quote := VARCHAR, "
        "nullstr := VARCHAR | VARCHAR[], all_varchar := BOOLEAN, skip := BIGINT, columns := STRUCT, "
        "types | dtypes := STRUCT | VARCHAR[], names := VARCHAR[], filename := BOOLEAN, "
        "union_by_name := BOOLEAN, auto_detect := BOOLEAN, sample_size := BIGINT])",
        "The rows of CSV files, with DuckDB's detection of the header and the types; also FROM 'x.csv'.",
        aliases=("read_csv_auto", "sniff_csv_auto"),
        bind=_bind_csv,
    ),
    Function(
        "generate_series",
        TABLE,
        "series",
        "generate_series(BIGINT [stop] | BIGINT start, BIGINT stop [, BIGINT step] | "
        "TIMESTAMP start, TIMESTAMP stop, INTERVAL step)",
        "The values from start (default 0) to stop, stop included, by step (default 1); also in SELECT as "
        "unnest(generate_series(...)).",
        bind=series,
    ),
    Function(
        "range",
        TABLE,
        "series",
        "range(BIGINT [stop] | BIGINT start, BIGINT stop [, BIGINT step] | "
        "TIMESTAMP start, TIMESTAMP stop, INTERVAL step)",
        "The values from start (default 0) up to stop, stop left out, by step (default 1); also in SELECT as "
        "unnest(range(...)).",
        bind=series,
    ),
    Function(
        "unnest",
        TABLE,
        "series",
        "unnest(list)",
        "One row per element of a list of constants ([1, 2, 3]) or of range / generate_series; in SELECT, "
        "one row per element for every row (several UNNESTs side by side, the shorter padded with NULL).",
        bind=element_type,
    ),
]
