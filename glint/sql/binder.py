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
import itertools
import re

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported, ParseError, TypeMismatch
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Call, Case, ColRef, Expr, Field, Literal, conjoin
from glint.sql.bind_agg import bind_aggregates, bind_group_by, find_aggregates
from glint.sql.bind_expr import ExprContext, bind
from glint.sql.bind_values import bind_values
from glint.sql.bind_window import bind_window, has_window, named_windows, window_calls
from glint.sql.folding import fold_expr
from glint.sql.grouping_sets import grouping_sets, has_grouping_sets
from glint.sql.scope import Scope


class Bound:
    """A bound query: its plan and its visible output columns (name, field)."""

    __slots__ = ("plan", "outputs")

    def __init__(self, plan: L.LogicalNode, outputs: list[tuple[str, Field]]):
        self.plan = plan
        self.outputs = outputs


class Binder:
    def __init__(self, catalog):
        self.catalog = catalog  # name -> Table (schema dict)
        self._ids = itertools.count(1)
        self._ctes: list[dict[str, tuple[exp.Expression, list]]] = []  # (body, the CTEs it sees)

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
        if with_.args.get("recursive"):
            raise NotSupported("WITH RECURSIVE")
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
                level[name] = (c.this, env)
                self._bind_cte(c.this, env)
            yield
        finally:
            self._ctes.pop()

    def _bind_cte(self, body: exp.Expression, env: list) -> Bound:
        saved, self._ctes = self._ctes, env
        try:
            return self.bind_query(body, None)
        finally:
            self._ctes = saved

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
        aggs_ast = _aggregate_calls(sel)
        group_items, sets = _group_items(sel)
        having = sel.args.get("having")
        aggregated = bool(aggs_ast) or bool(group_items) or having is not None or sets is not None

        post_ctx = ExprContext(scope, self)
        corr_groups: list[Field] = []
        if aggregated:
            plan, post_ctx, correlated, corr_groups = self._bind_aggregation(
                sel, plan, scope, group_items, sets, aggs_ast, correlated
            )
        elif having is not None:
            raise BinderError("HAVING without GROUP BY or aggregates")
        empty_value = self._empty_value(select_items, scope, post_ctx) if corr_groups else None

        plan = self._bind_windows(sel, plan, post_ctx, correlated=bool(correlated))
        exprs, outputs = self._bind_select_list(select_items, post_ctx)
        plan = pre_apply(post_ctx, plan)
        if pull_correlated and scope.outer_refs - _ids_of(correlated):
            used = {f.id for _, e in exprs for f in e.fields()}
            if used & scope.outer_refs:
                raise NotSupported("correlated column references outside the WHERE clause of a subquery")
        hidden = (_hidden_columns(correlated, scope) if correlated and not aggregated else []) + corr_groups
        plan = L.Project(plan, tuple(exprs) + tuple((f, ColRef(f)) for f in hidden))
        if sel.args.get("distinct"):
            if hidden:
                raise NotSupported("DISTINCT in a correlated subquery")
            plan = L.Aggregate(plan, tuple((f, ColRef(f)) for f, _ in exprs), ())
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
            distinct=bool(sel.args.get("distinct")),
            hidden=hidden,
        )
        if correlated and (sel.args.get("limit") or sel.args.get("offset")):
            raise NotSupported("LIMIT in a correlated subquery")
        if pull_correlated:
            return bound, Correlated(correlated, corr_groups, empty_value)
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
            (with_sub if _contains_subquery(c) else plain).append(c)
        preds = []
        for c in plain:
            e = self._bind_predicate(c, scope, "WHERE")
            if pull_correlated and scope.outer_refs & {f.id for f in e.fields()}:
                correlated.append(e)
            else:
                preds.append(e)
        if preds:
            plan = L.Filter(plan, conjoin(preds))
        for c in with_sub:
            plan = self._apply_where_subquery(c, plan, scope)
        if not pull_correlated and scope.outer_refs and outer is None:
            raise BinderError("reference to an outer query outside a subquery")
        return plan, correlated

    def _bind_aggregation(self, sel: exp.Select, plan, scope: Scope, group_items, sets, aggs_ast, correlated):
        """(plan, post-aggregation context, correlated conditions, correlation
        groups) after GROUP BY, the aggregates and HAVING. A correlated aggregate
        is grouped by the inner side of each correlation equality."""
        pre = ExprContext(scope, self)
        groups, gmap, info = bind_group_by(group_items, sets, pre, lambda e, t: self.field(_name_of(e), t))
        grouping = info.sets if info is not None else None
        corr_groups: list[Field] = []
        if correlated:
            if group_items or sets is not None:
                raise NotSupported("GROUP BY in a correlated subquery")
            correlated, extra = self._split_correlation(correlated, scope)
            for inner_e, outer_e in extra:
                f = self.field("corr", inner_e.type)
                groups.append((f, inner_e))
                corr_groups.append(f)
                correlated.append(ty.compare("eq", outer_e, ColRef(f)))
        aggs, amap = bind_aggregates(aggs_ast, pre, lambda e, t: self.field(_name_of(e), t))
        plan = pre_apply(pre, plan)
        plan = L.Aggregate(plan, tuple(groups), tuple(aggs), grouping)
        post_ctx = ExprContext(scope, self, groups=gmap, aggs=amap)
        post_ctx.grouping = info
        having = sel.args.get("having")
        if having is not None:
            h = ty.require_boolean(bind(having.this, post_ctx), "HAVING")
            plan = pre_apply(post_ctx, plan)
            plan = L.Filter(plan, h)
        return plan, post_ctx, correlated, corr_groups

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

    def _bind_windows(self, sel: exp.Select, plan, ctx: ExprContext, correlated: bool):
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

    def _split_correlation(self, conds: list[Expr], scope: Scope):
        """(non-equality leftovers, [(inner expr, outer expr)]) for correlated conditions."""
        outer_ids = scope.outer_refs
        pairs = []
        for c in conds:
            if isinstance(c, Call) and c.fn == "eq":
                a, b = c.args
                ia, ib = _ids_of([a]), _ids_of([b])
                if ia and not (ia & outer_ids) and ib and ib <= outer_ids:
                    pairs.append((a, b))
                    continue
                if ib and not (ib & outer_ids) and ia and ia <= outer_ids:
                    pairs.append((b, a))
                    continue
            raise NotSupported(
                f"correlated subquery with aggregates and the condition {c!r} "
                "(only equalities between inner and outer columns are decorrelated)"
            )
        return [], pairs

    def _apply_order_limit(self, node, plan, outputs, scope, post_ctx, select_exprs=None, distinct=False, hidden=()):
        order = node.args.get("order")
        if order is not None:
            keys, extra = [], []
            by_name = {}
            for n, f in outputs:
                by_name.setdefault(n.lower(), f)
            for o in order.expressions:
                e = o.this
                f = None
                if isinstance(e, exp.Literal) and not e.is_string:
                    i = int(e.this)
                    if not 1 <= i <= len(outputs):
                        raise BinderError(f"ORDER BY position {i} is not in the select list")
                    f = outputs[i - 1][1]
                elif isinstance(e, exp.Column) and not e.table and e.name.lower() in by_name:
                    f = by_name[e.name.lower()]
                elif select_exprs and item_key(e) in select_exprs:
                    f = select_exprs[item_key(e)]
                if f is None:
                    if distinct or isinstance(node, exp.SetOperation):
                        raise BinderError(
                            f"ORDER BY expression {e.sql(dialect='duckdb')} must appear in the select list"
                        )
                    ctx = post_ctx if post_ctx is not None else ExprContext(scope, self)
                    be = bind(e, ctx)
                    if ctx.pending:
                        raise NotSupported("subqueries in ORDER BY")
                    f = self.field("__order", be.type)
                    extra.append((f, be))
                desc = bool(o.args.get("desc"))
                nf = o.args.get("nulls_first")
                keys.append(L.SortKey(ColRef(f), desc, bool(nf)))
            if extra:
                plan = self._extend_project(plan, extra)
            plan = L.Sort(plan, tuple(keys))
        limit, offset = _const_count(node.args.get("limit")), _const_count(node.args.get("offset"))
        if limit is not None or offset:
            plan = L.Limit(plan, limit, offset or 0)
        keep = {f.id for _, f in outputs} | {f.id for f in hidden}
        if any(f.id not in keep for f in plan.schema):
            plan = L.Project(plan, tuple((f, ColRef(f)) for f in plan.schema if f.id in keep))
        return Bound(plan, outputs)

    def _extend_project(self, plan, extra):
        """Add ORDER BY expressions that are not in the select list as hidden columns."""
        if isinstance(plan, L.Project):
            return L.Project(plan.child, plan.exprs + tuple(extra))
        raise NotSupported("ORDER BY on expressions outside the select list here")

    # ------------------------------------------------------------ FROM
    def _bind_from(self, sel, outer):
        scope = Scope(outer)
        from_ = sel.args.get("from") or sel.args.get("from_")
        if from_ is None:
            if sel.args.get("joins"):
                raise BinderError("JOIN without FROM")
            return L.OneRow(), scope
        plan = self._bind_source(from_.this, scope)
        for group in _comma_groups(sel.args.get("joins") or []):
            if group[0] is not None and _binds_apart(group):
                plan = self._bind_comma_group(plan, group, scope)
                continue
            for j in group:
                if j is not None:
                    plan = self._bind_join(plan, j, scope)
        return plan, scope

    def _bind_comma_group(self, left, group, scope: Scope) -> L.LogicalNode:
        """``FROM a, b RIGHT JOIN c ON ...``: a JOIN binds tighter than the comma,
        so ``b RIGHT JOIN c`` is joined first, on its own, and then crossed with
        what came before the comma (WHERE's conditions become the join's later).
        Joining left to right would keep c's unmatched rows once instead of once per
        row of a. The tables before the comma are not visible in the group's ON
        conditions (as in PostgreSQL; DuckDB refuses such a condition too)."""
        before = set(scope.sources)
        gscope = Scope(scope.parent)
        plan = self._bind_source(group[0].this, gscope)
        for j in group[1:]:
            on = j.args.get("on")
            for c in on.find_all(exp.Column) if on is not None else ():
                if c.table and c.table in before and c.table not in gscope.sources and j.this.alias_or_name != c.table:
                    side = (j.side or j.kind or "INNER").upper()
                    raise BinderError(
                        f'the ON condition of a {side} JOIN refers to "{c.table}", a table before a comma in the '
                        f'same FROM: a JOIN binds tighter than the comma, so "{c.table}" is not '
                        f'visible there (move the condition to WHERE, or join "{c.table}" with JOIN ... ON)'
                    )
            plan = self._bind_join(plan, j, gscope)
        scope.sources.update(gscope.sources)
        scope.outer_refs |= gscope.outer_refs
        return L.Join(left, plan, "inner", None)

    def _bind_source(self, src, scope: Scope) -> L.LogicalNode:
        if isinstance(src, exp.Table):
            if src.args.get("joins") or isinstance(src.this, exp.Anonymous) or src.args.get("pivots"):
                raise NotSupported(f"table function or pivot {src.sql(dialect='duckdb')}")
            name = src.name
            alias = src.alias_or_name
            cte = self._find_cte(name) if not src.db else None
            if cte is not None:
                b = self._bind_cte(*cte)
                scope.add(alias, _output_map(b.outputs, src))
                return b.plan
            table = self.catalog.table(name)
            fields = tuple(self.field(c, t) for c, t in table.schema.items())
            cols = {}
            for c, f in zip(table.schema, fields):
                cols.setdefault(c, f)  # (names resolve regardless of case: Scope)
            scope.add(alias, _rename(cols, src))
            return L.Scan(table.name, tuple(table.schema), fields, alias)
        if isinstance(src, exp.Subquery):
            if src.args.get("lateral"):
                raise NotSupported("LATERAL subqueries")
            b = self.bind_query(src.this, scope.parent)
            b = self._order_limit_outer(src, b)
            scope.add(src.alias_or_name, _output_map(b.outputs, src))
            return b.plan
        if isinstance(src, (exp.Unnest, exp.Lateral)):
            raise NotSupported(type(src).__name__.upper())
        if isinstance(src, exp.Values):
            plan, outputs = bind_values(src, self)
            scope.add(src.alias_or_name, _output_map(outputs, src))
            return plan
        raise NotSupported(f"FROM item {src.sql(dialect='duckdb')[:60]}")

    def _find_cte(self, name):
        for level in reversed(self._ctes):
            if name in level:
                return level[name]
        return None

    def _bind_join(self, left, j: exp.Join, scope: Scope) -> L.LogicalNode:
        if j.args.get("method") or j.args.get("global"):
            raise NotSupported(f"{j.args.get('method')} JOIN")
        right_scope = Scope(scope.parent)
        right = self._bind_source(j.this, right_scope)
        side = (j.side or "").upper()
        kind = (j.kind or "").upper()
        if kind in ("SEMI", "ANTI"):
            jk = kind.lower()
        elif side == "LEFT":
            jk = "left"
        elif side == "RIGHT":
            jk = "right"
        elif side == "FULL":
            jk = "full"
        elif kind in ("", "INNER", "CROSS", "OUTER"):
            jk = "inner"
        else:
            raise NotSupported(f"{kind} JOIN")
        on = j.args.get("on")
        if j.args.get("using"):
            raise NotSupported("JOIN ... USING that could not be resolved")
        both = scope.merged(right_scope)
        cond = None
        if on is not None:
            if _contains_subquery(on):
                raise NotSupported("subqueries in JOIN conditions")
            cond = self._bind_predicate(on, both, "JOIN condition")
        if jk not in ("semi", "anti"):
            scope.sources.update(right_scope.sources)
        scope.outer_refs |= right_scope.outer_refs | both.outer_refs
        return L.Join(left, right, jk, cond)

    def _bind_predicate(self, node, scope, where: str) -> Expr:
        ctx = ExprContext(scope, self)
        e = ty.require_boolean(bind(node, ctx), where)
        if ctx.pending:
            raise NotSupported(f"subqueries in {where}")
        return e

    # ------------------------------------------------------------ subqueries
    def _apply_where_subquery(self, c: exp.Expression, plan, scope) -> L.LogicalNode:
        negate = False
        node = c
        if isinstance(node, exp.Not) and isinstance(node.this, (exp.Exists, exp.In)):
            negate, node = True, node.this
        if isinstance(node, exp.Exists) or (isinstance(node, exp.In) and node.args.get("query") is not None):
            join = self._subquery_join(node, scope, "anti" if negate else "semi")
            return join(plan)
        ctx = ExprContext(scope, self)
        e = ty.require_boolean(bind(c, ctx), "WHERE")
        return L.Filter(pre_apply(ctx, plan), e)

    def bind_subquery_predicate(self, node, ctx: ExprContext, negate: bool) -> Expr:
        """EXISTS / IN (subquery) inside an expression: a MARK join's column."""
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
            return lambda plan: L.Join(plan, b.plan, kind, cond, mark)
        if len(b.outputs) != 1:
            raise BinderError(f"subquery in IN returns {len(b.outputs)} columns, expected 1")
        outer_e = bind(node.this, ExprContext(scope, self))
        inner_e = ColRef(b.outputs[0][1])
        eq = ty.compare("eq", outer_e, inner_e)
        cond = conjoin([eq] + corr)
        null_aware = (eq.args[0], eq.args[1]) if kind in ("anti", "mark") else None
        return lambda plan: L.Join(plan, b.plan, kind, cond, mark, null_aware)

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
        ctx.pending.append(lambda plan: L.Join(plan, b.plan, "single", cond))
        empty = c.empty_value
        if c.groups and empty is not None and not (isinstance(empty, Literal) and empty.value is None):
            # rows that found no group see the subquery's value over an empty input (COUNT -> 0)
            miss = Call("is_null", (ColRef(c.groups[0]),), T.BOOLEAN)
            return Case(((miss, ty.cast(empty, value.type)),), value, value.type)
        return value


class Correlated:
    """What a subquery's binding pulled out: the correlation conditions, the
    fields of a correlated aggregate's groups, and its value over no rows."""

    __slots__ = ("conditions", "groups", "empty_value")

    def __init__(self, conditions, groups, empty_value):
        self.conditions = conditions
        self.groups = groups
        self.empty_value = empty_value


def _check_clauses(sel: exp.Select) -> None:
    for k in ("connect", "match", "laterals", "pivots", "into", "sample"):
        if sel.args.get(k):
            raise NotSupported(f"{k.upper()} clause")
    if sel.args.get("distinct") and sel.args["distinct"].args.get("on"):
        raise NotSupported("DISTINCT ON")


def _aggregate_calls(sel: exp.Select) -> list[exp.Expression]:
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


def pre_apply(ctx: ExprContext, plan):
    for fn in ctx.pending:
        plan = fn(plan)
    ctx.pending.clear()
    return plan


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


def item_key(e: exp.Expression) -> str:
    if isinstance(e, exp.Alias):
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


def _output_map(outputs, src) -> dict:
    cols = {}
    alias = src.args.get("alias")
    names = [_spelling(c) for c in alias.columns] if alias is not None and alias.columns else None
    for i, (n, f) in enumerate(outputs):
        name = names[i] if names and i < len(names) else n
        cols.setdefault(name, f)
    return cols


def _spelling(ident) -> str:
    """A column alias as written (qualify lower-cases it)."""
    return ident.meta.get("display") or ident.name


def _rename(cols: dict, src) -> dict:
    alias = src.args.get("alias")
    if alias is not None and alias.columns:
        names = [_spelling(c) for c in alias.columns]
        out = {}
        for i, (n, f) in enumerate(cols.items()):
            out[names[i] if i < len(names) else n] = f
        return out
    return cols


def _ast_conjuncts(node) -> list:
    if isinstance(node, exp.And):
        return _ast_conjuncts(node.this) + _ast_conjuncts(node.expression)
    if isinstance(node, exp.Paren):
        inner = node.this
        if isinstance(inner, exp.And):
            return _ast_conjuncts(inner)
    return [node]


def _contains_subquery(node) -> bool:
    return any(isinstance(n, (exp.Select, exp.Subquery, exp.Exists)) for n in node.walk())


def _comma_groups(joins) -> list[list]:
    """Split a FROM's joins at its commas: the first group continues the FROM's
    first item (its head is None), each later one starts with a comma item."""
    groups: list[list] = [[None]]
    for j in joins:
        side, kind = (j.side or "").upper(), (j.kind or "").upper()
        if not side and not kind and not j.args.get("on") and not j.args.get("using"):
            groups.append([j])
        else:
            groups[-1].append(j)
    return groups


def _binds_apart(group) -> bool:
    """Whether a comma group must be joined on its own before the cross product:
    only a RIGHT or FULL join in it differs from joining left to right."""
    return any((j.side or "").upper() in ("RIGHT", "FULL") for j in group[1:])
