"""Binding of aggregate calls and of GROUPING().

An aggregate is bound twice: :func:`bind_aggregate` binds its arguments
against the rows it reads (the FROM scope), for the Aggregate node to compute;
after GROUP BY, a reference to it (in the SELECT list, HAVING, ORDER BY or a
window) is the Aggregate's output column, found by the call's SQL text.

sqlglot's nodes and glint's functions (:mod:`glint.plan.aggregates`):
COUNT, SUM, AVG, MIN, MAX; VARIANCE / VAR_SAMP -> var_samp, VAR_POP,
STDDEV / STDDEV_SAMP -> stddev_samp, STDDEV_POP; BOOL_AND, BOOL_OR;
STRING_AGG / LISTAGG / GROUP_CONCAT -> string_agg; MEDIAN, QUANTILE_CONT,
QUANTILE_DISC / QUANTILE -> quantile_disc, and PERCENTILE_CONT /
PERCENTILE_DISC (q) WITHIN GROUP (ORDER BY x). Each may carry DISTINCT, an
ORDER BY inside the call and FILTER (WHERE ...). Types and errors follow
DuckDB 1.4: VAR_* / STDDEV_* are DOUBLE; MEDIAN and QUANTILE_CONT are DOUBLE
over integers and doubles and keep a DECIMAL's type; QUANTILE_DISC keeps its
input's type; STRING_AGG casts its input to VARCHAR and wants a constant
VARCHAR separator.

>>> import sqlglot
>>> node = sqlglot.parse_one("SELECT string_agg(s, '-' ORDER BY s DESC) FROM t", read="duckdb").expressions[0]
>>> [type(n).__name__ for n in find_aggregates(node)]
['GroupConcat']
"""
from __future__ import annotations

import re
from fractions import Fraction

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, CatalogError, NotSupported, TypeMismatch
from glint.plan.aggregates import Quantile
from glint.plan.expr import AggCall, Call, ColRef, Expr, Literal
from glint.plan.logical import GroupingSets, SortKey
from glint.sql.folding import fold_expr
from glint.plan import typing as ty
from glint.sql.bind_expr import ExprContext, _bind, bind

FUNCTIONS = {
    exp.Count: "count", exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max",
    exp.Variance: "var_samp", exp.VariancePop: "var_pop", exp.Stddev: "stddev_samp",
    exp.StddevSamp: "stddev_samp", exp.StddevPop: "stddev_pop", exp.LogicalAnd: "bool_and",
    exp.LogicalOr: "bool_or", exp.GroupConcat: "string_agg", exp.Median: "median",
    exp.PercentileCont: "quantile_cont", exp.PercentileDisc: "quantile_disc", exp.Quantile: "quantile_disc",
}


def is_aggregate(node: exp.Expression) -> bool:
    """An aggregate call as written: fn(...), fn(...) FILTER (...), or
    PERCENTILE_*(q) WITHIN GROUP (ORDER BY x)."""
    if isinstance(node, exp.Filter):
        node = node.this
    if isinstance(node, exp.WithinGroup):
        node = node.this
        return type(node) in (exp.PercentileCont, exp.PercentileDisc)
    return type(node) in FUNCTIONS


def find_aggregates(node: exp.Expression) -> list[exp.Expression]:
    """Aggregate calls in an expression, not descending into subqueries."""
    out = []

    def walk(n):
        if isinstance(n, (exp.Subquery, exp.Select, exp.Exists)) or (isinstance(n, exp.In) and n.args.get("query")):
            if isinstance(n, exp.In):
                walk(n.this)
            return
        if isinstance(n, exp.Window):
            # the window's own function is not an aggregate; its arguments and keys may hold some
            fn = n.this.this if isinstance(n.this, (exp.IgnoreNulls, exp.RespectNulls)) else n.this
            if isinstance(fn, exp.Filter):
                walk(fn.expression)
                fn = fn.this
            if isinstance(fn, exp.WithinGroup):
                walk(fn.expression)
                fn = fn.this
            for child in [*fn.iter_expressions(), *(n.args.get("partition_by") or []), n.args.get("order")]:
                if child is not None:
                    walk(child)
            return
        if is_aggregate(n):
            if any(isinstance(w, exp.Window) for w in n.walk()):
                raise BinderError("aggregate function calls cannot contain window function calls")
            out.append(n)
            return
        if isinstance(n, (exp.Grouping, exp.GroupingId)):
            return              # GROUPING() reads the groups, after GROUP BY
        if isinstance(n, exp.Anonymous) and n.name.lower() == "every":
            raise CatalogError("Function with name every does not exist (DuckDB 1.4 has no EVERY: use bool_and)")
        if isinstance(n, exp.AggFunc):
            raise NotSupported(f"aggregate function {n.sql(dialect='duckdb').split('(')[0]}")
        for child in n.iter_expressions():
            walk(child)

    walk(node)
    return out


# ------------------------------------------------------------------ result types
def agg_type(fn: str, arg: Expr | None) -> T.DataType:
    """The result type of COUNT, SUM, AVG, MIN or MAX of ``arg``."""
    if fn in ("count", "count_star"):
        return T.BIGINT
    t = arg.type
    if fn == "avg":
        if t.kind in ("DATE", "TIMESTAMP"):
            raise NotSupported(f"AVG of {t} (DuckDB's result is a TIMESTAMP)")
        if not t.is_numeric and t.kind != "NULL":
            raise TypeMismatch(f"Type mismatch: AVG needs a number, got {ty.show(arg)} of type {t}")
        return T.DOUBLE
    if fn == "sum":
        if t.is_integer or t.kind == "NULL":
            return T.HUGEINT
        if t.is_decimal:
            return T.DECIMAL(38, t.scale)
        if t.kind == "DOUBLE":
            return T.DOUBLE
        raise TypeMismatch(f"Type mismatch: SUM needs a number, got {ty.show(arg)} of type {t}")
    return t


def _no_function(fn: str, *types) -> BinderError:
    return BinderError(f"No function matches the given name and argument types "
                       f"'{fn}({', '.join(map(str, types))})'. You might need to add explicit type casts.")


# ------------------------------------------------------------------ aggregate calls
class _Call:
    """An aggregate call taken apart: the function node, its argument (and a
    quantile's q), DISTINCT, the ORDER BY keys inside it, FILTER's condition."""

    def __init__(self, node: exp.Expression):
        self.text = node.sql(dialect="duckdb")
        self.where = None
        if isinstance(node, exp.Filter):
            self.where = node.expression.this if isinstance(node.expression, exp.Where) else node.expression
            node = node.this
        self.within = None
        if isinstance(node, exp.WithinGroup):            # PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)
            self.within = node.expression.expressions if node.expression is not None else []
            node = node.this
        self.node = node
        self.fn = FUNCTIONS[type(node)]
        self.order = []
        if self.within is not None:
            if len(self.within) != 1:
                raise BinderError(f"{self.fn.upper()} WITHIN GROUP needs exactly one ORDER BY expression")
            self.arg, self.q = self.within[0].this, node.this
            self.order = list(self.within)
        elif self.fn in ("quantile_cont", "quantile_disc") and type(node) is not exp.Quantile:
            self.arg, self.q = _unwrap_order(node.this, self), node.args.get("expression")
            self.q = _unwrap_order(self.q, self) if self.q is not None else None
        elif type(node) is exp.Quantile:
            self.arg, self.q = _unwrap_order(node.this, self), node.args.get("quantile")
        else:
            self.arg, self.q = _unwrap_order(node.this, self), None
        self.distinct = isinstance(self.arg, exp.Distinct)
        if self.distinct:
            if len(self.arg.expressions) != 1:
                raise NotSupported("DISTINCT aggregates over several expressions")
            self.arg = self.arg.expressions[0]


def _unwrap_order(e, call: _Call):
    if isinstance(e, exp.Order):
        call.order = list(e.expressions)
        return e.this
    return e


def bind_aggregate(node: exp.Expression, ctx: ExprContext) -> AggCall:
    """An aggregate call, its arguments bound against the pre-aggregation scope."""
    c = _Call(node)
    _check_order(c)
    inner = ExprContext(ctx.scope, ctx.binder)
    inner.pending = ctx.pending

    def bind_inner(e):
        if find_aggregates(e):
            raise BinderError(f"aggregate function calls cannot be nested: {c.text}")
        return bind(e, inner)

    filt = _filter(bind_inner(c.where)) if c.where is not None else None
    if c.fn == "count" and (c.arg is None or isinstance(c.arg, exp.Star)):
        return AggCall("count_star", (), T.BIGINT, filter=filt)
    if c.arg is None:
        raise BinderError(f"{c.fn.upper()} needs an argument")
    v = bind_inner(c.arg)
    if c.fn in ("count", "sum", "avg", "min", "max"):
        return AggCall(c.fn, (v,), agg_type(c.fn, v), c.distinct and c.fn not in ("min", "max"), filt)
    if c.fn in ("var_samp", "var_pop", "stddev_samp", "stddev_pop"):
        if not (v.type.is_numeric or v.type.kind == "NULL"):
            raise _no_function(c.fn, v.type)
        return AggCall(c.fn, (ty.cast(v, T.DOUBLE),), T.DOUBLE, c.distinct, filt)
    if c.fn in ("bool_and", "bool_or"):
        if v.type.kind not in ("BOOLEAN", "NULL"):
            raise _no_function(c.fn, v.type)
        return AggCall(c.fn, (ty.cast(v, T.BOOLEAN),), T.BOOLEAN, c.distinct, filt)
    if c.fn == "string_agg":
        return _string_agg(c, v, filt, bind_inner)
    return _quantile(c, v, filt, bind_inner)


def _filter(e: Expr) -> Expr:
    """FILTER's condition as a BOOLEAN (DuckDB casts numbers and strings to it)."""
    if e.type.kind == "NULL":
        return Literal(None, T.BOOLEAN)
    if e.type.kind == "BOOLEAN":
        return e
    if e.type.is_numeric or e.type.is_string:
        return ty.cast(e, T.BOOLEAN)
    raise TypeMismatch(f"Type mismatch: FILTER must be BOOLEAN, got {ty.show(e)} of type {e.type}")


def _order_keys(c: _Call, bind_inner) -> tuple[SortKey, ...]:
    return tuple(SortKey(bind_inner(o.this), bool(o.args.get("desc")), bool(o.args.get("nulls_first")))
                 for o in c.order)


def _check_order(c: _Call) -> None:
    """DuckDB rejects ORDER BY a constant other than an integer or a boolean
    inside an aggregate (an integer is a constant there, not a position)."""
    for o in c.order:
        e = o.this
        if isinstance(e, exp.Null) or isinstance(e, exp.Literal) and (e.is_string or not e.this.isdigit()):
            raise BinderError("ORDER BY non-integer literal has no effect")


def _string_agg(c: _Call, v: Expr, filt, bind_inner) -> AggCall:
    sep_node = c.node.args.get("separator")
    sep = ","
    if sep_node is not None:
        s = fold_expr(bind_inner(sep_node))
        if not isinstance(s, Literal):
            raise BinderError("Separator argument to StringAgg must be a constant")
        if s.type.kind not in ("VARCHAR", "NULL"):
            raise _no_function("string_agg", v.type, s.type)
        sep = s.value
    if c.distinct and c.order:
        arg_text = c.arg.sql(dialect="duckdb")
        if any(o.this.sql(dialect="duckdb") != arg_text for o in c.order):
            raise BinderError("In a DISTINCT aggregate, ORDER BY expressions must appear in the argument list")
    order = _order_keys(c, bind_inner)
    return AggCall("string_agg", (ty.cast(v, T.VARCHAR),), T.VARCHAR, c.distinct, filt, order, (sep,))


def _quantile(c: _Call, v: Expr, filt, bind_inner) -> AggCall:
    """MEDIAN, QUANTILE_CONT and QUANTILE_DISC: their q and result type."""
    t = v.type
    percentile = c.within is not None
    descending = False
    if c.order and len(c.order) == 1 and c.order[0].this.sql(dialect="duckdb") == c.arg.sql(dialect="duckdb"):
        percentile = True           # ordered by its own argument: a percentile of that order
    if percentile and c.order:
        descending = bool(c.order[0].args.get("desc"))
    exact, q = ((5, 10), 0.5) if c.fn == "median" else _quantile_value(c, bind_inner)
    if q < 0 and percentile:
        raise BinderError("PERCENTILEs can only take parameters in the range [0, 1]")
    if q < 0:
        descending = not descending
    spec = Quantile(abs(q), None if exact is None else abs(exact[0]), 1 if exact is None else exact[1], descending)
    fn = c.fn
    temporal = t.kind in ("DATE", "TIMESTAMP")
    if fn == "median":
        fn = "quantile_cont" if t.is_numeric or t.kind == "NULL" or temporal else "quantile_disc"
    if fn == "quantile_cont" and temporal:
        # interpolated between TIMESTAMPs (a DATE is cast first), as DuckDB
        return AggCall(fn, (ty.cast(v, T.TIMESTAMP),), T.TIMESTAMP, c.distinct, filt, (), (spec,))
    if fn == "quantile_cont":
        if not (t.is_numeric or t.kind == "NULL"):
            raise _no_function(c.fn, t, "DECIMAL(2,1)")
        out = t if t.is_decimal else T.DOUBLE
        arg = v if t.is_decimal else ty.cast(v, T.DOUBLE)
    else:
        if t.kind not in ("INTEGER", "BIGINT", "HUGEINT", "DOUBLE", "DECIMAL", "DATE", "TIMESTAMP", "VARCHAR", "BOOLEAN",
                          "NULL"):
            raise _no_function(c.fn, t)
        out, arg = t, v
    return AggCall(fn, (arg,), out, c.distinct, filt, (), (spec,))


def _quantile_value(c: _Call, bind_inner) -> tuple[tuple[int, int] | None, float]:
    """(q = num / den exactly when it is a DECIMAL or an integer, q as a double)."""
    if c.q is None:
        raise BinderError(f"{c.fn.upper()} needs a quantile argument")
    if isinstance(c.q, exp.Array) or (isinstance(c.q, exp.Paren) and isinstance(c.q.this, exp.Array)):
        raise NotSupported(f"{c.fn.upper()} with a list of quantiles (DuckDB returns a LIST, which glint has "
                           "no type for)")
    q = fold_expr(bind_inner(c.q))
    if not isinstance(q, Literal):
        raise BinderError("QUANTILE can only take constant parameters")
    if q.value is None:
        raise BinderError("QUANTILE argument must not be NULL")
    if q.type.is_decimal and q.type.scale <= 18:
        exact = (q.value, 10 ** q.type.scale)
    elif q.type.is_integer:
        exact = (q.value, 1)
    elif q.type.is_numeric:
        exact = None
    else:
        raise _no_function(c.fn, "ANY", q.type)
    value = float(Fraction(q.value, 10 ** q.type.scale)) if q.type.is_decimal else float(q.value)
    if not -1 <= value <= 1:
        raise BinderError("QUANTILE can only take parameters in the range [-1, 1]")
    return exact, value


def bind_aggregates(nodes, ctx: ExprContext, new_field) -> tuple[list, dict]:
    """([(field, AggCall)], {SQL text: field}) for the aggregate calls
    ``nodes``, each computed once however often it is written; ``new_field(node,
    type)`` makes an output field."""
    aggs, amap = [], {}
    for a in nodes:
        key = a.sql(dialect="duckdb")
        if key not in amap:
            ac = bind_aggregate(a, ctx)
            amap[key] = new_field(a, ac.type)
            aggs.append((amap[key], ac))
    return aggs, amap


# ------------------------------------------------------------------ GROUP BY and GROUPING()
def bind_group_by(items, sets, ctx: ExprContext, new_field):
    """([(field, expression)] of the distinct group expressions ``items``,
    {SQL text: field}, the :class:`GroupingInfo` GROUPING() reads (None
    without groups)). ``sets``: the grouping sets as positions among the
    items (glint.sql.grouping_sets), or None for a plain GROUP BY; a single
    set of every group is a plain GROUP BY too."""
    groups, gmap, positions = [], {}, {}
    for g in items:
        ge = bind(g, ctx)
        key = g.sql(dialect="duckdb")
        if key in gmap:
            continue
        gmap[key] = new_field(g, ge.type)
        positions.setdefault(grouping_key(g), len(groups))
        groups.append((gmap[key], ge))
    grouping = None
    if sets is not None and (len(sets) != 1 or len(sets[0]) != len(groups)):
        grouping = GroupingSets(tuple(sets), new_field(exp.to_identifier("grouping_set"), T.INTEGER))
    return groups, gmap, GroupingInfo(positions, grouping) if groups else None


def _bind_agg(node, ctx):
    f = ctx.aggs.get(node.sql(dialect="duckdb")) if ctx.aggs is not None else None
    if f is None:
        raise BinderError(f"aggregate {node.sql(dialect='duckdb')} is not allowed here")
    if ctx.empty_aggs:          # its value over no rows (a correlated COUNT that finds no group)
        inner = node.this if isinstance(node, exp.Filter) else node
        return Literal(0, T.BIGINT) if isinstance(inner, exp.Count) else Literal(None, f.type)
    return ColRef(f)


for _cls in (*FUNCTIONS, exp.Filter, exp.WithinGroup):
    _bind.register(_cls)(_bind_agg)


def grouping_key(e: exp.Expression) -> str:
    """How GROUPING() finds a group expression: its SQL text without enclosing
    parentheses (GROUP BY (a + b) and GROUPING(a + b) name the same key)."""
    while isinstance(e, exp.Paren):
        e = e.this
    return e.sql(dialect="duckdb")


class GroupingInfo:
    """What GROUPING() needs after GROUP BY: each group expression's position
    (by :func:`grouping_key`) and the grouping sets (None for a plain GROUP BY)."""
    __slots__ = ("positions", "sets")

    def __init__(self, positions: dict[str, int], sets: GroupingSets | None):
        self.positions = positions
        self.sets = sets


def _unqualified(e: exp.Expression) -> str:
    """The expression as the user wrote it, without the qualifiers sqlglot added."""
    return re.sub(r'"[^"]*"\.', "", e.sql(dialect="duckdb")).replace('"', "")


def _bind_grouping(node, ctx):
    info = ctx.grouping
    if ctx.groups is None or info is None:
        raise BinderError("GROUPING statement cannot be used without groups")
    positions = []
    for a in node.expressions:
        p = info.positions.get(grouping_key(a))
        if p is None:
            raise BinderError(f'GROUPING child "{_unqualified(a)}" must be a grouping column')
        positions.append(p)
    if not positions:
        raise BinderError("GROUPING requires at least one child")
    if info.sets is None:
        return Literal(0, T.BIGINT)
    return Call("grouping", (ColRef(info.sets.field),), T.BIGINT, (info.sets.masks(tuple(positions)),))


_bind.register(exp.Grouping)(_bind_grouping)
_bind.register(exp.GroupingId)(_bind_grouping)
