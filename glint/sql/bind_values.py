"""VALUES lists: ``SELECT * FROM (VALUES (1, 'a'), (2, NULL)) AS t(x, y)`` and
``VALUES (1), (2)`` as a query of its own.

Column names are DuckDB's: the alias's names, then ``col0``, ``col1``...
for the columns it does not name. Each column's type comes from its values
row by row, as DuckDB combines them:

- a NULL takes the other rows' type (all NULL: the NULL type, INTEGER once stored);
- a string literal (``'2'``) in a later row takes the type the rows before it
  have (and is cast to it), while one in the first row is VARCHAR;
- numbers combine to the wider number (INTEGER and DECIMAL(2,1) make
  DECIMAL(11,1); any DOUBLE makes DOUBLE), BOOLEAN and an integer to the
  integer type;
- anything else (VARCHAR and INTEGER, DATE and a number) needs an explicit
  cast: a TypeMismatch naming both types.

>>> from glint.columnar import types as T
>>> one = [(T.INTEGER, False)]
>>> row_types([one, [(T.DECIMAL(2, 1), False)]]), row_types([one, [(T.VARCHAR, True)]])
([DECIMAL(11,1)], [INTEGER])
>>> row_types([[(T.VARCHAR, True)], [(T.INTEGER, False)]])
Traceback (most recent call last):
...
glint.errors.TypeMismatch: Cannot combine types VARCHAR and INTEGER in VALUES - an explicit cast is required
"""

from __future__ import annotations

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported, TypeMismatch
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Expr
from glint.sql.bind_expr import ExprContext, bind
from glint.sql.scope import Scope


def column_names(n: int, given: list[str]) -> list[str]:
    """The alias's names, then DuckDB's col<i> for the rest.

    >>> column_names(3, ["x"])
    ['x', 'col1', 'col2']
    """
    return list(given) + [f"col{i}" for i in range(len(given), n)]


def _width(node: exp.Values) -> int:
    rows = node.expressions
    widths = {len(r.expressions) if isinstance(r, exp.Tuple) else 1 for r in rows}
    if len(widths) > 1:
        raise BinderError("VALUES lists must all be the same length")
    return widths.pop()


def normalize_values(ast: exp.Expression, copy: bool = True) -> exp.Expression:
    """Names every VALUES list's columns before qualification: one in FROM
    gets its alias's names completed with col<i>; one elsewhere (a query of
    its own, a set operation's side, a CTE's body) becomes
    ``SELECT * FROM (VALUES ...)`` with its ORDER BY / LIMIT moved to the SELECT."""

    def fix(node):
        if not isinstance(node, exp.Values):
            return node
        n = _width(node)
        alias = node.args.get("alias")
        given = [c.meta.get("display") or c.name for c in alias.columns] if alias is not None and alias.columns else []
        if len(given) > n:
            name = alias.name or "unnamed_subquery"
            raise BinderError(f'table "{name}" has {n} columns available but {len(given)} columns specified')
        cols = [exp.to_identifier(c) for c in column_names(n, given)]
        for c in cols:
            c.meta["display"] = c.name  # (as written: qualify lower-cases it)
        if isinstance(node.parent, (exp.From, exp.Join)):
            new_alias = exp.TableAlias(this=alias.this if alias is not None else None, columns=cols)
            node.set("alias", new_alias)
            return node
        tail = {k: node.args.get(k) for k in ("order", "limit", "offset") if node.args.get(k) is not None}
        inner = node.copy()
        for k in list(tail) + ["alias"]:
            inner.set(k, None)
        inner.set("alias", exp.TableAlias(this=exp.to_identifier("unnamed_subquery"), columns=cols))
        sel = exp.select("*").from_(inner)
        for k, v in tail.items():
            sel.set(k, v)
        return sel

    return ast.transform(fix, copy=copy)


def _combine(acc: T.DataType | None, t: T.DataType, string_literal: bool) -> T.DataType:
    if acc is None:
        return t
    if t.kind == "NULL" or acc == t:
        return acc
    if acc.kind == "NULL":
        return t
    if string_literal:
        return acc  # cast to the type the rows before it have
    kinds = {acc.kind, t.kind}
    if acc.is_numeric and t.is_numeric:
        return T.common_type(acc, t)
    if "BOOLEAN" in kinds and (acc.is_integer or t.is_integer):
        return acc if acc.is_integer else t
    raise TypeMismatch(f"Cannot combine types {acc} and {t} in VALUES - an explicit cast is required")


def row_types(rows: list[list[tuple[T.DataType, bool]]]) -> list[T.DataType]:
    """Each column's type from its rows' (type, is a string literal)."""
    types: list[T.DataType | None] = [None] * len(rows[0])
    for row in rows:
        for i, (t, lit) in enumerate(row):
            types[i] = _combine(types[i], t, lit)
    return types


def bind_cell(node: exp.Expression, binder) -> Expr:
    """One VALUES entry: a constant expression."""
    if node.find(exp.Column) is not None:
        raise NotSupported(f"column references in VALUES ({node.sql(dialect='duckdb')}: DuckDB's implicit LATERAL)")
    ctx = ExprContext(Scope(None), binder)
    e = bind(node, ctx)
    if ctx.pending:
        raise NotSupported("subqueries in VALUES")
    if e.fields():
        raise NotSupported("column references in VALUES")
    if e.type.kind == "INTERVAL":
        raise NotSupported("INTERVAL values in results")
    return e


def _cells(row: exp.Expression) -> list[exp.Expression]:
    return list(row.expressions) if isinstance(row, exp.Tuple) else [row]


def bind_values(node: exp.Values, binder, names: list[str] | None = None):
    """(the Values plan, its outputs as (name, field))."""
    n = _width(node)
    names = names or column_names(n, [])
    rows = [[bind_cell(c, binder) for c in _cells(r)] for r in node.expressions]
    lits = [[isinstance(c, exp.Literal) and c.is_string for c in _cells(r)] for r in node.expressions]
    types = row_types([[(e.type, lit) for e, lit in zip(r, ls)] for r, ls in zip(rows, lits)])
    fields = tuple(binder.field(nm, t) for nm, t in zip(names, types))
    plan = L.Values(tuple(tuple(ty.cast(e, t) for e, t in zip(r, types)) for r in rows), fields)
    return plan, [(nm, f) for nm, f in zip(names, fields)]
