"""INSERT INTO t [(columns)] VALUES ... | query | DEFAULT VALUES, and
INSERT INTO t BY NAME query: the plan of the rows to store.

The plan's output is the table's columns in the table's order and types:
each inserted value is cast to its column's type with DuckDB's implicit
(assignment) casts, failing as CAST fails ('x' into an INTEGER column is a
Conversion Error when the row is made, a DATE into an INTEGER column a type
error now). Columns the statement does not name take their DEFAULT, or NULL.
NOT NULL is checked on the rows themselves (glint.statements).
"""

from __future__ import annotations

from sqlglot import exp

from glint.errors import BinderError, ColumnNotFound, NotSupported, did_you_mean
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import ColRef, Expr, Literal
from glint.sql.bind_values import bind_cell
from glint.sql.binder import Binder, Bound


def _unsupported_parts(stmt: exp.Insert) -> None:
    if stmt.args.get("returning"):
        raise NotSupported("INSERT ... RETURNING")
    if stmt.args.get("alternative"):
        raise NotSupported(f"INSERT OR {stmt.args['alternative']}")
    if stmt.args.get("conflict"):
        raise NotSupported("INSERT ... ON CONFLICT")
    if stmt.args.get("overwrite"):
        raise NotSupported("INSERT OVERWRITE")
    for k in ("partition", "where", "settings", "source"):
        if stmt.args.get(k):
            raise NotSupported(f"INSERT with {k.upper()}")


def _column_lookup(table, name: str, what: str) -> str:
    by_lower = {c.lower(): c for c in table.schema}
    c = by_lower.get(name.lower())
    if c is None:
        raise ColumnNotFound(
            f'Table "{table.name}" does not have a column with name "{name}"'
            f"{did_you_mean(name, list(table.schema))} ({what})"
        )
    return c


def target_columns(stmt: exp.Insert, table) -> list[str] | None:
    """The columns an INSERT names, in its order (None: all, in the table's order)."""
    target = stmt.this
    if not isinstance(target, exp.Schema):
        return None
    out = []
    for ident in target.expressions:
        c = _column_lookup(table, ident.name, "in the INSERT's column list")
        if c in out:
            raise BinderError(f'Duplicate column name "{ident.name}" in INSERT')
        out.append(c)
    return out


def default_value(table, column: str) -> Expr:
    d = table.rules.default(column)
    return d if d is not None else Literal(None, table.schema[column])


def bind_insert(stmt: exp.Insert, catalog, table) -> Bound:
    """The rows an INSERT adds, as a plan producing the table's columns."""
    from glint.sql.frontend import bind_query

    _unsupported_parts(stmt)
    binder = Binder(catalog)
    columns = target_columns(stmt, table)
    source = stmt.args.get("expression")
    if stmt.args.get("by_name"):
        if columns is not None:
            raise BinderError("INSERT ... BY NAME cannot be combined with a column list")
        if source is None or isinstance(source, exp.Values):
            raise BinderError("INSERT ... BY NAME needs a query (its column names name the table's columns)")
    if stmt.args.get("default"):
        row = tuple(default_value(table, c) for c in table.schema)
        fields = tuple(binder.field(c, t) for c, t in table.schema.items())
        return Bound(L.Values((row,), fields), list(zip(table.schema, fields)))
    if isinstance(source, exp.Values):
        return _bind_values_insert(source, table, columns, binder)
    if source is None:
        raise BinderError("INSERT without VALUES or a query")
    bound = bind_query(source, catalog, binder)
    if stmt.args.get("by_name"):
        columns = [_column_lookup(table, n, "named by the query of INSERT ... BY NAME") for n, _ in bound.outputs]
        if len(set(columns)) != len(columns):
            raise BinderError("INSERT ... BY NAME: the query names a column twice")
    want = columns if columns is not None else list(table.schema)
    if len(bound.outputs) != len(want):
        raise BinderError(_count_message(table, columns, len(want), len(bound.outputs)))
    given = dict(zip(want, (f for _, f in bound.outputs)))
    exprs = []
    for c, t in table.schema.items():
        e = ty.assign(ColRef(given[c]), t, f'column "{c}"') if c in given else default_value(table, c)
        exprs.append((binder.field(c, t), e))
    plan = L.Project(bound.plan, tuple(exprs))
    return Bound(plan, [(c, f) for c, (f, _) in zip(table.schema, exprs)])


def _count_message(table, columns, want: int, got: int) -> str:
    if columns is None:
        return f"table {table.name} has {want} columns but {got} values were supplied"
    return (
        f"Column name/value mismatch for insert on {table.name}: expected {want} columns but {got} values were supplied"
    )


def _bind_values_insert(source: exp.Values, table, columns, binder) -> Bound:
    """Each entry bound on its own and cast straight to its column's type
    (DuckDB binds INSERT ... VALUES against the table's types, so ('2', 3)
    goes into (INTEGER, VARCHAR) columns)."""
    want = columns if columns is not None else list(table.schema)
    rows = []
    for r in source.expressions:
        cells = list(r.expressions) if isinstance(r, exp.Tuple) else [r]
        if len(cells) != len(want):
            raise BinderError(_count_message(table, columns, len(want), len(cells)))
        given = {}
        for c, cell in zip(want, cells):
            t = table.schema[c]
            if isinstance(cell, exp.Var) and cell.name.upper() == "DEFAULT":
                given[c] = default_value(table, c)
            else:
                given[c] = ty.assign(bind_cell(cell, binder), t, f'column "{c}"')
        rows.append(tuple(given[c] if c in given else default_value(table, c) for c in table.schema))
    fields = tuple(binder.field(c, t) for c, t in table.schema.items())
    return Bound(L.Values(tuple(rows), fields), list(zip(table.schema, fields)))
