"""Binding of aggregate calls and of GROUPING().

An aggregate is bound twice: :func:`bind_aggregate` binds its arguments
against the rows it reads (the FROM scope), for the Aggregate node to compute;
after GROUP BY, a reference to it (in the SELECT list, HAVING, ORDER BY or a
window) is the Aggregate's output column, found by the call's SQL text.

Which sqlglot node is which aggregate is in glint.sql.function_calls
(``AGGREGATE_NODES``); the functions, their types and errors are the
registry's (glint.functions.aggregates.definitions). A call may carry
DISTINCT, an ORDER BY inside it and FILTER (WHERE ...), and PERCENTILE_CONT /
PERCENTILE_DISC take (q) WITHIN GROUP (ORDER BY x): this module takes that
syntax apart and hands the function's bind rule the bound argument (and q or
the separator) with the rest as options.

>>> import sqlglot
>>> node = sqlglot.parse_one("SELECT string_agg(s, '-' ORDER BY s DESC) FROM t", read="duckdb").expressions[0]
>>> [type(n).__name__ for n in find_aggregates(node)]
['GroupConcat']
"""

from __future__ import annotations

import re

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, CatalogError, NotSupported, TypeMismatch
from glint.functions.builtins import BUILTINS
from glint.functions.registry import AGGREGATE
from glint.plan import typing as ty
from glint.plan.expr import AggCall, Call, ColRef, Expr, Literal
from glint.plan.logical import GroupingSets, SortKey
from glint.sql.bind_expr import ExprContext, _bind, bind, bind_call
from glint.sql.function_calls import AGGREGATE_ARGUMENTS, AGGREGATE_NODES


def aggregate_function(node: exp.Expression) -> str | None:
    """The registry aggregate a call node calls (None: it is no aggregate):
    by node type, or by name for a call sqlglot does not know (``product(x)``).
    DuckDB's ANY_VALUE reaches us as IGNORE NULLS around it."""
    if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.AnyValue):
        return "any_value"
    fn = AGGREGATE_NODES.get(type(node))
    if fn is not None or not isinstance(node, exp.Anonymous):
        return fn
    f = BUILTINS.lookup(node.name, AGGREGATE)
    return f.name if f is not None else None


def aggregate_arguments(node: exp.Expression) -> list:
    """The argument nodes of an aggregate call, in positional order (the
    first may be DISTINCT x or x ORDER BY ...)."""
    if isinstance(node, exp.IgnoreNulls):
        node = node.this
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    keys = AGGREGATE_ARGUMENTS.get(type(node), ("this",))
    out = [node.args.get(k) for k in keys]
    while out and out[-1] is None:
        out.pop()
    return out


def is_aggregate(node: exp.Expression) -> bool:
    """An aggregate call as written: fn(...), fn(...) FILTER (...), or
    PERCENTILE_*(q) WITHIN GROUP (ORDER BY x)."""
    if isinstance(node, exp.Filter):
        node = node.this
    if isinstance(node, exp.WithinGroup):
        node = node.this
        return type(node) in (exp.PercentileCont, exp.PercentileDisc)
    return aggregate_function(node) is not None


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
            return  # GROUPING() reads the groups, after GROUP BY
        if isinstance(n, exp.Anonymous) and n.name.lower() == "every":
            raise CatalogError("Function with name every does not exist (DuckDB 1.4 has no EVERY: use bool_and)")
        if isinstance(n, exp.AggFunc):
            raise NotSupported(f"aggregate function {n.sql(dialect='duckdb').split('(')[0]}")
        for child in n.iter_expressions():
            walk(child)

    walk(node)
    return out


# ------------------------------------------------------------------ aggregate calls
class _Call:
    """An aggregate call taken apart: the function node, its argument (and a
    quantile's q or STRING_AGG's separator), DISTINCT, the ORDER BY keys
    inside it, FILTER's condition."""

    def __init__(self, node: exp.Expression):
        self.text = node.sql(dialect="duckdb")
        self.where = None
        if isinstance(node, exp.Filter):
            self.where = node.expression.this if isinstance(node.expression, exp.Where) else node.expression
            node = node.this
        self.within = None
        if isinstance(node, exp.WithinGroup):  # PERCENTILE_CONT(q) WITHIN GROUP (ORDER BY x)
            self.within = node.expression.expressions if node.expression is not None else []
            node = node.this
        self.fn = aggregate_function(node)
        if isinstance(node, exp.IgnoreNulls):
            node = node.this
        self.node = node
        self.order = []
        self.rest = []  # the arguments after the first
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
        elif self.fn == "string_agg" or type(node) in AGGREGATE_NODES and type(node) not in AGGREGATE_ARGUMENTS:
            self.arg, self.q = _unwrap_order(node.this, self), None
        else:
            args = aggregate_arguments(node)
            self.arg, self.q = (_unwrap_order(args[0], self) if args else None), None
            self.rest = args[1:]
        self.distinct = isinstance(self.arg, exp.Distinct)
        if self.distinct and self.q is None and self.fn in ("quantile_cont", "quantile_disc"):
            if len(self.arg.expressions) == 2:  # (sqlglot before 30.15: quantile_disc(DISTINCT x, q) holds q)
                self.q = self.arg.expressions[1]
                self.arg = exp.Distinct(expressions=[self.arg.expressions[0]])
        if self.distinct:
            distinct = self.arg.expressions
            if len(distinct) > 1 and not self.rest and type(node) in AGGREGATE_ARGUMENTS:
                # sqlglot reads regr_slope(DISTINCT y, x) as DISTINCT over both arguments
                self.arg, self.rest = distinct[0], list(distinct[1:])
            elif len(distinct) != 1:
                raise NotSupported("DISTINCT aggregates over several expressions")
            else:
                self.arg = distinct[0]
        # the function's second argument: a quantile's q, STRING_AGG's separator
        self.second = self.q if self.fn != "string_agg" else node.args.get("separator")
        if self.second is not None:
            self.rest = [self.second]


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
    star = c.fn == "count" and (c.arg is None or isinstance(c.arg, exp.Star))
    if c.arg is None and not star:
        raise BinderError(f"{c.fn.upper()} needs an argument")
    arg_text = c.arg.sql(dialect="duckdb") if c.arg is not None else None
    options = {
        "distinct": c.distinct,
        "filter": filt,
        "within_group": c.within is not None,
        "order": (lambda: _order_keys(c, bind_inner)) if c.order else None,
        "order_size": len(c.order),
        "order_is_argument": all(o.this.sql(dialect="duckdb") == arg_text for o in c.order),
        "descending": bool(c.order[0].args.get("desc")) if c.order else False,
    }
    args = [] if star else [c.arg] + c.rest
    binders = {i: lambda node, _ctx, _bind: bind_inner(node) for i in range(len(args))}
    binders[1] = _second_binder(c, bind_inner)
    return bind_call(BUILTINS.get(c.fn, AGGREGATE).bind, args, inner, c.fn.upper(), options, binders)


def _second_binder(c: _Call, bind_inner):
    """Binds the second argument: a quantile's q (a constant, not a list) or the separator."""

    def bind_it(node, _ctx, _bind):
        if c.fn in ("quantile_cont", "quantile_disc", "approx_quantile") and (
            isinstance(node, exp.Array) or (isinstance(node, exp.Paren) and isinstance(node.this, exp.Array))
        ):
            raise NotSupported(
                f"{c.fn.upper()} with a list of quantiles (DuckDB returns a LIST, which glint has no type for)"
            )
        return bind_inner(node)

    return bind_it


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
    return tuple(
        SortKey(bind_inner(o.this), bool(o.args.get("desc")), bool(o.args.get("nulls_first"))) for o in c.order
    )


def _check_order(c: _Call) -> None:
    """DuckDB rejects ORDER BY a constant other than an integer or a boolean
    inside an aggregate (an integer is a constant there, not a position)."""
    for o in c.order:
        e = o.this
        if isinstance(e, exp.Null) or isinstance(e, exp.Literal) and (e.is_string or not e.this.isdigit()):
            raise BinderError("ORDER BY non-integer literal has no effect")


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
    if ctx.empty_aggs:  # its value over no rows (a correlated COUNT that finds no group)
        inner = node.this if isinstance(node, exp.Filter) else node
        return Literal(0, T.BIGINT) if isinstance(inner, exp.Count) else Literal(None, f.type)
    return ColRef(f)


for _cls in (*AGGREGATE_NODES, exp.Filter, exp.WithinGroup):
    _bind.register(_cls)(_bind_agg)


def _or_aggregate(cls: type):
    """Nodes that are an aggregate call only sometimes (a call by name,
    IGNORE NULLS around ANY_VALUE): the aggregate's column, else as before."""
    other = _bind.dispatch(cls)

    def bind_it(node, ctx):
        return _bind_agg(node, ctx) if is_aggregate(node) else other(node, ctx)

    _bind.register(cls)(bind_it)


_or_aggregate(exp.Anonymous)
_or_aggregate(exp.IgnoreNulls)


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


def select_aggregates(sel: exp.Select) -> list[exp.Expression]:
    """The aggregate calls of a SELECT: in its list, HAVING, ORDER BY, its
    named windows (PARTITION BY / ORDER BY aggregates) and QUALIFY."""
    aggs_ast = []
    for e in sel.expressions:
        aggs_ast += find_aggregates(e)
    having = sel.args.get("having")
    if having is not None:
        aggs_ast += find_aggregates(having.this)
    order = sel.args.get("order")
    if order is not None:
        for o in order.expressions:
            aggs_ast += find_aggregates(o.this)
    for w in sel.args.get("windows") or []:
        aggs_ast += find_aggregates(w)
    qualify = sel.args.get("qualify")
    if qualify is not None:
        aggs_ast += find_aggregates(qualify.this)
    return aggs_ast
