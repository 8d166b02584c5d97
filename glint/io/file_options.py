"""DuckDB's read_csv options beyond the dialect (glint.io.csv_auto): column
types given by name or position, lines skipped before the header; and, for
CSV and Parquet, the file name as a column and files whose columns are
matched by name (union_by_name).

>>> import pyarrow as pa
>>> given_types([("b", "VARCHAR"), (0, "DOUBLE")], ["a", "b"])
{'f1': DataType(string), 'f0': DataType(double)}
>>> drop_lines("junk\\nmore\\na,b\\n", 2)
'a,b\\n'
>>> t = union_by_name_tables([pa.table({"a": [1], "b": ["x"]}), pa.table({"c": [True], "a": [2.5]})])
>>> t.column_names, t.column("a").to_pylist(), t.column("c").to_pylist()
(['a', 'b', 'c'], [1.0, 2.5], [None, True])
"""

from __future__ import annotations

import os

import pyarrow as pa

from glint.errors import BinderError, GlintIOError
from glint.io.csv_files import sql_type_to_arrow
from glint.io.file_lists import concat_file_tables
from glint.io.parquet_source import load_parquet


def drop_lines(text: str, n: int) -> str:
    """``text`` without its first ``n`` lines."""
    if n <= 0:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(lines[n:])


def given_types(types, names: list[str]) -> dict[str, pa.DataType]:
    """The reader's column types (by pyarrow's column names f0, f1 ...) for
    ``types``: (column name or position, SQL type) pairs, or a list of SQL
    types by position."""
    if not types:
        return {}
    pairs = list(enumerate(types)) if all(isinstance(t, str) for t in types) else list(types)
    out, missing = {}, []
    lower = [n.lower() for n in names]
    for key, sql_type in pairs:
        if isinstance(key, int):
            if not 0 <= key < len(names):
                raise BinderError(f"COLUMN_TYPES error: the file has {len(names)} columns, no column {key}")
            i = key
        elif key.lower() in lower:
            i = lower.index(key.lower())
        else:
            missing.append(key)
            continue
        out[f"f{i}"] = sql_type_to_arrow(sql_type)
    if missing:
        listed = ", ".join(f'"{m}"' for m in missing)
        raise BinderError(f"COLUMN_TYPES error: Columns with names: {listed} do not exist in the CSV File")
    return out


def with_filename(t: pa.Table, f) -> pa.Table:
    """``t`` with a last column holding its file's name as the file list gave it."""
    return t.append_column("filename", pa.array([os.fspath(f)] * t.num_rows, pa.string()))


def union_by_name_tables(tables: list[pa.Table]) -> pa.Table:
    """Tables of different columns as one: every name any of them has, in the
    order they first appear; a column a table lacks is NULL there. Numbers of
    different types become the wider number, other mixes VARCHAR (as DuckDB's
    union_by_name combines them)."""
    order: list[str] = []
    types: dict[str, pa.DataType] = {}
    for t in tables:
        for field in t.schema:
            key = field.name.lower()
            if key not in types:
                order.append(field.name)
                types[key] = field.type
            else:
                types[key] = _wider(types[key], field.type)
    out = []
    for t in tables:
        have = {n.lower(): i for i, n in enumerate(t.column_names)}
        cols = []
        for name in order:
            typ = types[name.lower()]
            i = have.get(name.lower())
            try:
                cols.append(pa.nulls(t.num_rows, typ) if i is None else t.column(i).cast(typ))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise GlintIOError(f"union_by_name: column {name!r} cannot be read as {typ}: {e}") from None
        out.append(pa.table(cols, names=order))
    return pa.concat_tables(out)


def _wider(a: pa.DataType, b: pa.DataType) -> pa.DataType:
    if a == b or pa.types.is_null(b):
        return a
    if pa.types.is_null(a):
        return b
    if pa.types.is_integer(a) and pa.types.is_integer(b):
        return pa.int64()
    if (pa.types.is_integer(a) or pa.types.is_floating(a)) and (pa.types.is_integer(b) or pa.types.is_floating(b)):
        return pa.float64()
    if {pa.types.is_date(a), pa.types.is_timestamp(b)} == {True} or {pa.types.is_timestamp(a), pa.types.is_date(b)} == {
        True
    }:
        return pa.timestamp("us")
    return pa.string()


def read_parquet_options(files, filename: bool = False, union_by_name: bool = False) -> pa.Table:
    """Parquet files read whole into one table, with read_parquet's
    ``filename`` and ``union_by_name``."""
    tables = [load_parquet(f, files=[f]) for f in files]
    out = union_by_name_tables(tables) if union_by_name else concat_file_tables(tables, files, "Parquet")
    if filename:
        per_row = [os.fspath(f) for f, t in zip(files, tables) for _ in range(t.num_rows)]
        out = out.append_column("filename", pa.array(per_row, pa.string()))
    return out
