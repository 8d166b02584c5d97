"""CREATE TABLE column definitions: names, types, NOT NULL and DEFAULT.

Constraints glint does not enforce (PRIMARY KEY, UNIQUE, CHECK, FOREIGN
KEY, generated columns, collations) are refused by name while the statement
is bound, never accepted and ignored.

>>> import sqlglot
>>> ast = sqlglot.parse_one("CREATE TABLE t (a INTEGER NOT NULL, b VARCHAR DEFAULT 'x', c DECIMAL(15,2))",
...                         read="duckdb")
>>> types, rules = table_definition(ast.this)
>>> types, sorted(rules.not_null), rules.default("b").value
({'a': INTEGER, 'b': VARCHAR, 'c': DECIMAL(15,2)}, ['a'], 'x')
>>> table_definition(sqlglot.parse_one("CREATE TABLE t (a INT PRIMARY KEY)", read="duckdb").this)
Traceback (most recent call last):
...
glint.errors.NotSupported: Not supported: PRIMARY KEY constraints (column a)
"""

from __future__ import annotations

import itertools

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported
from glint.functions.evaluate import constant_value as evaluate_constant
from glint.io.table import ColumnRules
from glint.plan import typing as ty
from glint.plan.expr import Field, Literal
from glint.sql.bind_expr import sql_type

_REFUSED = {
    exp.PrimaryKeyColumnConstraint: "PRIMARY KEY constraints",
    exp.PrimaryKey: "PRIMARY KEY constraints",
    exp.UniqueColumnConstraint: "UNIQUE constraints",
    exp.CheckColumnConstraint: "CHECK constraints",
    exp.Reference: "FOREIGN KEY constraints",
    exp.ForeignKey: "FOREIGN KEY constraints",
    exp.CollateColumnConstraint: "COLLATE",
    exp.GeneratedAsIdentityColumnConstraint: "generated columns",
    exp.ComputedColumnConstraint: "generated columns",
    exp.LikeProperty: "CREATE TABLE ... (LIKE ...)",
}


class _FieldMaker:
    """Field ids for binding a lone constant (a DEFAULT)."""

    def __init__(self):
        self._ids = itertools.count(1)

    def field(self, name: str, type_: T.DataType) -> Field:
        return Field(next(self._ids), name, type_)


def constant_value(e) -> Literal:
    """A constant expression's value (its error, a failed CAST, is raised now)."""
    return Literal(evaluate_constant(e), e.type)


def table_name(node: exp.Table) -> str:
    """The name a statement creates or writes; only the default schema exists."""
    if node.args.get("catalog") or (node.db and node.db.lower() not in ("main",)):
        raise NotSupported(f"schemas and catalogs (table {node.sql(dialect='duckdb')})")
    if isinstance(node.this, exp.Anonymous) or not node.name:
        raise BinderError(f"expected a table name, got {node.sql(dialect='duckdb')}")
    return node.name


def table_definition(schema: exp.Schema) -> tuple[dict[str, T.DataType], ColumnRules]:
    """(column name -> type, NOT NULL columns and DEFAULTs) of a CREATE TABLE's column list."""
    from glint.sql.bind_values import bind_cell

    types: dict[str, T.DataType] = {}
    not_null, defaults = set(), []
    for item in schema.expressions:
        if not isinstance(item, exp.ColumnDef):
            what = item.args.get("kind") if isinstance(item, exp.Constraint) else item
            refused = next((v for k, v in _REFUSED.items() if isinstance(what, k)), None)
            if isinstance(item, exp.Constraint) and refused is None:
                inner = item.expressions[0] if item.expressions else None
                refused = next((v for k, v in _REFUSED.items() if isinstance(inner, k)), None)
            raise NotSupported(refused or f"table constraint {item.sql(dialect='duckdb')[:60]}")
        name = item.name
        if name.lower() in {n.lower() for n in types}:
            raise BinderError(f'Column with name "{name}" already exists')
        if item.args.get("kind") is None:
            raise BinderError(f'column "{name}" needs a type')
        t = sql_type(item.args["kind"])
        types[name] = t
        for c in item.args.get("constraints") or []:
            kind = c.args.get("kind")
            if isinstance(kind, exp.NotNullColumnConstraint):
                if not kind.args.get("allow_null"):
                    not_null.add(name)
                continue
            if isinstance(kind, exp.DefaultColumnConstraint):
                value = ty.assign(bind_cell(kind.this, _FieldMaker()), t, f'the DEFAULT of column "{name}"')
                defaults.append((name, constant_value(value)))
                continue
            refused = next((v for k, v in _REFUSED.items() if isinstance(kind, k)), None)
            raise NotSupported(
                f"{refused} (column {name})"
                if refused
                else f"column constraint {c.sql(dialect='duckdb')} (column {name})"
            )
    if not types:
        raise BinderError("a table needs at least one column")
    return types, ColumnRules(frozenset(not_null), tuple(defaults))
