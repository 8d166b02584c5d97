"""The query graph of a tree of inner joins: its inputs (leaves), the
predicates between them, and what the join-order search needs to know about
any subset of the inputs, given as a bitmask (bit i = leaf i): estimated rows,
estimated bytes, neighbours, connectivity.

The estimated rows of a set of inputs do not depend on the order in which they
are joined, and they do not collapse:

- ``A``, the textbook estimate: the product of the inputs' (filtered) rows and
  of the predicates' selectivities, an equality ``a = b`` counting
  1/max(ndv(a), ndv(b)) with each ndv clamped to its input's rows
  (containment of the smaller key domain in the larger);
- ``B``, the same over the inputs' *unfiltered* rows, the filters of all the
  inputs combined by exponential backoff
  (:func:`~glint.plan.selectivity.backoff`): filters on different dimensions
  of a star often pick the same fact rows, and independence would multiply
  them into nothing;
- the estimate is ``max(A, B, 1)``. In both, an equality implied by others
  (``a = b``, ``b = c``, ``a = c``) is not counted again, and the equalities
  between two inputs (a composite key) together keep at least one row per
  distinct key of the side with more keys (``min(product of ndvs, rows)``).

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> from glint.io.table import ColumnStats
>>> class Tab:
...     def __init__(self, n, ndv): self.num_rows, self._ndv = n, ndv
...     def stats(self, c): return ColumnStats(self._ndv[c], 0, 0, self._ndv[c] - 1)
>>> class Cat:
...     tabs = {"f": Tab(10_000, {"d": 100, "e": 100}), "d": Tab(100, {"k": 100, "x": 10}),
...             "e": Tab(100, {"k": 100, "x": 10})}
...     def table(self, n): return self.tabs[n]
>>> fd, fe, dk, dx, ek, ex = (Field(i, n, T.INTEGER) for i, n in enumerate("fd fe dk dx ek ex".split()))
>>> eq = lambda a, b: Call("eq", (a, b), T.BOOLEAN)
>>> lit = lambda v: Literal(v, T.INTEGER)
>>> f = L.Scan("f", ("d", "e"), (fd, fe))
>>> d = L.Filter(L.Scan("d", ("k", "x"), (dk, dx)), eq(ColRef(dx), lit(1)))
>>> e = L.Filter(L.Scan("e", ("k", "x"), (ek, ex)), eq(ColRef(ex), lit(1)))
>>> from glint.plan.cardinality import Estimator
>>> g = JoinGraph((f, d, e), [eq(ColRef(fd), ColRef(dk)), eq(ColRef(fe), ColRef(ek))], Estimator(Cat()))
>>> g.rows(0b011), g.is_connected(0b110), g.components()
(1000.0, False, [7])
>>> round(g.rows(0b111))     # independence: 10,000 / 10 / 10 = 100; backoff: 10,000 / 10 / 10 ** 0.5
316
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from glint.plan import logical as L
from glint.plan.expr import Call, ColRef, Expr, conjuncts
from glint.plan.selectivity import backoff, strip_cast

if TYPE_CHECKING:  # (the estimator builds join graphs: a type, not an import, here)
    from glint.plan.cardinality import Estimator

PAIR_ID_BYTES = 16  # a hash join holds (left row, right row) as two int64 per output row


def is_selection(node: L.LogicalNode) -> bool:
    """A projection that only leaves columns out (what column pruning puts
    above a join whose keys nobody above reads)."""
    return isinstance(node, L.Project) and all(isinstance(e, ColRef) and e.field == f for f, e in node.exprs)


def is_inner_join_tree(node: L.LogicalNode, selections: bool = False) -> bool:
    """An inner join, or a filter over one (filters commute with inner joins);
    with ``selections``, also through projections that leave columns out (for
    estimates: a plan rebuilt from the tree's leaves would lose them)."""
    while isinstance(node, L.Filter) or (selections and is_selection(node)):
        node = node.child
    return isinstance(node, L.Join) and node.kind == "inner"


def flatten_inner_joins(node: L.LogicalNode, leaves: list, preds: list, selections: bool = False) -> None:
    """Collect the inputs and the conditions of a tree of inner joins, the
    conditions of filters above or between its joins included (``selections``:
    see :func:`is_inner_join_tree`)."""
    if isinstance(node, L.Join) and node.kind == "inner":
        flatten_inner_joins(node.left, leaves, preds, selections)
        flatten_inner_joins(node.right, leaves, preds, selections)
        preds.extend(conjuncts(node.condition))
    elif (isinstance(node, L.Filter) or (selections and is_selection(node))) and is_inner_join_tree(node, selections):
        flatten_inner_joins(node.child, leaves, preds, selections)
        if isinstance(node, L.Filter):
            preds.extend(conjuncts(node.predicate))
    else:
        leaves.append(node)


def bits(mask: int):
    """Indices of the set bits, lowest first.

    >>> list(bits(0b10110))
    [1, 2, 4]
    """
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def type_width(t) -> int:
    """Bytes per row of a column of type `t` (VARCHAR: its int32 dictionary code)."""
    try:
        w = t.torch_dtype.itemsize
    except KeyError:
        return 8
    wide = t.kind == "HUGEINT" or (t.is_decimal and t.precision > 18)
    return 2 * w if wide else w


class _Pred:
    """A predicate of the graph, with what the estimates need precomputed."""

    __slots__ = ("expr", "touch", "kind", "pair", "cols", "sel_rows", "sel_base")

    def __init__(self, expr, touch, kind, pair=None, cols=None, sel_rows=1.0, sel_base=1.0):
        self.expr, self.touch, self.kind, self.pair, self.cols = expr, touch, kind, pair, cols
        self.sel_rows, self.sel_base = sel_rows, sel_base


class JoinGraph:
    """Leaves and predicates of an inner-join tree. `needed` (field ids) limits
    the columns that count in the row width (None: all of each leaf's schema).

    Predicates over exactly two leaves are the graph's edges; one over three or
    more is applied as soon as all its leaves are joined but connects nothing.
    """

    def __init__(self, leaves, preds: list[Expr], est: Estimator, needed: set[int] | None = None):
        self.leaves = tuple(leaves)
        self.preds = list(preds)
        self.est = est
        n = self.n = len(self.leaves)
        self.full = (1 << n) - 1
        owner: dict[int, int] = {}
        for i, leaf in enumerate(self.leaves):
            for f in leaf.schema:
                owner[f.id] = i
        self.leaf_rows = [est.rows(leaf) for leaf in self.leaves]
        self.base_rows = [max(r, est.unfiltered_rows(leaf)) for r, leaf in zip(self.leaf_rows, self.leaves)]
        self.filter_sel = [r / b for r, b in zip(self.leaf_rows, self.base_rows)]
        self.leaf_width = [
            sum(type_width(f.type) for f in leaf.schema if needed is None or f.id in needed) for leaf in self.leaves
        ]
        self.adj = [0] * n  # leaves sharing a two-leaf predicate
        self.equi_adj = [0] * n  # leaves sharing an equality usable as a hash-join key
        keys: dict[tuple[int, int], list[tuple[float, float, float, float]]] = {}
        self._preds: list[_Pred] = []
        for p in self.preds:
            touch = 0
            for f in p.fields():
                if f.id in owner:
                    touch |= 1 << owner[f.id]
            self._preds.append(self._classify(p, touch, owner, keys))
        # least selective first: of equalities implied by others, the most
        # selective one is dropped, which gives the textbook estimate of an
        # equivalence class (product of all its ndvs but the smallest)
        self._preds.sort(key=lambda q: -q.sel_base)
        # composite keys: the equalities between two leaves together keep at
        # least one row per distinct key combination of either side
        self._key_floor = {}
        for pair, ks in keys.items():
            i, j = pair
            joint = lambda k, rows: min(rows, _product(k))
            self._key_floor[pair] = (
                1.0 / max(joint([x[0] for x in ks], self.leaf_rows[i]), joint([x[1] for x in ks], self.leaf_rows[j])),
                1.0 / max(joint([x[2] for x in ks], self.base_rows[i]), joint([x[3] for x in ks], self.base_rows[j])),
            )
        self._rows: dict[int, float] = {}  # the search asks about each set many times
        self._width: dict[int, int] = {}
        self._neighbors: dict[int, int] = {}
        self._connected: dict[int, bool] = {}

    @staticmethod
    def of_join(node: L.LogicalNode, est: Estimator, needed: set[int] | None = None) -> JoinGraph:
        """The graph of an inner-join tree (see :func:`is_inner_join_tree`),
        for estimates: through projections that leave columns out."""
        leaves, preds = [], []
        flatten_inner_joins(node, leaves, preds, selections=True)
        return JoinGraph(leaves, preds, est, needed)

    def _classify(self, p: Expr, touch: int, owner, keys) -> _Pred:
        est = self.est
        members = list(bits(touch))
        if len(members) == 0:
            s = est.conjunct_selectivity(p, 1.0)
            return _Pred(p, touch, "const", sel_rows=s, sel_base=s)
        if len(members) == 1:
            i = members[0]
            return _Pred(
                p,
                touch,
                "local",
                sel_rows=est.conjunct_selectivity(p, self.leaf_rows[i]),
                sel_base=est.conjunct_selectivity(p, self.base_rows[i]),
            )
        if len(members) == 2:
            i, j = members
            self.adj[i] |= 1 << j
            self.adj[j] |= 1 << i
            sides = self._equi_sides(p, owner)
            if sides is not None:
                (a, ia), (b, ib) = sides
                if ia > ib:
                    a, ia, b, ib = b, ib, a, ia
                self.equi_adj[i] |= 1 << j
                self.equi_adj[j] |= 1 << i
                ndv = [
                    est._expr_ndv(a, self.leaf_rows[ia]),
                    est._expr_ndv(b, self.leaf_rows[ib]),
                    est._expr_ndv(a, self.base_rows[ia]),
                    est._expr_ndv(b, self.base_rows[ib]),
                ]
                keys.setdefault((ia, ib), []).append(tuple(ndv))
                a, b = strip_cast(a), strip_cast(b)
                cols = (a.field.id, b.field.id) if isinstance(a, ColRef) and isinstance(b, ColRef) else None
                return _Pred(p, touch, "equi", (ia, ib), cols, 1.0 / max(ndv[0], ndv[1]), 1.0 / max(ndv[2], ndv[3]))
            return _Pred(
                p,
                touch,
                "edge",
                sel_rows=est.conjunct_selectivity(p, self.leaf_rows[i] * self.leaf_rows[j]),
                sel_base=est.conjunct_selectivity(p, self.base_rows[i] * self.base_rows[j]),
            )
        rows = _product(self.leaf_rows[i] for i in members)
        base = _product(self.base_rows[i] for i in members)
        return _Pred(
            p, touch, "hyper", sel_rows=est.conjunct_selectivity(p, rows), sel_base=est.conjunct_selectivity(p, base)
        )

    @staticmethod
    def _equi_sides(p: Expr, owner):
        """((expr, leaf), (expr, leaf)) when p equates an expression of one leaf with one of another."""
        if not (isinstance(p, Call) and p.fn == "eq"):
            return None
        out = []
        for arg in p.args:
            leaves = {owner[f.id] for f in arg.fields() if f.id in owner}
            if len(leaves) != 1:
                return None
            out.append((arg, leaves.pop()))
        return out if out[0][1] != out[1][1] else None

    # ------------------------------------------------------------ estimates
    def rows(self, mask: int) -> float:
        """Estimated rows of the inner join of the leaves in `mask` (-1: all)."""
        if mask == -1:
            mask = self.full
        c = self._rows.get(mask)
        if c is not None:
            return c
        a = b = 1.0
        filters = []
        for i in bits(mask):
            a *= self.leaf_rows[i]
            b *= self.base_rows[i]
            if self.filter_sel[i] < 1.0:
                filters.append(self.filter_sel[i])
        parent: dict[int, int] = {}

        def find(x):
            while x in parent:
                x = parent[x]
            return x

        pair_a: dict[tuple[int, int], float] = {}
        pair_b: dict[tuple[int, int], float] = {}
        for p in self._preds:
            if p.touch & ~mask:
                continue
            if p.kind == "equi":
                if p.cols is not None:
                    ra, rb = find(p.cols[0]), find(p.cols[1])
                    if ra == rb:
                        continue  # implied by equalities already counted
                    parent[ra] = rb
                pair_a[p.pair] = pair_a.get(p.pair, 1.0) * p.sel_rows
                pair_b[p.pair] = pair_b.get(p.pair, 1.0) * p.sel_base
            elif p.kind == "local":
                a *= p.sel_rows
                filters.append(p.sel_base)
            else:
                a *= p.sel_rows
                b *= p.sel_base
        for pair, s in pair_a.items():
            a *= max(s, self._key_floor[pair][0])
        for pair, s in pair_b.items():
            b *= max(s, self._key_floor[pair][1])
        c = self._rows[mask] = max(1.0, a, b * backoff(filters))
        return c

    def width(self, mask: int) -> int:
        w = self._width.get(mask)
        if w is None:
            w = self._width[mask] = sum(self.leaf_width[i] for i in bits(mask))
        return w

    def bytes(self, mask: int) -> float:
        return self.rows(mask) * self.width(mask)

    def input_bytes(self, mask: int) -> float:
        """Bytes a join input adds to memory: a plain table scan hands over the
        table's resident columns (already outside the free memory), anything
        else is materialised."""
        if mask & (mask - 1) == 0 and isinstance(self.leaves[mask.bit_length() - 1], L.Scan):
            return 0.0
        return self.bytes(mask)

    # ------------------------------------------------------------ structure
    def neighbors(self, mask: int) -> int:
        out = self._neighbors.get(mask)
        if out is None:
            out = 0
            for i in bits(mask):
                out |= self.adj[i]
            out = self._neighbors[mask] = out & ~mask
        return out

    def connected(self, m1: int, m2: int) -> bool:
        """Whether a two-leaf predicate joins the (disjoint) sets m1 and m2."""
        return bool(self.neighbors(m1) & m2)

    def has_equi(self, m1: int, m2: int) -> bool:
        """Whether joining m1 and m2 has a hash-join key (else it is a nested loop)."""
        for i in bits(m1):
            if self.equi_adj[i] & m2:
                return True
        return False

    def is_connected(self, mask: int) -> bool:
        c = self._connected.get(mask)
        if c is None:
            seen = mask & -mask
            frontier = seen
            while frontier:
                frontier = self.neighbors(seen) & mask
                seen |= frontier
            c = self._connected[mask] = seen == mask
        return c

    def components(self, mask: int = -1) -> list[int]:
        """Connected components (bitmasks) of the leaves in `mask`, by lowest leaf."""
        left = self.full if mask == -1 else mask
        out = []
        while left:
            seen = left & -left
            frontier = seen
            while frontier:
                frontier = self.neighbors(seen) & left
                seen |= frontier
            out.append(seen)
            left &= ~seen
        return out


def _product(xs) -> float:
    p = 1.0
    for x in xs:
        p *= x
    return p
