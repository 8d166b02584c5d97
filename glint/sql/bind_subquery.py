"""Binding of subqueries in expressions: EXISTS / IN become SEMI, ANTI or MARK
joins, scalar subqueries SINGLE joins; correlated ones are decorrelated
(glint.sql.decorrelate). The joins wait in the expression context's
``pending`` list until the plan they join to is known (:func:`pre_apply`)."""

from __future__ import annotations

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Call, Case, ColRef, Expr, Literal, conjoin
from glint.sql.bind_agg import select_aggregates
from glint.sql.bind_expr import ExprContext, bind
from glint.sql.bind_window import has_window
from glint.sql.decorrelate import Correlated


class SubqueryBinder:
    """The subquery half of :class:`glint.sql.binder.Binder` (a mixin)."""

    def _apply_where_subquery(self, c: exp.Expression, plan, scope) -> L.LogicalNode:
        negate = False
        node = c
        if isinstance(node, exp.Not) and isinstance(node.this, (exp.Exists, exp.In)):
            negate, node = True, node.this
        one_row = one_row_form(node)
        if one_row is not None:
            c = exp.Not(this=one_row) if negate else one_row
        elif isinstance(node, exp.Exists) or (isinstance(node, exp.In) and node.args.get("query") is not None):
            join = self._subquery_join(node, scope, "anti" if negate else "semi")
            return join(plan)
        ctx = ExprContext(scope, self)
        e = ty.require_boolean(bind(c, ctx), "WHERE")
        return L.Filter(pre_apply(ctx, plan), e)

    def bind_subquery_predicate(self, node, ctx: ExprContext, negate: bool) -> Expr:
        """EXISTS / IN (subquery) inside an expression: a MARK join's column."""
        one_row = one_row_form(node)
        if one_row is not None:
            return bind(exp.Not(this=one_row) if negate else one_row, ctx)
        if ctx.groups is not None:
            raise NotSupported("EXISTS / IN subqueries after GROUP BY")
        mark = self.field("mark", T.BOOLEAN)
        ctx.pending.append(self._subquery_join(node, ctx.scope, "mark", mark))
        ref = ColRef(mark)
        return Call("not", (ref,), T.BOOLEAN) if negate else ref

    def _subquery_join(self, node, scope, kind, mark=None):
        query = node.this if isinstance(node, exp.Exists) else node.args["query"]
        query = query.this if isinstance(query, exp.Subquery) else query
        b, c = self._bind_correlated(query, scope)
        corr = c.conditions
        if isinstance(node, exp.Exists):
            cond = conjoin(corr)
            return lambda plan: L.Join(plan, c.attach(plan, b.plan, self.field), kind, cond, mark)
        if len(b.outputs) != 1:
            raise BinderError(f"subquery in IN returns {len(b.outputs)} columns, expected 1")
        outer_e = bind(node.this, ExprContext(scope, self))
        inner_e = ColRef(b.outputs[0][1])
        eq = ty.compare("eq", outer_e, inner_e)
        cond = conjoin([eq] + corr)
        null_aware = (eq.args[0], eq.args[1]) if kind in ("anti", "mark") else None
        return lambda plan: L.Join(plan, c.attach(plan, b.plan, self.field), kind, cond, mark, null_aware)

    def _bind_correlated(self, query, scope):
        if isinstance(query, exp.Select):
            return self.bind_select(query, scope, pull_correlated=True)
        return self.bind_query(query, scope), Correlated([], [], None)

    def bind_scalar_subquery(self, node, ctx: ExprContext) -> Expr:
        query = node.this if isinstance(node, exp.Subquery) else node
        b, c = self._bind_correlated(query, ctx.scope)
        if len(b.outputs) != 1:
            raise BinderError(f"scalar subquery returns {len(b.outputs)} columns, expected 1")
        if c.conditions and ctx.groups is not None:
            raise NotSupported("correlated subqueries after GROUP BY")
        value = ColRef(b.outputs[0][1])
        cond = conjoin(c.conditions)
        ctx.pending.append(lambda plan: L.Join(plan, c.attach(plan, b.plan, self.field), "single", cond))
        empty = c.empty_value
        if c.groups and empty is not None and not (isinstance(empty, Literal) and empty.value is None):
            # rows that found no group see the subquery's value over an empty input (COUNT -> 0)
            miss = Call("is_null", (ColRef(c.groups[0]),), T.BOOLEAN)
            return Case(((miss, ty.cast(empty, value.type)),), value, value.type)
        return value


def pre_apply(ctx: ExprContext, plan):
    for fn in ctx.pending:
        plan = fn(plan)
    ctx.pending.clear()
    return plan


def one_row_form(node) -> exp.Expression | None:
    """EXISTS / IN over a query that aggregates without GROUP BY or HAVING (it
    has exactly one row, also when correlated, where the decorrelated
    aggregate has no group for some outer rows): TRUE, and ``x = (query)``."""
    query = node.this if isinstance(node, exp.Exists) else node.args.get("query") if isinstance(node, exp.In) else None
    while isinstance(query, exp.Subquery):
        query = query.this
    if not isinstance(query, exp.Select) or query.args.get("group") or query.args.get("having"):
        return None
    if query.args.get("limit") or query.args.get("offset") or query.args.get("qualify") or not select_aggregates(query):
        return None
    if any(has_window(e) for e in query.expressions):
        return None
    if isinstance(node, exp.Exists):
        return exp.true()
    return exp.EQ(this=node.this, expression=exp.Subquery(this=query))
