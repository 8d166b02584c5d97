"""Predicate pushdown: move each filter conjunct as close to the scans as its
columns allow, turning WHERE conditions over comma joins into join conditions.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> j = L.Join(L.Scan("t", ("a",), (a,)), L.Scan("u", ("b",), (b,)), "inner")
>>> p = Call("and", (Call("eq", (ColRef(a), ColRef(b)), T.BOOLEAN),
...                  Call("gt", (ColRef(a), Literal(1, T.INTEGER)), T.BOOLEAN)), T.BOOLEAN)
>>> print(pushdown_predicates(L.Filter(j, p)).explain())
Join INNER ON (a#1 = b#2)
  Filter (a#1 > 1)
    Scan t [a#1]
  Scan u [b#2]

Below a window only conjuncts on columns that every window function
partitions by go down (they drop whole partitions):

>>> r = Field(3, "r", T.BIGINT)
>>> w = L.Window(L.Scan("t", ("a", "b"), (a, b)), ((r, L.WindowFunc("rank", (), (ColRef(a),), (L.SortKey(ColRef(b)),),
...                                                                L.DEFAULT_FRAME, T.BIGINT)),))
>>> on_a, on_r = (Call("gt", (ColRef(f), Literal(1, T.INTEGER)), T.BOOLEAN) for f in (a, r))
>>> print(pushdown_predicates(L.Filter(w, Call("and", (on_a, on_r), T.BOOLEAN))).explain())
Filter (r#3 > 1)
  Window rank() OVER (PARTITION BY a#1 ORDER BY b#2 ASC NULLS LAST) AS r#3
    Filter (a#1 > 1)
      Scan t [a#1, b#2]
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import replace

from glint.plan import logical as L
from glint.plan.expr import ColRef, Expr, conjoin, conjuncts, substitute


def pushdown_predicates(plan: L.LogicalNode, sink_row_preserving: bool = True) -> L.LogicalNode:
    """``sink_row_preserving``: also move semi / anti / mark / single joins
    below the inner joins on their left (:func:`_sink`); off after join
    ordering, which places semi and anti joins where they cost least."""
    token = _SINK.set(sink_row_preserving)
    try:
        return _push(plan, [])
    finally:
        _SINK.reset(token)


_SINK: ContextVar[bool] = ContextVar("glint_pushdown_sink", default=True)


def _ids(node: L.LogicalNode) -> set[int]:
    return {f.id for f in node.schema}


def _refs(e: Expr) -> set[int]:
    return {f.id for f in e.fields()}


def _wrap(node: L.LogicalNode, preds: list[Expr]) -> L.LogicalNode:
    return L.Filter(node, conjoin(preds)) if preds else node


def _push(node: L.LogicalNode, preds: list[Expr]) -> L.LogicalNode:
    if isinstance(node, L.Filter):
        return _push(node.child, preds + conjuncts(node.predicate))
    if isinstance(node, L.Project):
        mapping = {f.id: e for f, e in node.exprs}
        return L.Project(_push(node.child, [substitute(p, mapping) for p in preds]), node.exprs)
    if isinstance(node, L.Join):
        return _push_join(node, preds)
    if isinstance(node, L.Aggregate):
        # a filter on group keys removes whole groups, except on keys a grouping set
        # leaves out (its rows hold NULL there: they are made by the aggregate)
        kept = node.groups if node.grouping is None else [node.groups[i] for i in node.grouping.common()]
        group_ids = {f.id for f, _ in kept}
        mapping = {f.id: e for f, e in kept}
        down = [substitute(p, mapping) for p in preds if _refs(p) <= group_ids and kept]
        keep = [p for p in preds if not (_refs(p) <= group_ids and kept)]
        return _wrap(replace(node, child=_push(node.child, down)), keep)
    if isinstance(node, L.Sort):
        return L.Sort(_push(node.child, preds), node.keys)
    if isinstance(node, L.Window):
        # a filter on columns every window partitions by removes whole partitions: the
        # other partitions' values do not change, so it may run first
        common = set.intersection(*({e.field.id for e in w.partition if isinstance(e, ColRef)} for _, w in node.funcs))
        down = [p for p in preds if _refs(p) <= common]
        keep = [p for p in preds if not _refs(p) <= common]
        return _wrap(L.Window(_push(node.child, down), node.funcs), keep)
    if isinstance(node, L.SetOp):
        sides = []
        for side in (node.left, node.right):
            mapping = {f.id: ColRef(s) for f, s in zip(node.fields, side.schema)}
            sides.append(_push(side, [substitute(p, mapping) for p in preds]))
        return L.SetOp(sides[0], sides[1], node.kind, node.all, node.fields)
    # Limit, Scan, OneRow: the filter stays above; children are optimised on their own
    kids = node.children
    if kids:
        node = node.with_children(tuple(_push(k, []) for k in kids))
    return _wrap(node, preds)


def _push_join(j: L.Join, preds: list[Expr]) -> L.LogicalNode:
    lids, rids = _ids(j.left), _ids(j.right)
    to_left, to_right, keep = [], [], []
    cond = conjuncts(j.condition)
    new_cond = []
    kind = j.kind
    if kind == "inner":
        for p in preds + cond:
            r = _refs(p)
            if r <= lids:
                to_left.append(p)
            elif r <= rids:
                to_right.append(p)
            else:
                new_cond.append(p)
    else:
        preserved_left = kind in ("left", "semi", "anti", "mark", "single")
        for p in preds:
            r = _refs(p)
            if preserved_left and r <= lids:
                to_left.append(p)
            elif kind == "right" and r <= rids:
                to_right.append(p)
            else:
                keep.append(p)
        for p in cond:
            r = _refs(p)
            if j.null_aware is not None:
                new_cond.append(p)  # IN / NOT IN: every inner row counts for the NULL result
            elif kind in ("left", "semi", "anti", "mark", "single") and r <= rids and r:
                to_right.append(p)
            elif kind == "right" and r <= lids and r:
                to_left.append(p)
            elif kind == "semi" and r <= lids and r:
                to_left.append(p)
            else:
                new_cond.append(p)
    joined = L.Join(_push(j.left, to_left), _push(j.right, to_right), kind, conjoin(new_cond), j.mark, j.null_aware)
    if kind in _ROW_PRESERVING and _SINK.get():
        # the filters on what a SINGLE or MARK join adds (a scalar subquery's value, the
        # mark) and on one input's columns go down with the join to that input
        adds = _ids(joined) - lids
        along = [p for p in keep if _refs(p) & adds]
        if along and not _along_lands_with(joined, along):
            along = []
        moved, placed = _sink(joined, along) if along else (joined, False)
        if placed:
            keep = [p for p in keep if not _refs(p) & adds]
        else:  # the filters stay above; the join still goes to its condition's input
            moved, _ = _sink(joined)
        joined = moved
    return _wrap(joined, keep)


# joins that keep each left row once and read only the left columns their
# condition names: they commute with inner joins below them
_ROW_PRESERVING = ("semi", "anti", "mark", "single")


def _along_lands_with(j: L.Join, along: list[Expr]) -> bool:
    """Whether the filters ``along`` may go down with the row-preserving join
    ``j``: it is uncorrelated with its left side (TPC-DS q6's scalar subquery
    of one month), or the filters read no input beyond the one its own
    condition takes it to. A correlated join whose filter reads another
    table (TPC-H Q2's ``ps_supplycost = min(ps_supplycost)`` per ``p_partkey``)
    would otherwise be held above the join of both tables, and its filter
    could no longer become that join's condition."""
    left = _ids(j.left)
    need = _refs(j.condition) & left if j.condition is not None else set()
    if j.null_aware:
        need |= _refs(j.null_aware[0])
    if not need:
        return True
    wider = set(need)
    for p in along:
        wider |= _refs(p) & left
    return _landing(j.left, need) is _landing(j.left, wider)


def _landing(below: L.LogicalNode, need: set) -> L.LogicalNode:
    """The input among the inner joins of ``below`` that :func:`_sink` takes a
    join reading the columns ``need`` to."""
    while isinstance(below, L.Join) and below.kind == "inner":
        side = next((s for s in (below.left, below.right) if need <= _ids(s)), None)
        if side is None:
            break
        below = side
    return below


def _sink(j: L.Join, along: list[Expr] = (), top: bool = True) -> tuple[L.LogicalNode, bool]:
    """Move a semi/anti/mark/single join below the inner joins on its left, to
    the input that holds the columns it reads, so it filters early; the
    filters ``along`` (on what the join adds and its left side's columns) go
    with it, right above it. Returns (the plan, whether the join moved).

    (A JOIN B) SEMI S ON a = s  ->  (A SEMI S ON a = s) JOIN B

    (A JOIN B) SINGLE S, WHERE a = s  ->  ((A SINGLE S) WHERE a = s) JOIN B:
    an uncorrelated scalar subquery compared with one table's column (TPC-DS
    q6's month of date_dim) filters that table before the joins, not their
    result.
    """
    below = j.left
    if isinstance(below, L.Join) and below.kind == "inner":
        need = _refs(j.condition) & _ids(below) if j.condition is not None else set()
        if j.null_aware:
            need |= _refs(j.null_aware[0])
        for p in along:
            need |= _refs(p) & _ids(below)
        if need:
            for pos, side in enumerate((below.left, below.right)):
                if need <= _ids(side):
                    moved, _ = _sink(L.Join(side, j.right, j.kind, j.condition, j.mark, j.null_aware), along, False)
                    kids = (moved, below.right) if pos == 0 else (below.left, moved)
                    return L.Join(kids[0], kids[1], "inner", below.condition), True
    return (j, False) if top else (_wrap(j, list(along)), True)
