"""Binding of sqlglot expressions to typed glint expressions.

One function per sqlglot node type, registered with ``functools.singledispatch``
(STYLE.md habit 5). Subquery expressions are handed back to the query binder,
which plans the join that computes them and returns the column that holds
their value.
"""
from __future__ import annotations

import functools

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, ExecutionError, NotSupported, TypeMismatch
from glint.plan.expr import Call, Case, ColRef, Expr, Literal
from glint.plan import typing as ty


class ExprContext:
    """What an expression is bound against.

    scope: the FROM scope (columns); groups/aggs: in post-aggregation mode, the
    AST text of each GROUP BY expression / aggregate mapped to its output field;
    subqueries: callback planning a subquery expression into a join.
    """
    __slots__ = ("scope", "groups", "aggs", "binder", "pending", "empty_aggs", "windows", "grouping")

    def __init__(self, scope, binder, groups=None, aggs=None):
        self.scope = scope
        self.binder = binder
        self.groups = groups        # dict[str, Field] | None
        self.aggs = aggs            # dict[str, Field] | None
        self.pending = []           # plan -> plan functions (joins computing subqueries)
        self.empty_aggs = False     # bind aggregates as their value over an empty group
        self.windows = None         # dict[str, Field]: window calls (AST text) -> the Window node's column
        self.grouping = None        # what GROUPING() reads (glint.sql.bind_agg.GroupingInfo), after GROUP BY


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
    raise NotSupported(f"expression {type(node).__name__}: {node.sql(dialect='duckdb')[:80]}")


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
        raise BinderError(f'column "{node.name}" must appear in the GROUP BY clause or be used in an aggregate function')
    f, _ = ctx.scope.resolve(table, node.name)
    return ColRef(f)


@_bind.register
def _(node: exp.Dot, ctx):
    """sqlglot's qualify reads ``v.c`` in a SEMI / ANTI join's ON as a field of a
    column ``v.v`` when the joined table's alias is also one of its column names
    (``(VALUES ...) AS v(a, v)``): that is the column ``v.c`` (glint has no STRUCT
    fields to access)."""
    col, field = node.this, node.expression
    if isinstance(col, exp.Column) and isinstance(field, exp.Identifier) and col.table \
            and col.table == col.name:
        return bind(exp.Column(this=field.copy(), table=exp.to_identifier(col.table)), ctx)
    raise NotSupported(f"field access {node.sql(dialect='duckdb')[:80]} (glint has no STRUCT values)")


@_bind.register
def _(node: exp.Typeof, ctx):
    """typeof(x): the name of x's type as DuckDB spells it (a constant; x is bound
    for its type and never evaluated)."""
    t = bind(node.this, ctx).type
    return Literal('"NULL"' if t.kind == "NULL" else str(t), T.VARCHAR)


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


def parse_date_literal(s: str) -> int:
    """Days since 1970 of DATE 'text' (or 'text'::DATE), as DuckDB's CAST reads
    it; DuckDB's error when it does not."""
    import pyarrow as pa
    from glint.functions.dates import days as dates
    from glint.functions.strings import host as strings_host

    days, ok = dates.parse_dates(pa.array([s], pa.string()))
    if not ok[0]:
        raise ExecutionError(strings_host.cast_error(s, T.DATE))
    return int(days[0])


@_bind.register
def _(node: exp.Cast, ctx):
    to = sql_type(node.to)
    inner = node.this
    if to.kind == "DATE" and isinstance(inner, exp.Literal) and inner.is_string:
        return Literal(parse_date_literal(inner.this), T.DATE)
    if to.kind == "TIMESTAMP" and isinstance(inner, exp.Literal) and inner.is_string:
        return bind_dates.timestamp_literal(inner.this)
    if to.kind == "INTERVAL":
        if isinstance(inner, exp.Literal) and inner.is_string:
            return Literal(bind_dates.interval_text(inner.this), T.INTERVAL)
        raise NotSupported("CAST to INTERVAL of a value that is not a constant string")
    v = bind(inner, ctx)
    bind_dates.bind_cast_check(v.type, to)
    return ty.cast(v, to)


@_bind.register
def _(node: exp.TryCast, ctx):
    raise NotSupported("TRY_CAST")


# types glint does not compute in: a CAST to one of them must check its range
# and keep its width (DuckDB's ABS(CAST(-32768 AS SMALLINT)) overflows, and a
# FLOAT holds 0.1 as a 32-bit value), so it is refused rather than widened
_NARROW_TYPES = {
    "TINYINT": "INTEGER", "SMALLINT": "INTEGER", "UTINYINT": "INTEGER", "USMALLINT": "INTEGER",
    "UINT": "BIGINT", "UBIGINT": "HUGEINT", "UINT128": "HUGEINT", "FLOAT": "DOUBLE",
}


def sql_type(dt: exp.DataType) -> T.DataType:
    if dt.args.get("nested"):
        raise NotSupported(f"type {dt.sql(dialect='duckdb')} (lists, structs and maps)")
    params = [int(p.this.this) if isinstance(p.this, exp.Literal) else int(p.name) for p in dt.expressions]
    name = dt.this.name if hasattr(dt.this, "name") else str(dt.this)
    if name in _NARROW_TYPES:
        spelled = {"UINT": "UINTEGER", "FLOAT": "FLOAT (32-bit REAL)", "UINT128": "UHUGEINT"}.get(name, name)
        raise NotSupported(f"type {spelled}: glint computes in INTEGER, BIGINT, HUGEINT and DOUBLE "
                           f"(use {_NARROW_TYPES[name]})")
    name = {"INT": "INTEGER", "TEXT": "VARCHAR"}.get(name, name)
    return T.from_sql_name(name, params)


# ---------------------------------------------------------------- operators
_ARITH = {exp.Add: "add", exp.Sub: "sub", exp.Mul: "mul", exp.Div: "div", exp.IntDiv: "intdiv", exp.Mod: "mod"}
_CMP = {exp.EQ: "eq", exp.NEQ: "ne", exp.LT: "lt", exp.LTE: "le", exp.GT: "gt", exp.GTE: "ge"}


def _bind_arith(node, ctx):
    return ty.arith(_ARITH[type(node)], bind(node.this, ctx), bind(node.expression, ctx))


def _bind_cmp(node, ctx):
    for side in (node.this, node.expression):
        if isinstance(side, (exp.All, exp.Any)):
            raise NotSupported(f"{type(side).__name__.upper()} subquery comparison")
    return ty.compare(_CMP[type(node)], bind(node.this, ctx), bind(node.expression, ctx))


for _cls in _ARITH:
    _bind.register(_cls)(_bind_arith)
for _cls in _CMP:
    _bind.register(_cls)(_bind_cmp)


@_bind.register
def _(node: exp.Neg, ctx):
    lit = node.this
    if isinstance(lit, exp.Literal) and not lit.is_string and lit.this.isdigit() and int(lit.this) == 2**63:
        return Literal(-2**63, T.BIGINT)      # BIGINT's minimum: its magnitude alone is beyond 64 bits (DuckDB)
    v = bind(node.this, ctx)
    if v.type.kind == "NULL":
        return Literal(None, T.BIGINT)          # DuckDB: -NULL is BIGINT
    if isinstance(v, Literal) and isinstance(v.value, (int, float)) and v.type.is_numeric:
        return Literal(-v.value, v.type)
    if isinstance(v, Literal) and v.type.kind == "INTERVAL":
        return Literal(tuple(-x for x in v.value), T.INTERVAL)
    if not v.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: cannot negate {ty.show(v)} of type {v.type}")
    return Call("neg", (v,), v.type)


@_bind.register
def _(node: exp.And, ctx):
    return Call("and", (ty.require_boolean(bind(node.this, ctx), "AND operand"),
                        ty.require_boolean(bind(node.expression, ctx), "AND operand")), T.BOOLEAN)


@_bind.register
def _(node: exp.Or, ctx):
    return Call("or", (ty.require_boolean(bind(node.this, ctx), "OR operand"),
                       ty.require_boolean(bind(node.expression, ctx), "OR operand")), T.BOOLEAN)


@_bind.register
def _(node: exp.Not, ctx):
    inner = node.this
    if isinstance(inner, (exp.Exists, exp.In)) and _has_query(inner):
        return ctx.binder.bind_subquery_predicate(inner, ctx, negate=True)
    return Call("not", (ty.require_boolean(bind(inner, ctx), "NOT operand"),), T.BOOLEAN)


@_bind.register
def _(node: exp.Is, ctx):
    v = bind(node.this, ctx)
    if isinstance(node.expression, exp.Null):
        return Call("is_null", (v,), T.BOOLEAN)
    if isinstance(node.expression, exp.Boolean):
        want = Literal(bool(node.expression.this), T.BOOLEAN)
        return Call("is_not_distinct", (ty.require_boolean(v, "IS TRUE/FALSE operand"), want), T.BOOLEAN)
    raise NotSupported(f"IS {node.expression.sql()}")


def _null_safe(fn):
    def bind_it(node, ctx):
        a, b = bind(node.this, ctx), bind(node.expression, ctx)
        c = ty.compare("eq", a, b)
        return Call(fn, c.args, T.BOOLEAN)
    return bind_it


_bind.register(exp.NullSafeEQ)(_null_safe("is_not_distinct"))
_bind.register(exp.NullSafeNEQ)(_null_safe("is_distinct"))


@_bind.register
def _(node: exp.Between, ctx):
    v = bind(node.this, ctx)
    lo, hi = bind(node.args["low"], ctx), bind(node.args["high"], ctx)
    return Call("and", (ty.compare("ge", v, lo), ty.compare("le", v, hi)), T.BOOLEAN)


@_bind.register
def _(node: exp.In, ctx):
    if _has_query(node):
        return ctx.binder.bind_subquery_predicate(node, ctx, negate=False)
    if node.args.get("unnest") or node.args.get("field"):
        raise NotSupported("IN UNNEST / IN field")
    v = bind(node.this, ctx)
    items = [bind(e, ctx) for e in node.expressions]
    t = ty.common_of([v] + items, f"{node.sql(dialect='duckdb')[:60]}")
    if t.is_string:
        return Call("in_list", (ty.cast(v, t), *(ty.cast(i, t) for i in items)), T.BOOLEAN)
    return Call("in_list", tuple(ty.cast(e, t) for e in [v] + items), T.BOOLEAN)


def _has_query(node) -> bool:
    return isinstance(node, exp.Exists) or node.args.get("query") is not None


@_bind.register
def _(node: exp.Exists, ctx):
    return ctx.binder.bind_subquery_predicate(node, ctx, negate=False)


@_bind.register
def _(node: exp.Subquery, ctx):
    return ctx.binder.bind_scalar_subquery(node, ctx)


@_bind.register
def _(node: exp.Select, ctx):
    return ctx.binder.bind_scalar_subquery(node, ctx)


def const_int(node, ctx, what):
    if node is None:
        return None
    v = bind(node, ctx)
    if not isinstance(v, Literal) or not isinstance(v.value, int) or not v.type.is_integer:
        raise NotSupported(f"{what} that is not a constant integer")
    return v.value


# ---------------------------------------------------------------- conditionals, misc
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
def _(node: exp.If, ctx):
    cond = ty.require_boolean(bind(node.this, ctx), "IF condition")
    a = bind(node.args["true"], ctx)
    fb = node.args.get("false")
    b = bind(fb, ctx) if fb is not None else Literal(None, T.NULLTYPE)
    t = ty.common_of([a, b], "IF results")
    return Case(((cond, ty.cast(a, t)),), ty.cast(b, t), t)


@_bind.register
def _(node: exp.Coalesce, ctx):
    args = [bind(node.this, ctx)] + [bind(e, ctx) for e in node.expressions]
    t = ty.common_of(args, "COALESCE arguments")
    return Call("coalesce", tuple(ty.cast(a, t) for a in args), t)


@_bind.register
def _(node: exp.Nullif, ctx):
    a, b = bind(node.this, ctx), bind(node.expression, ctx)
    return Case(((ty.compare("eq", a, b), Literal(None, a.type)),), a, a.type)


@_bind.register
def _(node: exp.Abs, ctx):
    v = bind(node.this, ctx)
    if v.type.kind == "NULL":
        return Literal(None, T.BIGINT)          # DuckDB: abs(NULL) is BIGINT
    if not v.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: ABS needs a number, got {v.type}")
    return Call("abs", (v,), v.type)


@_bind.register
def _(node: exp.Round, ctx):
    v = bind(node.this, ctx)
    digits = const_int(node.args.get("decimals"), ctx, "ROUND digits") or 0
    if v.type.kind == "NULL":
        return Literal(None, T.BIGINT)          # DuckDB: round(NULL, n) is BIGINT
    if v.type.is_decimal:
        s = max(0, min(digits, v.type.scale))
        return Call("round", (v,), T.DECIMAL(v.type.precision, s), (digits,))
    if not v.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: ROUND needs a number, got {v.type}")
    return Call("round", (v,), v.type, (digits,))


# functions sqlglot does not know (exp.Anonymous), by lower-case name:
# name -> bind(node, ctx); modules such as bind_dates and bind_strings add theirs
ANONYMOUS: dict = {}


@_bind.register
def _(node: exp.Anonymous, ctx):
    fn = ANONYMOUS.get(node.name.lower())
    if fn is None:
        raise NotSupported(f"function {node.name}()")
    return fn(node, ctx)


@_bind.register
def _(node: exp.Window, ctx):
    f = ctx.windows.get(node.sql(dialect="duckdb")) if ctx.windows is not None else None
    if f is None:
        raise BinderError("window functions are not allowed here")
    return ColRef(f)


from glint.sql import bind_dates  # noqa: E402,F401  (registers the date and time functions)
from glint.sql import bind_strings  # noqa: E402,F401  (registers the string functions)
