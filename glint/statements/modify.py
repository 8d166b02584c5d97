"""DELETE and UPDATE: the table is rewritten in memory.

The rows a WHERE selects are found by a query over the table's rows with a
row number added (a hidden table of the catalog for the statement's
duration), so the condition can be anything a query's WHERE can be
(subqueries included, which see the table as it was). DELETE keeps the
other rows in order; UPDATE computes the SET expressions over the old
values of the selected rows (cast to their columns' types as INSERT casts)
and puts them in place. The table keeps its name, types and constraints;
a NOT NULL violation or a failed CAST leaves it unchanged. A table read
from files becomes an in-memory table (the files are not written).
"""

from __future__ import annotations

import itertools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, ColumnNotFound, NotSupported, did_you_mean
from glint.io.appended import conform
from glint.io.file_tables import HIDDEN_PREFIX
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import ColRef
from glint.sql import frontend
from glint.sql.binder import Binder
from glint.statements.tables import check_not_null, count_result, target_table

ROWID = "__glint_rowid"
_tmp_ids = itertools.count(1)


def _refuse(con, stmt, statement: str) -> None:
    if getattr(con, "ranks", None) is not None:
        raise NotSupported(f"{statement} on a distributed connection (tables are spread over the ranks)")
    if stmt.args.get("returning"):
        raise NotSupported(f"{statement} ... RETURNING")


def _selected(con, table, data: pa.Table, target: exp.Table, where, items=()):
    """(row numbers the WHERE selects, the values of ``items`` for them) over
    ``data``; ``items`` are (column, AST expression) of an UPDATE's SET."""
    tmp = f"{HIDDEN_PREFIX}dml_{next(_tmp_ids)}"
    rowid = pa.array(np.arange(data.num_rows, dtype=np.int64))
    con.create_table(tmp, data.append_column(ROWID, rowid), {**table.schema, ROWID: T.BIGINT}, temporary=True)
    try:
        alias = target.alias or table.name
        src = exp.Table(this=exp.to_identifier(tmp, quoted=True), alias=exp.TableAlias(this=exp.to_identifier(alias)))
        query = exp.select(exp.column(ROWID, table=alias), *[e for _, e in items]).from_(src)
        if where is not None:
            query = query.where(where.copy())
        query = frontend.inline_views(query, con._views)
        binder = Binder(con)
        bound = frontend.bind_query(query, con, binder)
        exprs = [(binder.field(ROWID, T.BIGINT), ColRef(bound.outputs[0][1]))]
        for (c, _), (_, f) in zip(items, bound.outputs[1:]):
            exprs.append((binder.field(c, table.schema[c]), ty.assign(ColRef(f), table.schema[c], f'column "{c}"')))
        bound.plan, bound.outputs = L.Project(bound.plan, tuple(exprs)), [(f.name, f) for f, _ in exprs]
        out = con.query_table(bound=bound)[0]
    finally:
        con.unregister(tmp)
    return out.column(0).to_numpy(zero_copy_only=False).astype(np.int64), out.drop_columns([out.column_names[0]])


def delete(con, stmt: exp.Delete):
    _refuse(con, stmt, "DELETE")
    if stmt.args.get("using"):
        raise NotSupported("DELETE ... USING")
    table = target_table(con, stmt.this, "DELETE")
    where = stmt.args.get("where")
    data = table.to_arrow()
    if where is None:
        keep = np.zeros(data.num_rows, dtype=bool)
    else:
        ids, _ = _selected(con, table, data, stmt.this, where.this)
        keep = np.ones(data.num_rows, dtype=bool)
        keep[ids] = False
    con.create_table(table.name, data.filter(pa.array(keep)), table.schema, table.rules)
    return count_result(con, int(data.num_rows - keep.sum()))


def _assignments(table, stmt: exp.Update) -> list[tuple[str, exp.Expression]]:
    by_lower = {c.lower(): c for c in table.schema}
    out = []
    for a in stmt.expressions:
        if not isinstance(a, exp.EQ) or not isinstance(a.this, exp.Column):
            raise BinderError(f"UPDATE ... SET expects column = value, got {a.sql(dialect='duckdb')}")
        c = by_lower.get(a.this.name.lower())
        if c is None:
            raise ColumnNotFound(
                f"Referenced update column {a.this.name} not found in table!"
                f"{did_you_mean(a.this.name, list(table.schema))}"
            )
        if any(c == d for d, _ in out):
            raise BinderError(f'Multiple assignments to same column "{c}"')
        value = a.expression
        default = (
            isinstance(value, exp.Var) or isinstance(value, exp.Column) and not value.table and not value.this.quoted
        )
        out.append((c, None if default and value.name.upper() == "DEFAULT" else value))
    return out


def _defaults(table, columns: list[str], n: int) -> dict[str, pa.Array]:
    """SET c = DEFAULT: the column's default (or NULL) for n rows."""
    from glint.functions.evaluate import constant
    from glint.sql.bind_insert import default_value

    out = {}
    for c in columns:
        d = default_value(table, c)
        out[c] = constant(d.value, d.type, n, "cpu").to_arrow()
    return out


def update(con, stmt: exp.Update):
    _refuse(con, stmt, "UPDATE")
    if stmt.args.get("from") or stmt.args.get("from_"):
        raise NotSupported("UPDATE ... FROM")
    table = target_table(con, stmt.this, "UPDATE")
    items = _assignments(table, stmt)
    where = stmt.args.get("where")
    data = table.to_arrow()
    computed = [(c, e) for c, e in items if e is not None]
    ids, values = _selected(con, table, data, stmt.this, where.this if where is not None else None, computed)
    for c, a in _defaults(table, [c for c, e in items if e is None], len(ids)).items():
        values = values.append_column(c, a)
    values = conform(values.select([c for c, _ in items]), {c: table.schema[c] for c, _ in items})
    check_not_null(table, values, [c for c, _ in items])
    pos = np.full(data.num_rows, -1, dtype=np.int64)
    pos[ids] = np.arange(len(ids), dtype=np.int64)
    chosen = pa.array(pos >= 0)
    at = pa.array(pos, mask=pos < 0)
    cols = []
    for c, col in zip(data.column_names, data.columns):
        if c in values.column_names:
            col = pc.if_else(chosen, values.column(c).take(at), col)
        cols.append(col)
    con.create_table(table.name, pa.Table.from_arrays(cols, names=data.column_names), table.schema, table.rules)
    return count_result(con, len(ids))
