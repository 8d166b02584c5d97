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

from glint.errors import NotSupported
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
    "auto_detect": None,
}


def _bind_parquet(paths, options, fn: str):
    for name, _ in options:
        raise NotSupported(f"{fn} option {name}")
    return "parquet", paths, {}


def _bind_csv(paths, options, fn: str):
    out = {}
    for name, value in options:
        if name not in _CSV_OPTIONS:
            raise NotSupported(f"{fn} option {name}")
        v = value()
        key = _CSV_OPTIONS[name]
        if key is None:
            continue  # auto_detect: the header and the types are always detected
        if key in ("header", "all_varchar"):
            v = bool(v) if not isinstance(v, str) else v.lower() in ("true", "1", "t")
        out[key] = v
    return "csv", paths, out


FUNCTIONS = [
    Function(
        "read_parquet",
        TABLE,
        "files",
        "read_parquet(VARCHAR | VARCHAR[] files)",
        "The rows of Parquet files (a name, a glob or a list); also FROM 'x.parquet'.",
        aliases=("parquet_scan",),
        bind=_bind_parquet,
    ),
    Function(
        "read_csv",
        TABLE,
        "files",
        "read_csv(VARCHAR | VARCHAR[] files [, header := BOOLEAN, delim := "
        "VARCHAR, quote := VARCHAR, nullstr := VARCHAR, all_varchar := BOOLEAN])",
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
