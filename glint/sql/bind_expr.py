"""Binding of sqlglot expressions to typed glint expressions.

Syntax (columns, constants, CAST, CASE, IS, IN, subqueries, INTERVAL) has a
function per sqlglot node type, registered with ``functools.singledispatch``.
A function call or an operator is bound through the function registry
(glint.functions.builtins): the node's arguments (glint.sql.function_calls
says which) are bound as the function's bind rule reads them, and the rule
makes the typed expression. Subquery expressions are handed back to the
query binder, which plans the join that computes them and returns the
column that holds their value.

>>> import sqlglot
>>> from glint.sql.dialect import DIALECT
>>> bind(sqlglot.parse_one("regexp_replace('abc', 'b', 'x', 'g')", read=DIALECT), ExprContext(None, None))
regexp_replace('abc', 'b', 'x', 'g')
>>> bind(sqlglot.parse_one("'abc' ~ 'a.c'", read=DIALECT), ExprContext(None, None))
regexp_matches('abc', 'a.c', '', True)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, ExecutionError, NotSupported
from glint.functions.builtins import BUILTINS
from glint.functions.registry import OPERATOR, BindRule, CallSite
from glint.plan import typing as ty
from glint.plan.expr import Call, Case, ColRef, Expr, Literal
from glint.sql import function_calls as F
from glint.sql.folding import fold_expr
from glint.sql.literals import date_literal, interval_text, interval_unit, scaled, timestamp_literal


class ExprContext:
    """What an expression is bound against.

    scope: the FROM scope (columns); groups/aggs: in post-aggregation mode, the
    AST text of each GROUP BY expression / aggregate mapped to its output field;
    subqueries: callback planning a subquery expression into a join.
    """

    __slots__ = ("scope", "groups", "aggs", "binder", "pending", "empty_aggs", "windows", "grouping", "unnests")

    def __init__(self, scope, binder, groups=None, aggs=None):
        self.scope = scope
        self.binder = binder
        self.groups = groups  # dict[str, Field] | None
        self.aggs = aggs  # dict[str, Field] | None
        self.pending = []  # plan -> plan functions (joins computing subqueries)
        self.empty_aggs = False  # bind aggregates as their value over an empty group
        self.windows = None  # dict[str, Field]: window calls (AST text) -> the Window node's column
        self.grouping = None  # what GROUPING() reads (glint.sql.bind_agg.GroupingInfo), after GROUP BY
        self.unnests = None  # dict[str, Expr]: UNNEST calls of the SELECT list (AST text) -> their element


def bind(node: exp.Expression, ctx: ExprContext) -> Expr:
    if ctx.groups is not None:
        key = node.sql(dialect="duckdb")
        f = ctx.groups.get(key)
        if f is not None:
            return ColRef(f)
    e = _bind(node, ctx)
    if isinstance(e, (Call, Case)) and any(c.type.kind == "INTERVAL" for c in e.children):
        # INTERVALs exist only as constants that date arithmetic and window frames take in
        raise NotSupported(f"INTERVAL values other than constants of date arithmetic: {ty.show(e)}")
    return e


@functools.singledispatch
def _bind(node, ctx) -> Expr:
    if isinstance(node, exp.Func):  # a function sqlglot knows and glint does not run: its SQL name
        raise NotSupported(f"{node.sql_name().lower()}()")
    raise NotSupported(f"expression {type(node).__name__}: {node.sql(dialect='duckdb')[:80]}")


# ---------------------------------------------------------------- calls through the registry
class Arguments(Sequence):
    """A call's arguments, each bound when the bind rule first reads it (None
    for an absent one), so that the rule decides the order of binding and
    checking, and an argument it never reads is never bound. An argument the
    syntax has already bound (an expression) is passed as it is."""

    __slots__ = ("_nodes", "_ctx", "_binders", "_bound")
    _UNBOUND = object()

    def __init__(self, nodes: list, ctx: ExprContext, binders=None):
        self._nodes = nodes
        self._ctx = ctx
        self._binders = binders or {}
        self._bound = [self._UNBOUND] * len(nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(len(self._nodes))[i]]
        i = range(len(self._nodes))[i]
        if self._bound[i] is self._UNBOUND:
            node = self._nodes[i]
            binder = self._binders.get(i)
            if node is None or isinstance(node, Expr):
                self._bound[i] = node
            else:
                self._bound[i] = binder(node, self._ctx, bind) if binder is not None else bind(node, self._ctx)
        return self._bound[i]


def bind_call(rule: BindRule, nodes: list, ctx: ExprContext, name: str, options=None, binders=None):
    """A function's bind rule applied to its argument nodes (``name``: as
    errors spell the function; ``binders``: arguments, by position, bound in a
    way of their own)."""
    return rule(Arguments(nodes, ctx, binders), CallSite(name, options or {}, fold_expr))


def _node_call(call: F.NodeCall):
    """The binding of a node type that is a call of a registry function."""

    def bind_node(node: exp.Expression, ctx: ExprContext) -> Expr:
        if call.refuse is not None:
            error = call.refuse(node)
            if error is not None:
                raise error
        name = call.function(node)
        options = call.options(node) if call.options is not None else None
        return bind_call(
            BUILTINS.get(name, call.kind).bind, call.arguments(node), ctx, name.upper(), options, call.binders
        )

    return bind_node


def _refused(error: type, message: str):
    def refuse(node: exp.Expression, ctx: ExprContext) -> Expr:
        raise error(message)

    return refuse


for _cls, _call in F.SCALAR_NODES.items():
    _bind.register(_cls)(_node_call(_call))
for _cls, (_error, _message) in F.REFUSED_NODES.items():
    _bind.register(_cls)(_refused(_error, _message))


@_bind.register
def _(node: exp.Anonymous, ctx):
    """A call sqlglot does not know, found in the registry by name."""
    name = node.name.lower()
    f = BUILTINS.lookup(name)
    if f is None:
        refused = F.REFUSED_NAMES.get(name)
        if refused is not None:
            raise refused[0](refused[1])
        raise NotSupported(f"function {node.name}()")
    return bind_call(f.bind, list(node.expressions), ctx, node.name, None, F.ANONYMOUS_BINDERS.get(f.name))


def _operator(name: str, args: list, ctx: ExprContext, options=None) -> Expr:
    return bind_call(BUILTINS.get(name, OPERATOR).bind, args, ctx, name.upper(), options)


# ---------------------------------------------------------------- columns and constants
@_bind.register
def _(node: exp.Paren, ctx):
    return bind(node.this, ctx)


@_bind.register
def _(node: exp.Column, ctx):
    if isinstance(node.this, exp.Star):
        raise NotSupported("* in this position")
    table = node.table or None
    if ctx.groups is not None:
        f, _ = ctx.scope.resolve(table, node.name)
        raise BinderError(
            f'column "{node.name}" must appear in the GROUP BY clause or be used in an aggregate function'
        )
    f, _ = ctx.scope.resolve(table, node.name)
    return ColRef(f)


@_bind.register
def _(node: exp.Dot, ctx):
    """sqlglot's qualify reads ``v.c`` in a SEMI / ANTI join's ON as a field of a
    column ``v.v`` when the joined table's alias is also one of its column names
    (``(VALUES ...) AS v(a, v)``): that is the column ``v.c`` (glint has no STRUCT
    fields to access)."""
    col, field = node.this, node.expression
    if isinstance(col, exp.Column) and isinstance(field, exp.Identifier) and col.table and col.table == col.name:
        return bind(exp.Column(this=field.copy(), table=exp.to_identifier(col.table)), ctx)
    raise NotSupported(f"field access {node.sql(dialect='duckdb')[:80]} (glint has no STRUCT values)")


@_bind.register
def _(node: exp.Literal, ctx):
    if node.is_string:
        return Literal(node.this, T.VARCHAR)
    return ty.literal_number(node.this)


@_bind.register
def _(node: exp.Boolean, ctx):
    return Literal(bool(node.this), T.BOOLEAN)


@_bind.register
def _(node: exp.Null, ctx):
    return Literal(None, T.NULLTYPE)


@_bind.register
def _(node: exp.Interval, ctx):
    unit = node.args.get("unit")
    unit = unit.name if unit is not None else None
    if isinstance(node.this, exp.Literal):
        amount = node.this.name
    else:
        v = bind(node.this, ctx)
        if not isinstance(v, Literal) or not isinstance(v.value, int) or isinstance(v.value, bool):
            raise NotSupported("INTERVAL with a non-constant amount")
        amount = str(v.value)
    if unit is None:
        return Literal(interval_text(amount), T.INTERVAL)
    try:
        n = int(amount.strip())
    except ValueError:
        raise NotSupported(f"INTERVAL '{amount}' {unit} (a fractional or compound amount with a unit)") from None
    return Literal(scaled(n, interval_unit(unit)), T.INTERVAL)


@_bind.register
def _(node: exp.Cast, ctx):
    """CAST(x AS t), x::t and TRY_CAST(x AS t) (sqlglot's TryCast is a Cast)."""
    to = sql_type(node.to)
    inner = node.this
    safe = isinstance(node, exp.TryCast)
    if to.kind in ("DATE", "TIMESTAMP") and isinstance(inner, exp.Literal) and inner.is_string:
        try:
            if to.kind == "DATE":
                return Literal(date_literal(inner.this), T.DATE)
            return timestamp_literal(inner.this)
        except ExecutionError:
            if safe:
                return Literal(None, to)
            raise
    if to.kind == "INTERVAL":
        if safe:
            raise NotSupported("TRY_CAST to INTERVAL")
        if isinstance(inner, exp.Literal) and inner.is_string:
            return Literal(interval_text(inner.this), T.INTERVAL)
        raise NotSupported("CAST to INTERVAL of a value that is not a constant string")
    return _operator("try_cast" if safe else "cast", [inner], ctx, {"to": to})


# types glint does not compute in: a CAST to one of them must check its range
# and keep its width (DuckDB's ABS(CAST(-32768 AS SMALLINT)) overflows, and a
# FLOAT holds 0.1 as a 32-bit value), so it is refused rather than widened
_NARROW_TYPES = {
    "TINYINT": "INTEGER",
    "SMALLINT": "INTEGER",
    "UTINYINT": "INTEGER",
    "USMALLINT": "INTEGER",
    "UINT": "BIGINT",
    "UBIGINT": "HUGEINT",
    "UINT128": "HUGEINT",
    "FLOAT": "DOUBLE",
}


def sql_type(dt: exp.DataType) -> T.DataType:
    if dt.args.get("nested"):
        raise NotSupported(f"type {dt.sql(dialect='duckdb')} (lists, structs and maps)")
    params = [int(p.this.this) if isinstance(p.this, exp.Literal) else int(p.name) for p in dt.expressions]
    name = dt.this.name if hasattr(dt.this, "name") else str(dt.this)
    if name in _NARROW_TYPES:
        spelled = {"UINT": "UINTEGER", "FLOAT": "FLOAT (32-bit REAL)", "UINT128": "UHUGEINT"}.get(name, name)
        raise NotSupported(
            f"type {spelled}: glint computes in INTEGER, BIGINT, HUGEINT and DOUBLE (use {_NARROW_TYPES[name]})"
        )
    name = {"INT": "INTEGER", "TEXT": "VARCHAR"}.get(name, name)
    return T.from_sql_name(name, params)


# ---------------------------------------------------------------- operators with syntax of their own
@_bind.register
def _(node: exp.Neg, ctx):
    lit = node.this
    if isinstance(lit, exp.Literal) and not lit.is_string and lit.this.isdigit() and int(lit.this) == 2**63:
        return Literal(-(2**63), T.BIGINT)  # BIGINT's minimum: its magnitude alone is beyond 64 bits (DuckDB)
    return _operator("neg", [node.this], ctx)


@_bind.register
def _(node: exp.Not, ctx):
    inner = node.this
    if isinstance(inner, (exp.Exists, exp.In)) and _has_query(inner):
        return ctx.binder.bind_subquery_predicate(inner, ctx, negate=True)
    return _operator("not", [inner], ctx)


@_bind.register
def _(node: exp.Is, ctx):
    if isinstance(node.expression, exp.Null):
        return _operator("is_null", [node.this], ctx)
    if isinstance(node.expression, exp.Boolean):
        v = ty.require_boolean(bind(node.this, ctx), "IS TRUE/FALSE operand")
        return _operator("is_not_distinct", [v, Literal(bool(node.expression.this), T.BOOLEAN)], ctx)
    bind(node.this, ctx)
    raise NotSupported(f"IS {node.expression.sql()}")


@_bind.register
def _(node: exp.In, ctx):
    if _has_query(node):
        return ctx.binder.bind_subquery_predicate(node, ctx, negate=False)
    if node.args.get("unnest") or node.args.get("field"):
        raise NotSupported("IN UNNEST / IN field")
    return _operator("in_list", [node.this, *node.expressions], ctx, {"text": f"{node.sql(dialect='duckdb')[:60]}"})


@_bind.register
def _(node: exp.Escape, ctx):
    """s [NOT] [I]LIKE p ESCAPE e: the escape character is a constant option."""
    esc = node.expression
    inner = node.this
    if isinstance(inner, exp.SimilarTo):
        raise NotSupported("SIMILAR TO ... ESCAPE (DuckDB does not implement it either)")
    if not isinstance(inner, (exp.Like, exp.ILike)):
        raise NotSupported(f"ESCAPE on {type(inner).__name__}")
    if isinstance(esc, exp.Null):
        return Literal(None, T.BOOLEAN)
    if not (isinstance(esc, exp.Literal) and esc.is_string):
        raise NotSupported("ESCAPE with a non-constant escape character")
    options = {
        "case_insensitive": isinstance(inner, exp.ILike),
        "negate": bool(inner.args.get("negate")),
        "escape": esc.this,
    }
    return _operator("like", [inner.this, inner.expression], ctx, options)


# ---------------------------------------------------------------- subqueries
def _has_query(node) -> bool:
    return isinstance(node, exp.Exists) or node.args.get("query") is not None


@_bind.register
def _(node: exp.Explode, ctx):
    """UNNEST in the SELECT list: the element the row stands for (glint.sql.row_sources)."""
    value = ctx.unnests.get(node.sql(dialect="duckdb")) if ctx.unnests else None
    if value is None:
        raise BinderError("UNNEST not supported here")
    return value


@_bind.register
def _(node: exp.GenerateSeries, ctx):
    fn = "range" if node.args.get("is_end_exclusive") else "generate_series"
    raise NotSupported(f"{fn}() as a value (glint has no LIST values: use FROM {fn}(...) or unnest({fn}(...)))")


@_bind.register
def _(node: exp.Exists, ctx):
    return ctx.binder.bind_subquery_predicate(node, ctx, negate=False)


@_bind.register
def _(node: exp.Subquery, ctx):
    return ctx.binder.bind_scalar_subquery(node, ctx)


@_bind.register
def _(node: exp.Select, ctx):
    return ctx.binder.bind_scalar_subquery(node, ctx)


# ---------------------------------------------------------------- CASE, windows
@_bind.register
def _(node: exp.Case, ctx):
    operand = node.args.get("this")
    op = bind(operand, ctx) if operand is not None else None
    whens = []
    for w in node.args.get("ifs") or []:
        cond = bind(w.this, ctx)
        cond = ty.compare("eq", op, cond) if op is not None else ty.require_boolean(cond, "CASE WHEN condition")
        whens.append((cond, bind(w.args["true"], ctx)))
    default = node.args.get("default")
    d = bind(default, ctx) if default is not None else Literal(None, T.NULLTYPE)
    t = ty.common_of([v for _, v in whens] + [d], "CASE results")
    return Case(tuple((c, ty.cast(v, t)) for c, v in whens), ty.cast(d, t), t)


@_bind.register
def _(node: exp.Window, ctx):
    f = ctx.windows.get(node.sql(dialect="duckdb")) if ctx.windows is not None else None
    if f is None:
        raise BinderError("window functions are not allowed here")
    return ColRef(f)
