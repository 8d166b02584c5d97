"""LATERAL subqueries: ``FROM t, LATERAL (SELECT ... t.a ...)``, ``JOIN
LATERAL (...) ON ...`` and ``LEFT JOIN LATERAL (...) ON ...``.

A LATERAL subquery reads columns of the FROM items before it. It is
decorrelated as DuckDB flattens a dependent join: the distinct values of the
outer columns it reads (its domain, glint.sql.decorrelate.Domain) are crossed
with the subquery's own FROM, under the outer tables' names, so that the
subquery reads them as columns of its own; its aggregates are grouped by
them too, its windows partitioned by them and its LIMIT counted per value.
The outer rows are then joined to the subquery's rows on those values (NULLs
matching NULLs). An aggregate without GROUP BY gives one row for every outer
row: the join keeps the outer rows that found none, whose values are the
aggregates' over no rows (COUNT's 0).
"""

from __future__ import annotations

from sqlglot import exp

from glint.columnar import types as T
from glint.errors import BinderError, NotSupported
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import Call, Case, ColRef, Field, Literal, conjoin
from glint.sql.bind_expr import ExprContext, bind
from glint.sql.decorrelate import Domain, null_safe_equal
from glint.sql.folding import fold_expr
from glint.sql.scope import Scope


class LateralInput:
    """What the SELECT of a LATERAL subquery is bound over: the domain's
    placeholder and, per outer table name, its columns in the domain; the
    binder fills in ``keys`` (the subquery's columns holding the domain's
    values, in its order), ``marker`` (a column never NULL in a row of an
    aggregate without GROUP BY) and what the empty values need."""

    __slots__ = ("domain", "aliases", "columns", "keys", "marker", "empty_items", "empty_aggs")

    def __init__(self, domain: Domain, aliases: dict[str, dict[str, Field]], columns: list[Field]):
        self.domain = domain
        self.aliases = aliases
        self.columns = columns  # the domain's columns, aligned with domain.outer
        self.keys: list[Field] = []
        self.marker: Field | None = None
        self.empty_items = None
        self.empty_aggs = None

    def over(self, plan: L.LogicalNode, scope: Scope) -> L.LogicalNode:
        """The subquery's FROM crossed with the domain, whose columns its scope sees."""
        for alias, cols in self.aliases.items():
            scope.add(alias, dict(cols))
        if isinstance(plan, L.OneRow):
            return self.domain.placeholder
        return L.Join(self.domain.placeholder, plan, "inner", None)

    def group_by(self, gmap: dict, new_field) -> list[tuple[Field, ColRef]]:
        """The domain's columns as groups of the subquery's aggregate, in the
        domain's order (and found by their SQL text after it)."""
        names = {d.id: (alias, name) for alias, cols in self.aliases.items() for name, d in cols.items()}
        groups = []
        for d in self.columns:
            alias, name = names[d.id]
            g = new_field(name, d.type)
            groups.append((g, ColRef(d)))
            gmap[exp.column(name, alias, quoted=True).sql(dialect="duckdb")] = g
            self.keys.append(g)
        return groups


class LateralBinder:
    """The LATERAL half of :class:`glint.sql.binder.Binder` (a mixin)."""

    def _bind_lateral_join(self, left: L.LogicalNode, j: exp.Join, scope: Scope) -> L.LogicalNode:
        node = j.this
        sub = node.this if isinstance(node, exp.Lateral) else node
        alias = node.args.get("alias") or sub.args.get("alias")
        query = sub.this if isinstance(sub, exp.Subquery) else sub
        if not isinstance(query, exp.Select):
            raise NotSupported("LATERAL over anything but a SELECT")
        side = (j.side or "").upper()
        kind = (j.kind or "").upper()
        if side in ("RIGHT", "FULL") or kind in ("SEMI", "ANTI"):
            raise BinderError("The combining JOIN type must be INNER or LEFT for a LATERAL reference")
        refs = _outer_references(query, scope)
        name = alias.name if alias is not None and alias.name else "unnamed_subquery"
        if not refs:
            right_scope = Scope(scope.parent)
            b = self.bind_query(query, scope.parent)
            right_scope.add(name, _columns(b.outputs, alias))
            return self._lateral_join(left, b.plan, j, scope, right_scope, [], "left" if side == "LEFT" else "inner")
        outer = [scope.sources[t][c] for t, c in refs]
        columns = [self.field(c, f.type) for (_, c), f in zip(refs, outer)]
        aliases: dict[str, dict[str, Field]] = {}
        for (t, c), d in zip(refs, columns):
            aliases.setdefault(t, {})[c] = d
        domain = Domain(L.Values((), tuple(columns)), tuple(outer))
        lat = LateralInput(domain, aliases, columns)
        self._laterals[id(query)] = lat
        try:
            b = self.bind_select(query, scope.parent)
        finally:
            del self._laterals[id(query)]
        keys = lat.keys
        right = domain.attach(left, b.plan, self.field)
        cond = [c for o, k in zip(outer, keys) for c in null_safe_equal(ColRef(o), ColRef(k))]
        right_scope = Scope(scope.parent)
        outputs = dict(_columns(b.outputs, alias))
        fixes = self._empty_fixes(lat, b.outputs, outer, aliases) if lat.marker is not None else []
        jk = "left" if side == "LEFT" or lat.marker is not None else "inner"
        if fixes:
            replaced = {f.id: g for f, g, _ in fixes}
            outputs = {n: replaced.get(f.id, f) for n, f in outputs.items()}
        right_scope.add(name, outputs)
        plan = self._lateral_join(left, right, j, scope, right_scope, cond, jk)
        if fixes:
            missing = Call("is_null", (ColRef(lat.marker),), T.BOOLEAN)
            exprs = tuple((f, ColRef(f)) for f in plan.schema) + tuple(
                (g, Case(((missing, ty.cast(e, f.type)),), ColRef(f), f.type)) for f, g, e in fixes
            )
            plan = L.Project(plan, exprs)
        return plan

    def _lateral_join(self, left, right, j, scope, right_scope, cond, kind):
        on = j.args.get("on")
        both = scope.merged(right_scope)
        if on is not None:
            cond = cond + [self._bind_predicate(on, both, "JOIN condition")]
        scope.sources.update(right_scope.sources)
        scope.outer_refs |= right_scope.outer_refs | both.outer_refs
        return L.Join(left, right, kind, conjoin(cond))

    def _empty_fixes(self, lat: LateralInput, outputs, outer, aliases):
        """[(output field, its replacement, its value over no rows)] for the
        outputs of an aggregate without GROUP BY whose value over no rows is
        not NULL; the outer tables' columns are the outer rows' there."""
        scope = Scope(None)
        by_domain = {d.id: o for d, o in zip(lat.columns, outer)}
        outer_columns = {
            exp.column(n, alias, quoted=True).sql(dialect="duckdb"): by_domain[d.id]
            for alias, cols in aliases.items()
            for n, d in cols.items()
        }
        fixes = []
        for item, (name, f) in zip(lat.empty_items, outputs):
            ctx = ExprContext(scope, self, groups=dict(outer_columns), aggs=lat.empty_aggs)
            ctx.empty_aggs = True
            try:
                e = fold_expr(bind(item.this if isinstance(item, exp.Alias) else item, ctx))
            except (BinderError, NotSupported):
                continue
            if ctx.pending or (isinstance(e, Literal) and e.value is None):
                continue
            fixes.append((f, self.field(name, f.type), e))
        return fixes


def _outer_references(query: exp.Select, scope: Scope) -> list[tuple[str, str]]:
    """(table, column) of the FROM items before the LATERAL that the subquery reads."""
    inner = {t.alias_or_name for t in query.find_all(exp.Table)} | {
        s.alias_or_name for s in query.find_all(exp.Subquery) if s.alias_or_name
    }
    refs = []
    for c in query.find_all(exp.Column):
        t = c.table
        if t and t in scope.sources and t not in inner and c.name in scope.sources[t] and (t, c.name) not in refs:
            refs.append((t, c.name))
    return refs


def _columns(outputs, alias) -> dict:
    names = [c.name for c in alias.columns] if alias is not None and alias.columns else []
    cols = {}
    for i, (n, f) in enumerate(outputs):
        cols.setdefault(names[i] if i < len(names) else n, f)
    return cols


def mark_implicit_laterals(ast: exp.Expression) -> exp.Expression:
    """A derived table that reads a FROM item before it by name
    (``FROM t, (SELECT t.a + 1)``) is a LATERAL subquery, as DuckDB reads it.

    >>> import sqlglot
    >>> q = sqlglot.parse_one("SELECT * FROM t, (SELECT t.a + 1 AS x) s", read="duckdb")
    >>> mark_implicit_laterals(q).sql(dialect="duckdb")
    'SELECT * FROM t, LATERAL (SELECT t.a + 1 AS x) AS s'
    """
    for sel in list(ast.find_all(exp.Select)):
        from_ = sel.args.get("from") or sel.args.get("from_")
        if from_ is None:
            continue
        before = {from_.this.alias_or_name}
        for j in sel.args.get("joins") or []:
            item = j.this
            if isinstance(item, exp.Subquery) and not item.args.get("lateral"):
                inner = {t.alias_or_name for t in item.this.find_all(exp.Table)}
                reads = {c.table for c in item.this.find_all(exp.Column) if c.table}
                if (reads - inner) & before:
                    alias = item.args.get("alias")
                    body = item.copy()
                    body.set("alias", None)
                    j.set("this", exp.Lateral(this=body, alias=alias))
            before.add(item.alias_or_name)
    return ast
