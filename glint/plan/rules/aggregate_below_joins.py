"""An aggregate over a join, computed in part before the join: the side whose
columns the aggregates read is first grouped by its join keys (eager
aggregation, "group-by before join").

TPC-H Q13 counts each customer's orders through ``customer LEFT JOIN
orders``: 150M order rows a scale factor of 100 go through the join, each
gathered, and are then grouped again by customer. Grouped first by
``o_custkey``, the orders are 10M rows with a count each; the join matches
those, and the aggregate over the join adds the counts up.

The result is the same because every row of the other side that a group of
the grouped side joins with sees all of that group's rows (they share the
join keys), and the aggregates combine from partial states:

- ``count(x)`` is the sum of the partial counts (0 where none matched);
- ``sum``, ``min``, ``max`` of the partial results (NULL where none matched,
  as over the join's NULL-extended rows);
- ``count(*)`` is the sum of the partial row counts, and over a LEFT join an
  unmatched row counts once.

The rule applies to INNER joins (either side grouped) and LEFT joins (the
right side grouped) whose condition is equalities of one column of each
side, under an aggregate without GROUPING SETS whose aggregates are COUNT,
SUM, MIN and MAX (not DISTINCT) of the grouped side's columns, with a FILTER
over them only in an INNER join. The GROUP BY keys read one side each; the
grouped side's keys join its grouping. It applies only when the grouped
side is estimated to shrink at least ``MIN_REDUCTION`` times and to keep
most of its rows through the join (``MIN_JOINED``), the other side being
whole tables (scans and inner joins, no filter): a join that drops most of
the grouped side's rows is better done first.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import AggCall, Call, ColRef, Field
>>> c, k, o, g, n = Field(1, "c", T.BIGINT), Field(2, "k", T.BIGINT), Field(3, "o", T.BIGINT), Field(4, "g", T.BIGINT), Field(5, "n", T.BIGINT)
>>> j = L.Join(L.Scan("cust", ("c",), (c,)), L.Scan("ord", ("k", "o"), (k, o)), "left", Call("eq", (ColRef(c), ColRef(k)), T.BOOLEAN))
>>> agg = L.Aggregate(j, ((g, ColRef(c)),), ((n, AggCall("count", (ColRef(o),), T.BIGINT)),))
>>> print(aggregate_below_joins_with(agg, lambda node: 1e6, lambda f, rows: 1e4).explain())
Project g#4, CAST(coalesce(n#8, 0) AS BIGINT) AS n#5
  Aggregate groups=[c#1 AS g#4] aggs=[sum(n#7) AS n#8]
    Join LEFT ON (c#1 = k#6)
      Scan cust [c#1]
      Aggregate groups=[k#2 AS k#6] aggs=[count(o#3) AS n#7]
        Scan ord [k#2, o#3]
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.cardinality import Estimator
from glint.plan.expr import AggCall, Call, ColRef, Expr, Literal, conjuncts, substitute
from glint.plan.fresh import field_maker
from glint.plan.rules.projections import below_projections

# the grouped side must be estimated to have at least this many rows per group
MIN_REDUCTION = 4.0
# ... and to keep at least this fraction of its rows through the join: a join that drops most of
# them (TPC-H Q18's lineitem, joined to the few orders of large quantities) is better done first
MIN_JOINED = 0.25
_PARTIAL = ("count_star", "count", "sum", "min", "max")


def aggregate_below_joins(plan: L.LogicalNode, catalog) -> L.LogicalNode:
    if catalog is None:
        return plan
    est = Estimator(catalog)
    return aggregate_below_joins_with(plan, est.rows, est.ndv)


def aggregate_below_joins_with(plan: L.LogicalNode, rows, ndv) -> L.LogicalNode:
    """``plan`` with the rule applied; ``rows(node)`` estimates a node's rows,
    ``ndv(field_id, rows)`` a column's distinct values."""
    new_field = field_maker(plan)

    def rule(node):
        if not isinstance(node, L.Aggregate) or node.grouping is not None:
            return node
        child, resolve = below_projections(node.child)  # aggregates read through projections
        if not isinstance(child, L.Join) or child.mark is not None or child.null_aware:
            return node
        sides = {"inner": ("right", "left"), "left": ("right",)}.get(child.kind, ())
        for side in sides:
            out = _rewrite(node, resolve, child, side, rows, ndv, new_field)
            if out is not None:
                return out
        return node

    return plan.transform_up(rule)


def _keeps_rows(node: L.LogicalNode) -> bool:
    """Whether ``node`` is scans, projections and inner joins only: nothing
    that drops rows of a table (a filter, a semi join, a LIMIT, an aggregate).
    The estimates take a join on a key as keeping all the rows of the side
    that references it, whatever filters the key's side has been through
    (TPC-H Q10's orders of one quarter, Q18's orders of large quantities), so
    the rule asks for the other side to be whole."""
    if isinstance(node, L.Scan):
        return True
    if isinstance(node, L.Project):
        return _keeps_rows(node.child)
    if isinstance(node, L.Join) and node.kind == "inner" and node.mark is None:
        return _keeps_rows(node.left) and _keeps_rows(node.right)
    return False


def _rewrite(node: L.Aggregate, resolve, join: L.Join, side: str, rows, ndv, new_field) -> L.LogicalNode | None:
    grouped = join.right if side == "right" else join.left
    other = join.left if side == "right" else join.right
    mine = {f.id for f in grouped.schema}
    theirs = {f.id for f in other.schema}

    def reads(e: Expr) -> set[int]:
        return {f.id for f in e.fields()}

    # the condition: equalities of one column of each side
    keys: list[tuple[ColRef, ColRef]] = []  # (the grouped side's column, the other's)
    for c in conjuncts(join.condition):
        if not (isinstance(c, Call) and c.fn == "eq" and all(isinstance(a, ColRef) for a in c.args)):
            return None
        a, b = c.args
        if a.field.id in mine and b.field.id in theirs:
            keys.append((a, b))
        elif b.field.id in mine and a.field.id in theirs:
            keys.append((b, a))
        else:
            return None
    if not keys:
        return None
    # the GROUP BY keys: each of one side; the grouped side's are columns it groups by too
    groups = [(f, resolve(e)) for f, e in node.groups]
    by: dict[int, ColRef] = {k.field.id: k for k, _ in keys}
    for _, e in groups:
        r = reads(e)
        if r & mine:
            if not (isinstance(e, ColRef) and r <= mine):
                return None
            by.setdefault(e.field.id, e)
        elif not r <= theirs:
            return None
    # the aggregates: partial states of the grouped side's columns
    aggs = []
    for f, agg in node.aggs:
        agg = resolve(agg)
        if agg.fn not in _PARTIAL or agg.distinct or agg.order or agg.params:
            return None
        if not all(reads(a) <= mine for a in agg.args):
            return None
        if agg.filter is not None and (join.kind != "inner" or not reads(agg.filter) <= mine):
            return None
        aggs.append((f, agg))
    before = rows(grouped)
    if not _keeps_rows(other) or rows(join) < MIN_JOINED * before:
        return None
    groups_before = 1.0
    for c in by.values():
        groups_before *= ndv(c.field.id, before)
    if before < MIN_REDUCTION * min(groups_before, before):
        return None
    # the grouped side by its keys, each aggregate's partial state beside them
    renamed = {i: new_field(c.field.name, c.type) for i, c in by.items()}
    partial_groups = tuple((renamed[i], c) for i, c in by.items())
    partials, tops, finals = [], [], []
    for f, agg in aggs:
        part = new_field(f.name, agg.type)
        partials.append((part, agg))
        top = new_field(f.name, f.type if agg.fn in ("sum", "min", "max") else T.HUGEINT)
        if agg.fn in ("min", "max"):
            tops.append((top, AggCall(agg.fn, (ColRef(part),), top.type)))
            finals.append((f, ColRef(top)))
            continue
        counted: Expr = ColRef(part)
        if agg.fn == "count_star" and join.kind == "left":  # an unmatched row counts once
            counted = Call("coalesce", (counted, Literal(1, T.BIGINT)), T.BIGINT)
        tops.append((top, AggCall("sum", (counted,), top.type)))
        if agg.fn == "sum":
            finals.append((f, ColRef(top)))
        else:  # a count: 0 where no row matched
            finals.append((f, ty.cast(Call("coalesce", (ColRef(top), Literal(0, T.HUGEINT)), T.HUGEINT), f.type)))
    pre = L.Aggregate(grouped, partial_groups, tuple(partials), None)
    swap = {i: ColRef(g) for i, g in renamed.items()}
    cond = substitute(join.condition, swap)
    joined = L.Join(other, pre, join.kind, cond) if side == "right" else L.Join(pre, other, join.kind, cond)
    top_groups = tuple((f, substitute(e, swap)) for f, e in groups)
    top = L.Aggregate(joined, top_groups, tuple(tops), None)
    return L.Project(top, tuple((f, ColRef(f)) for f, _ in groups) + tuple(finals))
