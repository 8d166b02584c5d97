"""Cardinality estimates from the statistics gathered at load time (row
counts, distinct counts, min/max).

Estimates must not collapse: an optimizer that believes a relation has one
row will happily join it to anything, cross products included. So

- each conjunct's selectivity is clamped to [1/ndv, 1] (an equality keeps at
  least the rows of one value; a range at least one value's worth);
- range conjuncts on the same column are merged into one interval and read
  against min/max, instead of being multiplied as if independent;
- the conjuncts of a filter are combined by *exponential backoff* (most
  selective first: s1 * s2^(1/2) * s3^(1/4) * s4^(1/8), the rest ignored), as
  SQL Server's estimator does, so that correlated predicates (several columns
  that say the same thing) are not multiplied into nothing; DuckDB goes further
  and keeps only the most selective filter of a table;
- inner joins are estimated over the whole set of joined inputs by
  :class:`~glint.plan.join_graph.JoinGraph`, which applies the same backoff to
  the filters of the different inputs, ignores equalities implied by others
  and clamps composite keys;
- nothing is estimated below one row.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> class Cat:
...     def table(self, n): return _T()
>>> class _T:
...     num_rows = 1000
...     def stats(self, c):
...         from glint.io.table import ColumnStats
...         return ColumnStats(10, 0, 0, 9)
>>> est = Estimator(Cat())
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> scan = L.Scan("t", ("a", "b"), (a, b))
>>> est.rows(scan)
1000.0
>>> eq = lambda f, v: Call("eq", (ColRef(f), Literal(v, T.INTEGER)), T.BOOLEAN)
>>> both = Call("and", (eq(a, 3), eq(b, 3)), T.BOOLEAN)
>>> round(est.rows(L.Filter(scan, both)), 1)    # 1000 * 0.1 * 0.1 ** 0.5, not 1000 * 0.1 * 0.1
31.6
"""

from __future__ import annotations

import math

from glint.plan import logical as L
from glint.plan.expr import Call, ColRef, Expr, Literal, conjuncts
from glint.plan.join_graph import JoinGraph, is_inner_join_tree
from glint.plan.selectivity import backoff, strip_cast

DEFAULT_SEL = 0.25
RANGE_SEL = 1.0 / 3.0  # one side of a range on a column without min/max

RECURSION_GUESS = 10.0  # a recursive CTE's rows: its anchor's times this
WORKING_TABLE_GUESS = 100.0  # the rows of one step of a recursion
SERIES_PER_ROW_GUESS = 10.0  # values of a series whose arguments read columns, per row


class Estimator:
    def __init__(self, catalog):
        self.catalog = catalog
        # id(node) -> (node, rows): the node is kept so that its id cannot be
        # reused by a new node while the estimate is cached
        self._rows: dict[int, tuple[L.LogicalNode, float]] = {}
        self._ndv: dict[int, float] = {}  # field id -> distinct count
        self._range: dict[int, tuple] = {}  # field id -> (min, max)
        self._column_of: dict[int, tuple] = {}  # scan field id -> (table, column), stats read lazily

    def rows(self, node: L.LogicalNode) -> float:
        hit = self._rows.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        r = max(1.0, self._estimate(node))
        self._rows[id(node)] = (node, r)
        return r

    def unfiltered_rows(self, node: L.LogicalNode) -> float:
        """Rows of `node` before the filters on top of it (filters and semi/anti
        joins, through projections): with :meth:`rows`, how selective they are.

        The join estimate multiplies the inputs' unfiltered sizes and combines
        their filter selectivities by backoff, so that filters on different
        inputs that select the same rows (correlated) do not collapse a join.
        """
        while True:
            if isinstance(node, L.Filter):
                node = node.child
            elif isinstance(node, L.Project):
                self.rows(node)  # registers the renamed columns' statistics
                node = node.child
            elif isinstance(node, L.Join) and node.kind in ("semi", "anti"):
                node = node.left
            else:
                return self.rows(node)

    def _base_stats(self, field_id: int) -> None:
        """Load-time statistics of a scanned column, fetched the first time they matter."""
        src = self._column_of.pop(field_id, None)
        if src is None:
            return
        s = self.catalog.table(src[0]).stats(src[1])
        self._ndv[field_id] = max(1, s.ndv)
        if s.min is not None:
            self._range[field_id] = (s.min, s.max)

    def ndv(self, field_id: int, rows: float) -> float:
        self._base_stats(field_id)
        return max(1.0, min(self._ndv.get(field_id, rows), rows))

    def value_range(self, field_id: int):
        self._base_stats(field_id)
        return self._range.get(field_id)

    def _estimate(self, node) -> float:
        if isinstance(node, L.Scan):
            t = self.catalog.table(node.table)
            for c, f in zip(node.columns, node.fields):
                if f.id not in self._ndv:
                    self._column_of[f.id] = (node.table, c)
            return float(t.num_rows)
        if isinstance(node, L.OneRow):
            return 1.0
        if isinstance(node, L.Values):
            return float(len(node.rows))
        if isinstance(node, L.Series):
            return float(node.count)
        if isinstance(node, L.SeriesPerRow):
            return self.rows(node.child) * SERIES_PER_ROW_GUESS
        if isinstance(node, L.RecursiveCTE):
            return self.rows(node.left) * RECURSION_GUESS
        if isinstance(node, L.WorkingTable):
            return WORKING_TABLE_GUESS
        if isinstance(node, L.Filter):
            if is_inner_join_tree(node, selections=True):
                return JoinGraph.of_join(node, self).rows(-1)
            # stacked filters are one conjunction: backoff needs to see all of it
            preds = []
            while isinstance(node, L.Filter):
                preds += conjuncts(node.predicate)
                node = node.child
            child = self.rows(node)
            return child * self.selectivity_of(preds, child)
        if isinstance(node, L.Project):
            child = self.rows(node.child)
            for f, e in node.exprs:
                if isinstance(e, ColRef) and e.field.id != f.id:
                    if e.field.id in self._column_of:
                        self._column_of[f.id] = self._column_of[e.field.id]
                    elif e.field.id in self._ndv:
                        self._ndv[f.id] = self._ndv[e.field.id]
                        if e.field.id in self._range:
                            self._range[f.id] = self._range[e.field.id]
            return child
        if isinstance(node, L.Join):
            if node.kind == "inner":
                return JoinGraph.of_join(node, self).rows(-1)
            l, r = self.rows(node.left), self.rows(node.right)
            if node.kind in ("semi", "anti"):
                return l * 0.5
            if node.kind in ("mark", "single"):
                return l
            inner = JoinGraph((node.left, node.right), conjuncts(node.condition), self).rows(-1)
            if node.kind == "left":
                return max(inner, l)
            if node.kind == "right":
                return max(inner, r)
            if node.kind == "full":
                return max(inner, l + r)
            return inner
        if isinstance(node, L.Aggregate):
            child = self.rows(node.child)
            if not node.groups:
                return 1.0
            ndv = []
            for f, e in node.groups:
                d = self._expr_ndv(e, child)
                self._ndv[f.id] = d
                ndv.append(d)
            sets = node.grouping.sets if node.grouping is not None else (range(len(ndv)),)
            total = 0.0
            for s in sets:  # each grouping set's groups (the empty set: one row)
                g = 1.0
                for i in s:
                    g *= ndv[i]
                total += min(child, g) if s else 1.0
            return total
        if isinstance(node, L.Limit):
            child = self.rows(node.child)
            return min(child, node.limit) if node.limit is not None else child
        if isinstance(node, (L.Sort, L.Window)):
            return self.rows(node.child)
        if isinstance(node, L.SetOp):
            l, r = self.rows(node.left), self.rows(node.right)
            return l + r if node.kind == "union" else (l if node.kind == "except" else min(l, r))
        raise TypeError(type(node).__name__)

    def _expr_ndv(self, e: Expr, rows: float) -> float:
        e = strip_cast(e)
        if isinstance(e, ColRef):
            return self.ndv(e.field.id, rows)
        ids = [f.id for f in e.fields()]
        if not ids:
            return 1.0
        d = 1.0
        for i in ids:
            d *= self.ndv(i, rows)
        return min(d, rows)

    # ------------------------------------------------------------ selectivity
    def selectivity(self, pred: Expr | None, rows: float) -> float:
        """Fraction of `rows` rows a filter keeps (never below one row's worth)."""
        return self.selectivity_of(conjuncts(pred), rows)

    def selectivity_of(self, preds: list[Expr], rows: float) -> float:
        sels = []
        ranges: dict[int, list[Call]] = {}
        for c in preds:
            col = _range_column(c)
            if col is not None:
                ranges.setdefault(col.field.id, []).append(c)
            else:
                sels.append(self.conjunct_selectivity(c, rows))
        for cs in ranges.values():
            sels.append(self._interval_sel(cs, rows))
        return max(backoff(sels), 1.0 / max(rows, 1.0))

    def conjunct_selectivity(self, c: Expr, rows: float) -> float:
        """Selectivity of one predicate over a relation of `rows` rows."""
        if isinstance(c, Literal):
            # FALSE keeps nothing, but an estimate of zero rows would make the
            # plan above it look free: one value's worth instead
            return 1.0 if c.value else 1.0 / max(rows, 1.0)
        if not isinstance(c, Call):
            return DEFAULT_SEL
        fn, args = c.fn, c.args
        if fn == "eq":
            a, b = strip_cast(args[0]), strip_cast(args[1])
            if isinstance(a, ColRef) and isinstance(b, ColRef):
                return 1.0 / max(self.ndv(a.field.id, rows), self.ndv(b.field.id, rows))
            col = a if isinstance(a, ColRef) else b if isinstance(b, ColRef) else None
            return 1.0 / self.ndv(col.field.id, rows) if col is not None else 0.1
        if fn == "ne":
            col = _column_arg(c)
            return 1.0 - 1.0 / self.ndv(col.field.id, rows) if col is not None else 0.9
        if fn in ("lt", "le", "gt", "ge"):
            return self._interval_sel([c], rows) if _range_column(c) is not None else RANGE_SEL
        if fn == "in_list":
            col = strip_cast(args[0])
            k = len(args) - 1
            return min(1.0, k / self.ndv(col.field.id, rows)) if isinstance(col, ColRef) else min(1.0, 0.1 * k)
        if fn == "like":
            pattern = c.params[0]
            return 0.05 if not pattern.startswith("%") else 0.1
        if fn == "and":
            return backoff([self.conjunct_selectivity(a, rows) for a in conjuncts(c)])
        if fn == "or":
            a, b = self.conjunct_selectivity(args[0], rows), self.conjunct_selectivity(args[1], rows)
            return min(1.0, a + b - a * b)
        if fn == "not":
            return max(0.05, 1.0 - self.conjunct_selectivity(args[0], rows))
        if fn == "is_null":
            return 0.05
        return DEFAULT_SEL

    def _interval_sel(self, cs: list[Call], rows: float) -> float:
        """Selectivity of range conjuncts on one column, read as one interval
        against the column's min/max; at least one distinct value's worth."""
        col = _range_column(cs[0])
        d = self.ndv(col.field.id, rows)
        rng = self.value_range(col.field.id)
        if rng is None or rng[1] <= rng[0]:
            return max(1.0 / d, RANGE_SEL ** len({_is_upper(c) for c in cs}))
        lo, hi = rng
        low, high = lo, hi
        for c in cs:
            v = float(_literal_arg(c).value)
            if _is_upper(c):
                high = min(high, v)
            else:
                low = max(low, v)
        frac = (high - low) / (hi - lo) if high >= low else 0.0
        return min(1.0, max(frac, 1.0 / d))


def _column_arg(c: Call) -> ColRef | None:
    for a in c.args:
        a = strip_cast(a)
        if isinstance(a, ColRef):
            return a
    return None


def _literal_arg(c: Call) -> Literal:
    return c.args[1] if isinstance(c.args[1], Literal) else c.args[0]


def _range_column(c: Expr) -> ColRef | None:
    """The column of `col <op> numeric literal` (either order) whose literal can
    be compared with the column's min/max statistics; None otherwise."""
    if not (isinstance(c, Call) and c.fn in ("lt", "le", "gt", "ge")):
        return None
    a, b = c.args
    if isinstance(a, Literal):
        a, b = b, a
    col = strip_cast(a)
    if not (
        isinstance(col, ColRef)
        and isinstance(b, Literal)
        and isinstance(b.value, (int, float))
        and not isinstance(b.value, bool)
    ):
        return None
    # scaled DECIMAL integers compare with the statistics only at the column's own scale
    if col.type.is_decimal or b.type.is_decimal:
        if not (col.type.is_decimal and b.type.is_decimal and col.type.scale == b.type.scale):
            return None
    if col.type.kind in ("VARCHAR", "BOOLEAN") or math.isnan(float(b.value)):
        return None
    return col


def _is_upper(c: Call) -> bool:
    """Whether the conjunct bounds its column from above (col < v or v > col)."""
    col_left = not isinstance(c.args[0], Literal)
    return (c.fn in ("lt", "le")) == col_left


def prefetch_stats(plan: L.LogicalNode, catalog) -> None:
    """Has the tables compute, side by side, the statistics the estimator
    will ask for one at a time: those of the scanned columns that filters,
    join conditions and grouping keys read (directly or renamed by
    projections). A hint: what it misses is computed when asked for."""
    scanned: dict[int, tuple[str, str]] = {}
    renamed: dict[int, int] = {}
    used: set[int] = set()

    def visit(node) -> None:
        if isinstance(node, L.Scan):
            for c, f in zip(node.columns, node.fields):
                scanned[f.id] = (node.table, c)
        elif isinstance(node, L.Filter):
            used.update(f.id for f in node.predicate.fields())
        elif isinstance(node, L.Join) and node.condition is not None:
            used.update(f.id for f in node.condition.fields())
        elif isinstance(node, L.Aggregate):
            used.update(f.id for _, e in node.groups for f in e.fields())
        elif isinstance(node, L.Project):
            for f, e in node.exprs:
                if isinstance(e, ColRef):
                    renamed[f.id] = e.field.id
        for k in node.children:
            visit(k)

    visit(plan)
    per_table: dict[str, list[str]] = {}
    for fid in used:
        seen = set()
        while fid in renamed and fid not in seen:
            seen.add(fid)
            fid = renamed[fid]
        if fid in scanned:
            t, c = scanned[fid]
            per_table.setdefault(t, []).append(c)
    wanted = []
    for t, cols in per_table.items():
        try:
            table = catalog.table(t)
        except Exception:  # noqa: BLE001 -- the binder or the run names it
            continue
        if hasattr(table, "start_stats"):
            wanted.append((table, cols))
    if sum(len(c) for _, c in wanted) > 1:
        from glint.io.table import prefetch_stats as compute

        compute(wanted)
