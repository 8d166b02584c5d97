"""Cardinality estimates from the statistics gathered at load time (row
counts, distinct counts, min/max), with the textbook independence assumptions.

>>> from glint import types as T
>>> from glint.plan.expr import Field
>>> class Cat:
...     def table(self, n): return _T()
>>> class _T:
...     num_rows = 1000
...     def stats(self, c):
...         from glint.storage.table import ColumnStats
...         return ColumnStats(10, 0, 0, 9)
>>> est = Estimator(Cat())
>>> est.rows(L.Scan("t", ("a",), (Field(1, "a", T.INTEGER),)))
1000.0
"""
from __future__ import annotations

from . import logical as L
from .expr import Call, ColRef, Expr, Literal, conjuncts

DEFAULT_SEL = 0.25


class Estimator:
    def __init__(self, catalog):
        self.catalog = catalog
        # id(node) -> (node, rows): the node is kept so that its id cannot be
        # reused by a new node while the estimate is cached
        self._rows: dict[int, tuple[L.LogicalNode, float]] = {}
        self._ndv: dict[int, float] = {}     # field id -> distinct count
        self._range: dict[int, tuple] = {}   # field id -> (min, max)
        self._column_of: dict[int, tuple] = {}   # scan field id -> (table, column), stats read lazily

    def rows(self, node: L.LogicalNode) -> float:
        hit = self._rows.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        r = max(1.0, self._estimate(node))
        self._rows[id(node)] = (node, r)
        return r

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
        if isinstance(node, L.Filter):
            child = self.rows(node.child)
            return child * self.selectivity(node.predicate, child)
        if isinstance(node, L.Project):
            child = self.rows(node.child)
            for f, e in node.exprs:
                if isinstance(e, ColRef) and e.field.id != f.id:
                    if e.field.id in self._column_of:
                        self._column_of[f.id] = self._column_of[e.field.id]
                    elif e.field.id in self._ndv:
                        self._ndv[f.id] = self._ndv[e.field.id]
            return child
        if isinstance(node, L.Join):
            l, r = self.rows(node.left), self.rows(node.right)
            if node.kind in ("semi", "anti"):
                return l * 0.5
            if node.kind in ("mark", "single"):
                return l
            inner = l * r * self.selectivity(node.condition, l * r, join=True) if node.condition is not None else l * r
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
            g = 1.0
            for f, e in node.groups:
                d = self._expr_ndv(e, child)
                self._ndv[f.id] = d
                g *= d
            return min(child, g)
        if isinstance(node, L.Limit):
            child = self.rows(node.child)
            return min(child, node.limit) if node.limit is not None else child
        if isinstance(node, L.Sort):
            return self.rows(node.child)
        if isinstance(node, L.SetOp):
            l, r = self.rows(node.left), self.rows(node.right)
            return l + r if node.kind == "union" else (l if node.kind == "except" else min(l, r))
        raise TypeError(type(node).__name__)

    def _expr_ndv(self, e: Expr, rows: float) -> float:
        if isinstance(e, ColRef):
            return self.ndv(e.field.id, rows)
        ids = [f.id for f in e.fields()]
        if not ids:
            return 1.0
        d = 1.0
        for i in ids:
            d *= self.ndv(i, rows)
        return min(d, rows)

    def selectivity(self, pred: Expr | None, rows: float, join: bool = False) -> float:
        if pred is None:
            return 1.0
        s = 1.0
        for c in conjuncts(pred):
            s *= self._conjunct(c, rows)
        return max(s, 1.0 / max(rows, 1.0)) if not join else s

    def _conjunct(self, c: Expr, rows: float) -> float:
        if isinstance(c, Literal):
            return 1.0 if c.value else 0.0
        if not isinstance(c, Call):
            return DEFAULT_SEL
        fn, args = c.fn, c.args
        if fn == "eq":
            a, b = args
            if isinstance(a, ColRef) and isinstance(b, ColRef):
                return 1.0 / max(self.ndv(a.field.id, rows), self.ndv(b.field.id, rows))
            col = a if isinstance(a, ColRef) else b if isinstance(b, ColRef) else None
            return 1.0 / self.ndv(col.field.id, rows) if col is not None else 0.1
        if fn == "ne":
            return 0.9
        if fn in ("lt", "le", "gt", "ge"):
            return self._range_sel(c)
        if fn == "in_list":
            col = args[0]
            k = len(args) - 1
            return min(1.0, k / self.ndv(col.field.id, rows)) if isinstance(col, ColRef) else min(1.0, 0.1 * k)
        if fn == "like":
            pattern = c.params[0]
            return 0.05 if not pattern.startswith("%") else 0.1
        if fn == "and":
            return self._conjunct(args[0], rows) * self._conjunct(args[1], rows)
        if fn == "or":
            a, b = self._conjunct(args[0], rows), self._conjunct(args[1], rows)
            return min(1.0, a + b - a * b)
        if fn == "not":
            return max(0.05, 1.0 - self._conjunct(args[0], rows))
        if fn == "is_null":
            return 0.05
        return DEFAULT_SEL

    def _range_sel(self, c: Call) -> float:
        a, b = c.args
        fn = c.fn
        if isinstance(b, ColRef) and isinstance(a, Literal):
            a, b = b, a
            fn = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}[fn]
        a = _strip_cast(a)
        rng = self.value_range(a.field.id) if isinstance(a, ColRef) else None
        if rng is not None and isinstance(b, Literal) and isinstance(b.value, (int, float)) \
                and not a.type.is_decimal and not b.type.is_decimal:
            lo, hi = rng
            if hi > lo:
                frac = (float(b.value) - lo) / (hi - lo)
                frac = min(1.0, max(0.0, frac))
                return max(0.01, frac if fn in ("lt", "le") else 1.0 - frac)
        return 1.0 / 3.0


def _strip_cast(e: Expr) -> Expr:
    while isinstance(e, Call) and e.fn == "cast":
        e = e.args[0]
    return e
