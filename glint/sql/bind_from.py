"""Binding of FROM: tables, CTEs, derived tables, VALUES lists, the rows of
table functions (glint.sql.row_sources), and joins (a JOIN binds tighter than
a comma)."""

from __future__ import annotations

from sqlglot import exp

from glint.errors import BinderError, NotSupported
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Expr
from glint.sql.bind_expr import ExprContext, bind
from glint.sql.bind_values import bind_values
from glint.sql.row_sources import series_per_row
from glint.sql.scope import Scope


class FromBinder:
    """The FROM half of :class:`glint.sql.binder.Binder` (a mixin: it uses the
    binder's fields, CTEs and query binding)."""

    def _bind_from(self, sel, outer):
        scope = Scope(outer)
        from_ = sel.args.get("from") or sel.args.get("from_")
        if from_ is None:
            if sel.args.get("joins"):
                raise BinderError("JOIN without FROM")
            return L.OneRow(), scope
        plan = self._bind_source(from_.this, scope)
        for group in comma_groups(sel.args.get("joins") or []):
            if group[0] is not None and binds_apart(group):
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
            source = self.row_sources.get(name) if not src.db else None
            if source is not None:
                plan, cols = source.plan(self.field)
                scope.add(alias, rename_columns(cols, src))
                return plan
            working = self.working_table(name) if not src.db else None
            if working is not None:
                plan, cols = working
                scope.add(alias, rename_columns(cols, src))
                return plan
            cte = self._find_cte(name) if not src.db else None
            if cte is not None:
                b = self._bind_cte(*cte)
                scope.add(alias, output_map(b.outputs, src))
                return b.plan
            table = self.catalog.table(name)
            fields = tuple(self.field(c, t) for c, t in table.schema.items())
            cols = {}
            for c, f in zip(table.schema, fields):
                cols.setdefault(c, f)  # (names resolve regardless of case: Scope)
            scope.add(alias, rename_columns(cols, src))
            return L.Scan(table.name, tuple(table.schema), fields, alias)
        if isinstance(src, exp.Lateral) and isinstance(src.this, exp.Subquery):
            src = exp.Subquery(this=src.this.this, alias=src.args.get("alias") or src.this.args.get("alias"))
        if isinstance(src, exp.Subquery):
            b = self.bind_query(src.this, scope.parent)
            b = self._order_limit_outer(src, b)
            scope.add(src.alias_or_name, output_map(b.outputs, src))
            return b.plan
        if isinstance(src, (exp.Unnest, exp.Lateral)):
            raise NotSupported(f"{type(src).__name__.upper()} {src.sql(dialect='duckdb')[:60]}")
        if isinstance(src, exp.Values):
            plan, outputs = bind_values(src, self)
            scope.add(src.alias_or_name, output_map(outputs, src))
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
        if isinstance(j.this, exp.Lateral) or (isinstance(j.this, exp.Subquery) and j.this.args.get("lateral")):
            return self._bind_lateral_join(left, j, scope)
        source = self.row_sources.get(j.this.name) if isinstance(j.this, exp.Table) and not j.this.db else None
        if source is not None and source.lateral is not None:
            return self._bind_series_join(left, j, scope, source)
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
            if contains_subquery(on):
                raise NotSupported("subqueries in JOIN conditions")
            cond = self._bind_predicate(on, both, "JOIN condition")
        if jk not in ("semi", "anti"):
            scope.sources.update(right_scope.sources)
        scope.outer_refs |= right_scope.outer_refs | both.outer_refs
        return L.Join(left, right, jk, cond)

    def _bind_series_join(self, left, j: exp.Join, scope: Scope, source) -> L.LogicalNode:
        """``FROM t, range(t.n)`` / ``JOIN generate_series(...) ON ...``: each row
        of the left side once per value of its own series."""
        side, kind = (j.side or "").upper(), (j.kind or "").upper()
        if side not in ("", "LEFT") or kind in ("SEMI", "ANTI"):
            raise BinderError("The combining JOIN type must be INNER or LEFT for a LATERAL reference")
        on = j.args.get("on")
        trivial = on is None or (isinstance(on, exp.Boolean) and on.this)
        if side == "LEFT" and not trivial:
            raise NotSupported(f"LEFT JOIN {source.column}(...) ON a condition other than TRUE")
        ctx = ExprContext(scope, self)
        plan, f = series_per_row(source.lateral, left, ctx, source.column, self.field, side == "LEFT")
        scope.add(j.this.alias_or_name, rename_columns({source.column: f}, j.this))
        if not trivial:
            plan = L.Filter(plan, self._bind_predicate(on, scope, "JOIN condition"))
        return plan

    def _bind_predicate(self, node, scope, where: str) -> Expr:
        ctx = ExprContext(scope, self)
        e = ty.require_boolean(bind(node, ctx), where)
        if ctx.pending:
            raise NotSupported(f"subqueries in {where}")
        return e


def output_map(outputs, src) -> dict:
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


def rename_columns(cols: dict, src) -> dict:
    alias = src.args.get("alias")
    if alias is not None and alias.columns:
        names = [_spelling(c) for c in alias.columns]
        out = {}
        for i, (n, f) in enumerate(cols.items()):
            out[names[i] if i < len(names) else n] = f
        return out
    return cols


def contains_subquery(node) -> bool:
    return any(isinstance(n, (exp.Select, exp.Subquery, exp.Exists)) for n in node.walk())


def comma_groups(joins) -> list[list]:
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


def binds_apart(group) -> bool:
    """Whether a comma group must be joined on its own before the cross product:
    only a RIGHT or FULL join in it differs from joining left to right."""
    return any((j.side or "").upper() in ("RIGHT", "FULL") for j in group[1:])
