"""COPY: a table or a query's result to a Parquet or CSV file, and a file's
rows into a table.

- ``COPY (query) TO 'f.parquet' [(FORMAT PARQUET, COMPRESSION zstd, ROW_GROUP_SIZE n)]``
- ``COPY t [(columns)] TO 'f.csv' [(HEADER [bool], DELIMITER ',', QUOTE '"', NULLSTR '')]``
- ``COPY t [(columns)] FROM 'f.csv' | 'f.parquet' [(options)]``

The format is the FORMAT option's, else Parquet for a ``.parquet`` name and
CSV for any other (as DuckDB decides). CSV is written with a header unless
``HEADER false``; values are printed by glint's CAST to VARCHAR. ``COPY ...
FROM`` is ``INSERT INTO t [(columns)] SELECT * FROM read_csv(file, ...)`` (or
``read_parquet``): the file's columns go to the table's by position, CSV
fields are read as text and cast to the columns' types as INSERT casts them.
An option glint does not know is refused by name.
"""

from __future__ import annotations

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported
from glint.io import writers
from glint.io.file_lists import PARQUET_SUFFIXES, has_suffix
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import ColRef
from glint.sql import frontend
from glint.sql.binder import Binder
from glint.statements.tables import count_result, insert

_CSV_WRITE = {
    "header": "header",
    "delimiter": "delimiter",
    "delim": "delimiter",
    "sep": "delimiter",
    "quote": "quote",
    "nullstr": "nullstr",
    "null": "nullstr",
}
_CSV_READ = {
    "header": "header",
    "delimiter": "delim",
    "delim": "delim",
    "sep": "delim",
    "quote": "quote",
    "nullstr": "nullstr",
    "null": "nullstr",
    "auto_detect": "auto_detect",
}
_PARQUET_WRITE = {"compression": "compression", "codec": "compression", "row_group_size": "row_group_size"}


def _value(node):
    if node is None:
        return True  # an option without a value: HEADER
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Literal):
        return node.this if node.is_string else int(node.this)
    if isinstance(node, (exp.Var, exp.Identifier, exp.Column)):
        return node.name
    return node  # refused by name if the option is known (see _known)


def options(stmt: exp.Copy) -> dict:
    out = {}
    for p in stmt.args.get("params") or []:
        out[p.this.name.lower()] = _value(p.args.get("expression"))
    return out


def _format(opts: dict, path: str) -> str:
    fmt = opts.pop("format", None)
    if fmt is None:
        return "parquet" if has_suffix(path, PARQUET_SUFFIXES) else "csv"
    fmt = str(fmt).lower()
    if fmt not in ("csv", "parquet"):
        raise NotSupported(f"COPY ... (FORMAT {fmt.upper()})")
    return fmt


def _known(opts: dict, allowed: dict, fmt: str) -> dict:
    out = {}
    for k, v in opts.items():
        if k not in allowed:
            raise NotSupported(f'COPY option "{k.upper()}" for {fmt.upper()}')
        if isinstance(v, exp.Expression):
            raise NotSupported(f"COPY option {k.upper()} {v.sql(dialect='duckdb')}")
        out[allowed[k]] = v
    return out


def _bool(v, name: str) -> bool:
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v != 0
    if isinstance(v, str) and v.lower() in ("true", "false", "1", "0", "on", "off"):
        return v.lower() in ("true", "1", "on")
    raise BinderError(f"COPY option {name} expects a boolean, got {v!r}")


def _path(stmt: exp.Copy) -> str:
    files = stmt.args.get("files") or []
    if len(files) != 1 or not (isinstance(files[0], exp.Literal) and files[0].is_string):
        raise NotSupported("COPY to or from anything but one file name")
    return files[0].this


def _source_query(stmt: exp.Copy) -> exp.Expression:
    src = stmt.this
    if isinstance(src, exp.Subquery):
        return src.this
    if isinstance(src, exp.Schema):
        cols = [exp.column(c.name) for c in src.expressions]
        return exp.select(*cols).from_(src.this.copy())
    if isinstance(src, exp.Table):
        return exp.select("*").from_(src.copy())
    return src


def copy(con, stmt: exp.Copy):
    path = _path(stmt)
    opts = options(stmt)
    fmt = _format(opts, path)
    return copy_from(con, stmt, path, fmt, opts) if stmt.args.get("kind") else copy_to(con, stmt, path, fmt, opts)


def copy_to(con, stmt: exp.Copy, path: str, fmt: str, opts: dict):
    con.file_access.check_write(path)  # (a connection without external access: before anything runs)
    query = frontend.inline_views(_source_query(stmt), con._views)
    writers.check_target(path)
    if fmt == "parquet":
        o = _known(opts, _PARQUET_WRITE, fmt)
        compression = str(o.get("compression", "snappy")).lower()
        if compression not in writers.PARQUET_COMPRESSIONS:
            raise NotSupported(f"Parquet compression {compression}")
        # HUGEINT columns are written as DOUBLE, as DuckDB writes them
        data = con.query_table(bound=_cast_outputs(con, query, lambda t: T.DOUBLE if t.kind == "HUGEINT" else t))[0]
        writers.write_parquet(path, data, compression, o.get("row_group_size", writers.PARQUET_ROW_GROUP_ROWS))
        return count_result(con, data.num_rows)
    o = _known(opts, _CSV_WRITE, fmt)
    # every value printed by glint's CAST to VARCHAR, as DuckDB's CSV writer prints them
    data = con.query_table(bound=_cast_outputs(con, query, lambda t: T.VARCHAR))[0]
    for k in ("delimiter", "quote"):
        if k in o and (not isinstance(o[k], str) or len(o[k]) != 1):
            raise BinderError(f"COPY option {k.upper()} must be one character, got {o[k]!r}")
    writers.write_csv(
        path,
        data,
        header=_bool(o.get("header", True), "HEADER"),
        delimiter=o.get("delimiter", ","),
        quote=o.get("quote", '"'),
        nullstr=str(o.get("nullstr", "")),
    )
    return count_result(con, data.num_rows)


def _cast_outputs(con, query: exp.Expression, to):
    """The query bound, each output column cast to ``to(its type)``."""
    binder = Binder(con)
    bound = frontend.bind_query(query, con, binder)
    exprs = tuple((binder.field(n, to(f.type)), ty.cast(ColRef(f), to(f.type))) for n, f in bound.outputs)
    bound.plan, bound.outputs = L.Project(bound.plan, exprs), [(n, f) for (n, _), (f, _) in zip(bound.outputs, exprs)]
    return bound


def copy_from(con, stmt: exp.Copy, path: str, fmt: str, opts: dict):
    target = stmt.this
    if not isinstance(target, (exp.Table, exp.Schema)):
        raise BinderError("COPY ... FROM needs a table to copy into")
    if fmt == "parquet":
        _known(opts, {}, fmt)
        source = exp.Anonymous(this="read_parquet", expressions=[exp.Literal.string(path)])
    else:
        o = _known(opts, _CSV_READ, fmt)
        args = [exp.Literal.string(path), exp.EQ(this=exp.column("all_varchar"), expression=exp.true())]
        for k, v in o.items():
            if k == "header":
                v = _bool(v, "HEADER")
            value = exp.Boolean(this=v) if isinstance(v, bool) else exp.Literal.string(str(v))
            args.append(exp.EQ(this=exp.column(k), expression=value))
        source = exp.Anonymous(this="read_csv", expressions=args)
    query = exp.select("*").from_(exp.Table(this=source))
    return insert(con, exp.Insert(this=target.copy(), expression=query))
