"""From a qualified sqlglot AST to glint's logical plan.

Subqueries are decorrelated here, into joins the executor runs directly:
- ``EXISTS`` / ``IN`` at the top of a WHERE become SEMI joins, their negations
  ANTI joins (NOT IN is null-aware);
- elsewhere they become MARK joins adding a BOOLEAN column;
- scalar subqueries become SINGLE joins (a LEFT join that fails when a row
  finds two matches). Correlated aggregates are grouped by the inner side of
  their correlation equalities first (the classic rewrite), with COUNT's value
  over an empty group restored for rows that find no group.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import re

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported, ParseError, TypeMismatch
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Call, ColRef, Expr, Field, Literal, conjoin
from glint.sql.bind_agg import bind_aggregates, bind_group_by, find_aggregates, select_aggregates
from glint.sql.bind_expr import ExprContext, bind
from glint.sql.bind_from import FromBinder, contains_subquery
from glint.sql.bind_lateral import LateralBinder
from glint.sql.bind_subquery import SubqueryBinder, pre_apply
from glint.sql.bind_values import bind_values
from glint.sql.bind_window import bind_window, has_window, named_windows, window_calls
from glint.sql.decorrelate import (
    Correlated,
    dependent_join,
    found_marker,
    local_conjuncts,
    null_safe_equal,
    split_correlation,
)
from glint.sql.folding import fold_expr
from glint.sql.grouping_sets import grouping_sets, has_grouping_sets
from glint.sql.row_sources import bind_unnests, select_unnests
from glint.sql.scope import Scope


class Bound:
    """A bound query: its plan and its visible output columns (name, field)."""

    __slots__ = ("plan", "outputs")

    def __init__(self, plan: L.LogicalNode, outputs: list[tuple[str, Field]]):
        self.plan = plan
        self.outputs = outputs


class RecursiveBody:
    """The body of a recursive CTE (one that reads itself), as WITH RECURSIVE gives it."""

    __slots__ = ("name", "body")

    def __init__(self, name: str, body: exp.Expression):
        self.name = name
        self.body = body


class Binder(FromBinder, SubqueryBinder, LateralBinder):
    def __init__(self, catalog):
        self.catalog = catalog  # name -> Table (schema dict)
        self._ids = itertools.count(1)
        self._ctes: list[dict[str, tuple[exp.Expression, list]]] = []  # (body, the CTEs it sees)
        self.row_sources: dict = {}  # FROM's table functions that make rows (glint.sql.row_sources)
        self._working: list = []  # recursive CTEs whose recursive term is being bound
        self._laterals: dict = {}  # id(SELECT of a LATERAL subquery) -> glint.sql.bind_lateral.LateralInput

    def field(self, name: str, type_: T.DataType) -> Field:
        return Field(next(self._ids), name, type_)

    # ------------------------------------------------------------ queries
    def bind_query(self, node: exp.Expression, outer: Scope | None = None) -> Bound:
        if isinstance(node, exp.Subquery):
            b = self.bind_query(node.this, outer)
            return self._order_limit_outer(node, b)
        if isinstance(node, exp.Select):
            return self.bind_select(node, outer)
        if isinstance(node, exp.SetOperation):
            with self._with_ctes(node):
                return self.bind_setop(node, outer)
        if isinstance(node, exp.Values):
            plan, outputs = bind_values(node, self)
            return Bound(plan, outputs)
        raise NotSupported(f"statement {type(node).__name__}")

    @contextlib.contextmanager
    def _with_ctes(self, node):
        with_ = node.args.get("with") or node.args.get("with_")
        if with_ is None:
            yield
            return
        recursive = bool(with_.args.get("recursive"))
        level: dict[str, tuple[exp.Expression, list]] = {}
        self._ctes.append(level)
        try:
            for c in with_.expressions:
                name = c.alias_or_name
                if name in level:
                    raise BinderError(f'Duplicate CTE name "{name}"')
                # a CTE sees the ones before it (its own name is a table again),
                # and it is bound now even when nothing uses it: an error in it
                # is an error of the query, as in DuckDB
                env = [dict(lv) for lv in self._ctes]
                body = c.this
                if recursive and any(t.name == name and not t.db for t in body.find_all(exp.Table)):
                    body = RecursiveBody(name, body)
                level[name] = (body, env)
                self._bind_cte(body, env)
            yield
        finally:
            self._ctes.pop()

    def _bind_cte(self, body: exp.Expression, env: list) -> Bound:
        saved, self._ctes = self._ctes, env
        try:
            if isinstance(body, RecursiveBody):
                return self._bind_recursive(body)
            return self.bind_query(body, None)
        finally:
            self._ctes = saved

    def _bind_recursive(self, rec: RecursiveBody) -> Bound:
        """A recursive CTE: its anchor (the UNION's first side) and its
        recursive term (the second), whose references to the CTE read the
        rows the step before added; the columns have the anchor's types."""
        body = rec.body
        if not isinstance(body, exp.Union):
            raise NotSupported(f'WITH RECURSIVE "{rec.name}" whose body is not a UNION [ALL] of an anchor and a step')
        if body.args.get("order") or body.args.get("limit") or body.args.get("offset"):
            raise NotSupported("ORDER BY / LIMIT on a recursive CTE's UNION")
        anchor = self.bind_query(body.this)
        names = [n for n, _ in anchor.outputs]
        types = [f.type for _, f in anchor.outputs]
        key = next(self._ids)
        self._working.append((rec.name, key, names, types))
        try:
            step = self.bind_query(body.expression)
        finally:
            self._working.pop()
        if len(step.outputs) != len(names):
            raise BinderError(
                f'UNION inputs have {len(names)} and {len(step.outputs)} columns (recursive CTE "{rec.name}")'
            )
        sides = []
        for side in (anchor, step):
            exprs = tuple((self.field(n, t), ty.cast(ColRef(f), t)) for n, (_, f), t in zip(names, side.outputs, types))
            sides.append(L.Project(side.plan, exprs))
        fields = tuple(self.field(n, t) for n, t in zip(names, types))
        plan = L.RecursiveCTE(sides[0], sides[1], not body.args.get("distinct"), fields, key)
        return Bound(plan, list(zip(names, fields)))

    def working_table(self, name: str):
        """The WorkingTable leaf (and its columns by name) when ``name`` is a
        recursive CTE whose recursive term is being bound, else None."""
        for cte, key, names, types in reversed(self._working):
            if cte == name:
                fields = tuple(self.field(n, t) for n, t in zip(names, types))
                return L.WorkingTable(key, fields), dict(zip(names, fields))
        return None

    def _order_limit_outer(self, node, b: Bound) -> Bound:
        if node.args.get("order") or node.args.get("limit") or node.args.get("offset"):
            raise NotSupported("ORDER BY / LIMIT on a parenthesised query")
        return b

    def bind_setop(self, node: exp.SetOperation, outer) -> Bound:
        left = self.bind_query(node.this, outer)
        right = self.bind_query(node.expression, outer)
        if len(left.outputs) != len(right.outputs):
            raise BinderError(
                f"{type(node).__name__.upper()} inputs have {len(left.outputs)} and {len(right.outputs)} columns"
            )
        kind = {exp.Union: "union", exp.Intersect: "intersect", exp.Except: "except"}[type(node)]
        types = []
        for (n, a), (_, b) in zip(left.outputs, right.outputs):
            try:
                types.append(T.union_type(a.type, b.type))
            except TypeMismatch:
                raise TypeMismatch(f"Type mismatch in {kind.upper()}: column {n} is {a.type} and {b.type}") from None
        sides = []
        for side in (left, right):
            exprs = tuple((self.field(n, t), ty.cast(ColRef(f), t)) for (n, f), t in zip(side.outputs, types))
            sides.append(L.Project(side.plan, exprs))
        fields = tuple(self.field(n, t) for (n, _), t in zip(left.outputs, types))
        distinct = node.args.get("distinct")
        plan = L.SetOp(sides[0], sides[1], kind, not distinct, fields)
        outputs = [(n, f) for (n, _), f in zip(left.outputs, fields)]
        scope = Scope(outer)
        scope.add("", {n: f for n, f in outputs})
        return self._apply_order_limit(node, plan, outputs, scope, None)

    def bind_select(self, sel: exp.Select, outer: Scope | None, pull_correlated: bool = False):
        """Bind a SELECT. With pull_correlated, WHERE conjuncts that reference
        the outer scope are returned instead of applied, as a
        :class:`Correlated` next to the Bound query."""
        with self._with_ctes(sel):
            return self._bind_select(sel, outer, pull_correlated)

    def _bind_select(self, sel: exp.Select, outer: Scope | None, pull_correlated: bool):
        _check_clauses(sel)
        plan, scope = self._bind_from(sel, outer)
        lat = self._laterals.get(id(sel))
        if lat is not None:
            plan = lat.over(plan, scope)
        for clause in ("where", "group", "having"):
            node = sel.args.get(clause)
            if node is not None and has_window(node):
                raise BinderError(
                    f"{'GROUP BY' if clause == 'group' else clause.upper()} clause cannot contain window functions!"
                )
        plan, correlated = self._bind_where(sel, plan, scope, outer, pull_correlated)
        select_items = sel.expressions
        if any(isinstance(e, exp.Star) for e in select_items):
            raise BinderError("SELECT * needs a FROM clause")
        aggs_ast = select_aggregates(sel)
        group_items, sets = _group_items(sel)
        having = sel.args.get("having")
        aggregated = bool(aggs_ast) or bool(group_items) or having is not None or sets is not None

        post_ctx = ExprContext(scope, self)
        pulled = Correlated(correlated, [], None)
        if aggregated:
            plan, post_ctx, pulled = self._bind_aggregation(
                sel, plan, scope, group_items, sets, aggs_ast, correlated, lat
            )
            correlated = pulled.conditions
        elif having is not None:
            raise BinderError("HAVING without GROUP BY or aggregates")
        elif lat is not None:
            lat.keys = list(lat.columns)
        corr_groups = pulled.groups
        if corr_groups and not group_items:
            pulled.empty_value = self._empty_value(select_items, scope, post_ctx)
        if lat is not None and lat.marker is not None:
            lat.empty_items = list(select_items)
            lat.empty_aggs = post_ctx.aggs

        plan = self._bind_windows(
            sel, plan, post_ctx, correlated=bool(correlated), partition=lat.keys if lat is not None else ()
        )
        unnests = select_unnests(select_items)
        if unnests:
            if correlated:
                raise NotSupported("UNNEST in a correlated subquery")
            plan, post_ctx.unnests = bind_unnests(unnests, pre_apply(post_ctx, plan), post_ctx, self.field)
        exprs, outputs = self._bind_select_list(select_items, post_ctx)
        plan = pre_apply(post_ctx, plan)
        if pull_correlated and scope.outer_refs - _ids_of(correlated):
            used = {f.id for _, e in exprs for f in e.fields()}
            if used & scope.outer_refs:
                raise NotSupported("correlated column references outside the WHERE clause of a subquery")
        hidden = (_hidden_columns(correlated, scope) if correlated and not aggregated else []) + corr_groups
        if lat is not None:
            hidden += lat.keys + ([lat.marker] if lat.marker is not None else [])
        plan = L.Project(plan, tuple(exprs) + tuple((f, ColRef(f)) for f in hidden))
        distinct_on = _distinct_on(sel)
        if sel.args.get("distinct") and hidden and lat is None:
            raise NotSupported("DISTINCT in a correlated subquery")
        if sel.args.get("distinct") and distinct_on is None:
            keys = [f for f, _ in exprs] + [f for f in hidden if f not in [g for g, _ in exprs]]
            plan = L.Aggregate(plan, tuple((f, ColRef(f)) for f in keys), ())
        order_scope = Scope(scope.parent)
        order_scope.sources = dict(scope.sources)
        windowed = post_ctx.windows is not None
        bound = self._apply_order_limit(
            sel,
            plan,
            outputs,
            order_scope,
            post_ctx if aggregated or windowed else None,
            select_exprs={item_key(i): f for i, (_, f) in zip(select_items, outputs)},
            aliases={i.alias: i.this for i in select_items if isinstance(i, exp.Alias)},
            distinct=bool(sel.args.get("distinct")) and distinct_on is None,
            hidden=hidden,
            distinct_on=distinct_on,
            partition=lat.keys if lat is not None else None,
        )
        if correlated and (sel.args.get("limit") or sel.args.get("offset")):
            raise NotSupported("LIMIT in a correlated subquery")
        if pull_correlated:
            return bound, pulled
        if correlated:
            raise BinderError("correlated reference outside a subquery")
        return bound

    def _bind_where(self, sel: exp.Select, plan, scope: Scope, outer, pull_correlated: bool):
        """(plan, correlated conditions) after WHERE: plain predicates, then
        subquery joins, then predicates on their marks. With pull_correlated,
        the predicates that read the outer query are returned instead of applied."""
        correlated: list[Expr] = []
        where = sel.args.get("where")
        if where is None:
            return plan, correlated
        plain, with_sub = [], []
        for c in _ast_conjuncts(where.this):
            (with_sub if contains_subquery(c) else plain).append(c)
        preds = []
        for c in plain:
            e = self._bind_predicate(c, scope, "WHERE")
            if pull_correlated and scope.outer_refs & {f.id for f in e.fields()}:
                inner, outer_conds = local_conjuncts(e, scope.outer_refs)
                preds += inner
                correlated += outer_conds
            else:
                preds.append(e)
        if preds:
            plan = L.Filter(plan, conjoin(preds))
        for c in with_sub:
            plan = self._apply_where_subquery(c, plan, scope)
        if not pull_correlated and scope.outer_refs and outer is None:
            raise BinderError("reference to an outer query outside a subquery")
        return plan, correlated

    def _bind_aggregation(self, sel: exp.Select, plan, scope: Scope, group_items, sets, aggs_ast, correlated, lat=None):
        """(plan, post-aggregation context, what was pulled out of a correlated
        subquery) after GROUP BY, the aggregates and HAVING. A correlated
        aggregate is grouped by its correlation (glint.sql.decorrelate)."""
        pre = ExprContext(scope, self)
        groups, gmap, info = bind_group_by(group_items, sets, pre, lambda e, t: self.field(_name_of(e), t))
        grouping = info.sets if info is not None else None
        corr_groups: list[Field] = []
        marker, domain = [], None
        if correlated:
            if sets is not None:
                raise NotSupported("GROUPING SETS, ROLLUP or CUBE in a correlated subquery")
            pairs = split_correlation(correlated, scope.outer_refs)
            if pairs is None:
                plan, domain, keys = dependent_join(correlated, scope.outer_refs, plan, self.field)
                pairs = [(ColRef(d), ColRef(o)) for d, o in keys]
                marker = [found_marker(self.field)]
                corr_groups.append(marker[0][0])
            correlated = []
            for inner_e, outer_e in pairs:
                f = self.field("corr", inner_e.type)
                groups.append((f, inner_e))
                corr_groups.append(f)
                correlated += null_safe_equal(outer_e, ColRef(f)) if marker else [ty.compare("eq", outer_e, ColRef(f))]
        if lat is not None:
            if sets is not None:
                raise NotSupported("GROUPING SETS, ROLLUP or CUBE in a LATERAL subquery")
            groups += lat.group_by(gmap, self.field)
            if not group_items:
                if sel.args.get("having") is not None:
                    raise NotSupported("HAVING without GROUP BY in a LATERAL subquery")
                marker = [found_marker(self.field)]
                lat.marker = marker[0][0]
        aggs, amap = bind_aggregates(aggs_ast, pre, lambda e, t: self.field(_name_of(e), t))
        plan = pre_apply(pre, plan)
        plan = L.Aggregate(plan, tuple(groups), tuple(aggs) + tuple(marker), grouping)
        post_ctx = ExprContext(scope, self, groups=gmap, aggs=amap)
        post_ctx.grouping = info
        having = sel.args.get("having")
        if having is not None:
            h = ty.require_boolean(bind(having.this, post_ctx), "HAVING")
            plan = pre_apply(post_ctx, plan)
            plan = L.Filter(plan, h)
        return plan, post_ctx, Correlated(correlated, corr_groups, None, domain)

    def _empty_value(self, select_items, scope: Scope, post_ctx: ExprContext):
        """A correlated aggregate subquery's value over no rows (COUNT: 0), or None."""
        if len(select_items) != 1:
            return None
        item = select_items[0]
        ectx = ExprContext(scope, self, groups={}, aggs=post_ctx.aggs)
        ectx.empty_aggs = True
        try:
            return fold_expr(bind(item.this if isinstance(item, exp.Alias) else item, ectx))
        except (BinderError, NotSupported):
            return None

    def _bind_select_list(self, select_items, ctx: ExprContext):
        """([(field, expression)], [(output name, field)]) of the SELECT list."""
        exprs, outputs = [], []
        for item in select_items:
            name = _output_name(item, ctx.scope)
            e = bind(item.this if isinstance(item, exp.Alias) else item, ctx)
            if e.type.kind == "INTERVAL":
                raise NotSupported("INTERVAL values in results")
            f = self.field(name, e.type)
            exprs.append((f, e))
            outputs.append((name, f))
        return exprs, outputs

    def _bind_windows(self, sel: exp.Select, plan, ctx: ExprContext, correlated: bool, partition=()):
        """The Window node computing every window call of the SELECT list,
        QUALIFY and ORDER BY (after GROUP BY / HAVING), and the QUALIFY filter.
        ``ctx`` learns the columns that hold the calls' values. In a correlated
        subquery the correlation becomes a join condition applied after the
        subquery's plan, too late for windows over the correlated rows."""
        qualify = sel.args.get("qualify")
        order = sel.args.get("order")
        roots = (
            list(sel.expressions)
            + ([qualify.this] if qualify is not None else [])
            + ([o.this for o in order.expressions] if order is not None else [])
        )
        calls = [w for r in roots for w in window_calls(r)]
        if not calls:
            if qualify is not None:
                raise BinderError("at least one window function must appear in the SELECT column or QUALIFY clause")
            return plan
        if correlated:
            raise NotSupported("window functions in a correlated subquery")
        named = named_windows(sel)
        funcs, wmap = [], {}
        for w in calls:
            key = w.sql(dialect="duckdb")
            if key not in wmap:
                wf = bind_window(w, ctx, named)
                if partition:  # a LATERAL subquery's windows: one set of partitions per outer value
                    wf = dataclasses.replace(wf, partition=wf.partition + tuple(ColRef(k) for k in partition))
                f = self.field(_name_of(w), wf.type)
                funcs.append((f, wf))
                wmap[key] = f
        plan = L.Window(pre_apply(ctx, plan), tuple(funcs))
        ctx.windows = wmap
        if qualify is not None:
            q = ty.require_boolean(bind(qualify.this, ctx), "QUALIFY")
            if ctx.pending:
                raise NotSupported("subqueries in QUALIFY")
            plan = L.Filter(plan, q)
        return plan

    def _apply_order_limit(
        self,
        node,
        plan,
        outputs,
        scope,
        post_ctx,
        select_exprs=None,
        distinct=False,
        hidden=(),
        aliases=None,
        distinct_on=None,
        partition=None,
    ):
        """ORDER BY, LIMIT / OFFSET and DISTINCT ON (the first row of each
        distinct value of its expressions, in the ORDER BY's order) over the
        SELECT's projection."""
        order = node.args.get("order")
        extra: list = []

        def field_of(e, clause: str):
            f = self._output_field(e, outputs, select_exprs, aliases, clause)
            if f is not None:
                return f
            if distinct or isinstance(node, exp.SetOperation):
                raise BinderError(f"ORDER BY expression {e.sql(dialect='duckdb')} must appear in the select list")
            ctx = post_ctx if post_ctx is not None else ExprContext(scope, self)
            be = bind(_expand_aliases(e, aliases) if aliases else e, ctx)
            if ctx.pending:
                raise NotSupported(f"subqueries in {clause}")
            f = self.field("__order", be.type)
            extra.append((f, be))
            return f

        keys = []
        for o in order.expressions if order is not None else ():
            f = field_of(o.this, "ORDER BY")
            keys.append(L.SortKey(ColRef(f), bool(o.args.get("desc")), bool(o.args.get("nulls_first"))))
        on = [field_of(e, "DISTINCT ON") for e in distinct_on or ()]
        if extra:
            plan = self._extend_project(plan, extra)
        if distinct_on is not None:
            rn = self.field("row_number", T.BIGINT)
            w = L.WindowFunc("row_number", (), tuple(ColRef(f) for f in on), tuple(keys), L.DEFAULT_FRAME, T.BIGINT)
            first = Call("eq", (ColRef(rn), Literal(1, T.BIGINT)), T.BOOLEAN)
            plan = L.Filter(L.Window(plan, ((rn, w),)), first)
        limit, offset = _const_count(node.args.get("limit")), _const_count(node.args.get("offset"))
        if partition is not None:
            # a LATERAL subquery: its order means nothing to the join, its LIMIT holds per outer value
            if limit is not None or offset:
                plan = self._limit_per_partition(plan, partition, keys, limit, offset or 0)
        else:
            if keys:
                plan = L.Sort(plan, tuple(keys))
            if limit is not None or offset:
                plan = L.Limit(plan, limit, offset or 0)
        keep = {f.id for _, f in outputs} | {f.id for f in hidden}
        if any(f.id not in keep for f in plan.schema):
            plan = L.Project(plan, tuple((f, ColRef(f)) for f in plan.schema if f.id in keep))
        return Bound(plan, outputs)

    def _limit_per_partition(self, plan, partition, keys, limit, offset):
        """LIMIT / OFFSET within each value of ``partition``, in the order of ``keys``."""
        rn = self.field("row_number", T.BIGINT)
        w = L.WindowFunc("row_number", (), tuple(ColRef(f) for f in partition), tuple(keys), L.DEFAULT_FRAME, T.BIGINT)
        conds = [Call("gt", (ColRef(rn), Literal(offset, T.BIGINT)), T.BOOLEAN)]
        if limit is not None:
            conds.append(Call("le", (ColRef(rn), Literal(offset + limit, T.BIGINT)), T.BOOLEAN))
        return L.Filter(L.Window(plan, ((rn, w),)), conjoin(conds))

    @staticmethod
    def _output_field(e, outputs, select_exprs, aliases, clause: str):
        """The output column an ORDER BY / DISTINCT ON item names: a position,
        an output name, a select expression (also after its aliases are
        expanded), or None."""
        if isinstance(e, exp.Literal) and not e.is_string:
            i = int(e.this)
            if not 1 <= i <= len(outputs):
                raise BinderError(f"{clause} position {i} is not in the select list")
            return outputs[i - 1][1]
        by_name = {}
        for n, f in outputs:
            by_name.setdefault(n.lower(), f)
        if isinstance(e, exp.Column) and not e.table and e.name.lower() in by_name:
            return by_name[e.name.lower()]
        if select_exprs and item_key(e) in select_exprs:
            return select_exprs[item_key(e)]
        if aliases:
            # a select alias inside an expression (qualify leaves it unqualified)
            # stands for the expression it names
            e = _expand_aliases(e, aliases)
            if select_exprs and item_key(e) in select_exprs:
                return select_exprs[item_key(e)]
        return None

    def _extend_project(self, plan, extra):
        """Add ORDER BY expressions that are not in the select list as hidden columns."""
        if isinstance(plan, L.Project):
            return L.Project(plan.child, plan.exprs + tuple(extra))
        raise NotSupported("ORDER BY on expressions outside the select list here")


def _check_clauses(sel: exp.Select) -> None:
    for k in ("connect", "match", "laterals", "pivots", "into", "sample"):
        if sel.args.get(k):
            raise NotSupported(f"{k.upper()} clause")


def _distinct_on(sel: exp.Select) -> list | None:
    """The expressions of DISTINCT ON (...), or None."""
    d = sel.args.get("distinct")
    on = d.args.get("on") if d is not None else None
    if on is None:
        return None
    return list(on.expressions) if isinstance(on, exp.Tuple) else [on]


def _group_items(sel: exp.Select) -> tuple[list, list | None]:
    """(the GROUP BY expressions, the grouping sets as positions among them or None)."""
    group = sel.args.get("group")
    select_items = sel.expressions
    sets = None
    if has_grouping_sets(group):
        group_items, sets = grouping_sets(group, select_items)
    else:
        group_items = list(group.expressions) if group is not None else []
        if group is not None and not group_items and not group.args.get("all"):
            raise ParseError("syntax error: GROUP BY without expressions")
    if group is not None and group.args.get("all"):
        # GROUP BY ALL: every select item that holds no aggregate
        group_items = [
            i.this if isinstance(i, exp.Alias) else i
            for i in select_items
            if not find_aggregates(i) and not has_window(i)
        ]
    return group_items, sets


def _hidden_columns(correlated: list[Expr], scope: Scope) -> list[Field]:
    """The inner columns a non-aggregated subquery's correlation conditions
    read: they must leave the subquery."""
    hidden: list[Field] = []
    inner_ids = {f.id for f in scope.all_fields()}
    for c in correlated:
        for f in c.fields():
            if f.id in inner_ids and f not in hidden:
                hidden.append(f)
    return hidden


def _ids_of(exprs) -> set[int]:
    return {f.id for e in exprs for f in e.fields()}


def _const_count(node):
    if node is None:
        return None
    e = node.args.get("expression") or node.this
    if isinstance(e, exp.Literal) and not e.is_string:
        v = int(e.this)
        if v < 0:
            raise BinderError("LIMIT/OFFSET must not be negative")
        return v
    raise NotSupported("LIMIT/OFFSET that is not a constant integer")


def _expand_aliases(e: exp.Expression, aliases: dict) -> exp.Expression:
    """``e`` with each unqualified column that names a select alias replaced by
    the aliased expression.

    >>> import sqlglot
    >>> e = sqlglot.parse_one("CASE WHEN x = 0 THEN s END", read="duckdb")
    >>> _expand_aliases(e, {"s": sqlglot.parse_one("t.a", read="duckdb")}).sql()
    'CASE WHEN x = 0 THEN t.a END'
    """

    def repl(n):
        if isinstance(n, exp.Column) and not n.table and n.name in aliases:
            return aliases[n.name].copy()
        return n

    return e.copy().transform(repl)


def item_key(e: exp.Expression) -> str:
    if isinstance(e, exp.Alias):
        e = e.this
    while isinstance(e, exp.Paren):
        e = e.this
    return e.sql(dialect="duckdb")


def _output_name(item: exp.Expression, scope: Scope) -> str:
    """A SELECT item's result column name: its alias as written or the DuckDB
    name :mod:`glint.sql.names` gave it, or for a column the name of the
    column it resolves to."""
    inner = item
    if isinstance(item, exp.Alias):
        display = item.args["alias"].meta.get("display")
        if display:
            return display
        inner = item.this
        if not isinstance(inner, exp.Column) or item.alias.lower() != inner.name.lower():
            return item.alias  # (qualify moves a derived table's column names into its SELECT)
    if isinstance(inner, exp.Column) and not isinstance(inner.this, exp.Star):
        label = scope.label(inner.table or None, inner.name)
        if label:
            return label
    return item.alias_or_name


def _name_of(e: exp.Expression) -> str:
    """A readable name for a computed column (plans print it): the SQL text
    without quotes or table qualifiers, shortened."""
    if isinstance(e, exp.Column):
        return e.name
    text = re.sub(r'"[^"]*"\.', "", e.sql(dialect="duckdb")).replace('"', "")
    return text if len(text) <= 32 else text[:31] + "…"


def _ast_conjuncts(node) -> list:
    if isinstance(node, exp.And):
        return _ast_conjuncts(node.this) + _ast_conjuncts(node.expression)
    if isinstance(node, exp.Paren):
        inner = node.this
        if isinstance(inner, exp.And):
            return _ast_conjuncts(inner)
    return [node]
