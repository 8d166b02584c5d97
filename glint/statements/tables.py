"""CREATE TABLE (from column definitions or AS a query), DROP TABLE, INSERT
and TRUNCATE, with DuckDB's catalog rules and messages."""

from __future__ import annotations

import pyarrow as pa
from sqlglot import exp

from glint.columnar import types as T
from glint.errors import CatalogError, ConstraintError, NotSupported, did_you_mean
from glint.io.appended import canonical_type, conform
from glint.io.csv_auto import unique_names
from glint.io.table import ColumnRules
from glint.sql import frontend
from glint.sql.bind_ddl import table_definition, table_name
from glint.sql.bind_insert import bind_insert


def count_result(con, n: int) -> pa.Table:
    """DuckDB's answer to a statement that writes rows: one row, ``Count``."""
    return pa.table({"Count": pa.array([n], pa.int64())})


def empty_data(types: dict[str, T.DataType]) -> pa.Table:
    return pa.schema([(c, canonical_type(t)) for c, t in types.items()]).empty_table()


def is_view(con, name: str) -> bool:
    return name.lower() in con._views


def target_table(con, node: exp.Expression, statement: str):
    """The table a statement writes (a view or a missing table is an error)."""
    if isinstance(node, exp.Schema):
        node = node.this
    name = table_name(node)
    if is_view(con, name):
        raise CatalogError(f"{name} is not a table: {statement} needs a table, not a view")
    if not con.has_table(name):
        raise CatalogError(f"Table with name {name} does not exist!{did_you_mean(name, con.table_names())}")
    return con.table(name)


def check_not_null(table, data: pa.Table, columns=None) -> None:
    for c in sorted(table.rules.not_null):
        if (columns is None or c in columns) and data.column(c).null_count:
            raise ConstraintError(f"Constraint Error: NOT NULL constraint failed: {table.name}.{c}")


def create_table(con, stmt: exp.Create):
    target = stmt.this
    table_node = target.this if isinstance(target, exp.Schema) else target
    name = table_name(table_node)
    temporary = False
    for p in stmt.args.get("properties").expressions if stmt.args.get("properties") else []:
        if not isinstance(p, exp.TemporaryProperty):
            raise NotSupported(f"CREATE TABLE property {p.sql(dialect='duckdb')}")
        temporary = True
    if is_view(con, name):
        if stmt.args.get("replace"):
            raise CatalogError(f"Existing object {name} is of type View, trying to replace with type Table")
        if stmt.args.get("exists"):
            return None
        raise CatalogError(f'Table with name "{name}" already exists!')
    if con.has_table(name, temporary=temporary) and not stmt.args.get("replace"):
        if stmt.args.get("exists"):
            return None
        raise CatalogError(f'Table with name "{name}" already exists!')
    query = stmt.expression
    if query is None:
        if not isinstance(target, exp.Schema):
            raise CatalogError(f"CREATE TABLE {name} needs columns or AS a query")
        types, rules = table_definition(target)
        con.create_table(name, empty_data(types), types, rules, temporary=temporary)
        return None
    if isinstance(target, exp.Schema):
        raise NotSupported("CREATE TABLE with a column list AS a query")
    data, fields = con.query_table(query)
    names = unique_names(list(data.column_names))
    # a bare NULL column is stored as INTEGER, as DuckDB stores it
    types = {n: (T.INTEGER if f.type.kind == "NULL" else f.type) for n, f in zip(names, fields)}
    con.create_table(name, conform(data.rename_columns(names), types), types, ColumnRules(), temporary=temporary)
    return count_result(con, data.num_rows)


def drop_table(con, stmt: exp.Drop):
    for node in stmt.args.get("tables") or [stmt.this]:
        name = table_name(node)
        if is_view(con, name):
            raise CatalogError(f"Existing object {name} is of type View, trying to drop type Table")
        if name.lower() in {n.lower() for n in con.table_names()}:
            con.unregister(name)
        elif not stmt.args.get("exists"):
            raise CatalogError(f"Table with name {name} does not exist!{did_you_mean(name, con.table_names())}")
    return None


def insert(con, stmt: exp.Insert):
    table = target_table(con, stmt.this, "INSERT")
    source = stmt.args.get("expression")
    if source is not None and not isinstance(source, exp.Values):
        stmt = stmt.copy()
        stmt.set("expression", frontend.inline_views(source.copy(), con._views))
    data = con.query_table(bound=bind_insert(stmt, con, table))[0]
    check_not_null(table, data)
    con.append_rows(table.name, data)
    return count_result(con, data.num_rows)


def truncate(con, stmt: exp.TruncateTable):
    n = 0
    for node in stmt.expressions:
        table = target_table(con, node, "TRUNCATE")
        n += table.num_rows
        con.create_table(table.name, empty_data(table.schema), table.schema, table.rules)
    return count_result(con, n)
