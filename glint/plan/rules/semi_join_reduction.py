"""An aggregate joined on its GROUP BY keys computes only the groups the
join can match: its input is first semi-joined to the keys of the join's
other side (a semi-join reduction; for a decorrelated subquery, the "magic
set" of its correlation values).

A correlated subquery that aggregates becomes an aggregate grouped by its
correlation columns, joined to the outer rows on them
(glint.sql.decorrelate). TPC-H Q17 so groups all of lineitem by part, 200,000
groups a scale factor, to look up the 0.1% of parts the outer query keeps;
Q20 groups a year of lineitem by (part, supplier) for the suppliers of one
part name prefix. When the other side is small next to the aggregate's
groups and cheap to read again, this rule reads it a second time, for its
keys, and puts ``SEMI JOIN`` those keys under the aggregate, as deep as the
keys' columns go (onto lineitem's scan in Q17; above a filter, which is
cheaper and prunes the scan's chunks), so the aggregate sees the
rows of the groups that can be matched and no others.

The result is the same because a group that no row of the other side matches
on the keys is never part of the join's output, for these joins only:

- INNER and SEMI joins, the aggregate on either side;
- SINGLE, LEFT and ANTI joins with the aggregate on the right (the inner
  side: an unmatched group neither adds a row nor removes one);
- RIGHT joins with the aggregate on the left.

Never for FULL joins, for a preserved side (a LEFT join's left, an ANTI
join's left), for MARK joins or NOT IN (whose result depends on whether the
inner side holds a NULL anywhere), and never for GROUPING SETS. The keys are
equalities between an expression of the aggregate's group columns and one of
the other side's columns; NULL keys match nothing in either join, so the
semi join drops them as the join would.

When it applies (all estimated): the other side has at most half as many
rows as the aggregate has groups, and reading it again scans no more rows
than the aggregate's input does (its tables' rows, summed over its scans).
glint has no volatile functions, so the second reading gives the same rows.
The other side must not itself aggregate, window or recurse (a second
reading of those costs too much to guess at), nor hold a LIMIT (a second
reading could keep other rows).

>>> from glint.columnar import types as T
>>> from glint.plan.expr import AggCall, Call, ColRef, Field
>>> k, v, p, n, s = (Field(i, x, T.BIGINT) for i, x in enumerate("kvpns", 1))
>>> agg = L.Aggregate(L.Scan("big", ("k", "v"), (k, v)), ((n, ColRef(k)),), ((s, AggCall("sum", (ColRef(v),), T.HUGEINT)),))
>>> j = L.Join(L.Scan("small", ("p",), (p,)), agg, "single", Call("eq", (ColRef(p), ColRef(n)), T.BOOLEAN))
>>> print(reduce_aggregate_inputs(j, lambda node: {"big": 1e6, "small": 10}.get(getattr(node, "table", ""), 1e5)).explain())
Join SINGLE ON (p#3 = n#4)
  Scan small [p#3]
  Aggregate groups=[k#1 AS n#4] aggs=[sum(v#2) AS s#5]
    Join SEMI ON (k#1 = p#6)
      Scan big [k#1, v#2]
      Scan small [p#6]
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.plan import logical as L
from glint.plan.cardinality import Estimator
from glint.plan.expr import Call, ColRef, Expr, conjoin, conjuncts, substitute
from glint.plan.fresh import field_maker, fresh_copy

# (join kind, side of the aggregate) where dropping groups no row of the other side matches
# leaves the join's output as it is
REDUCIBLE = {
    ("inner", "left"),
    ("inner", "right"),
    ("semi", "left"),
    ("semi", "right"),
    ("single", "right"),
    ("left", "right"),
    ("anti", "right"),
    ("right", "left"),
}
# the other side's rows, at most this fraction of the aggregate's groups
MAX_OUTER_FRACTION = 0.5
# what the other side must not hold to be read twice: costly to guess at (aggregates,
# windows, set operations, recursion), or rows a second reading may pick differently (a
# LIMIT, whose rows are any that fit where no ORDER BY decides them)
_NOT_REPEATED = (L.Aggregate, L.Window, L.SetOp, L.RecursiveCTE, L.WorkingTable, L.SeriesPerRow, L.Limit)


def semi_join_reduction(plan: L.LogicalNode, catalog) -> L.LogicalNode:
    if catalog is None:
        return plan
    est = Estimator(catalog)
    return reduce_aggregate_inputs(plan, est.rows)


def reduce_aggregate_inputs(plan: L.LogicalNode, rows) -> L.LogicalNode:
    """``plan`` with the rule applied; ``rows(node)`` estimates a node's rows."""
    new_field = field_maker(plan)

    def rule(node):
        if not isinstance(node, L.Join) or node.mark is not None or node.null_aware:
            return node
        for side in ("right", "left"):
            if (node.kind, side) in REDUCIBLE:
                reduced = _reduce(node, side, rows, new_field)
                if reduced is not None:
                    return reduced
        return node

    return plan.transform_up(rule)


def _reduce(join: L.Join, side: str, rows, new_field) -> L.Join | None:
    agg_side = join.right if side == "right" else join.left
    other = join.left if side == "right" else join.right
    found = _aggregate_below(agg_side)
    if found is None:
        return None
    agg, group_of = found
    other_ids = {f.id for f in other.schema}
    pairs = []  # (expression of the aggregate's input, expression of the other side)
    for c in conjuncts(join.condition):
        if not (isinstance(c, Call) and c.fn == "eq"):
            continue
        a, b = c.args
        for mine, theirs in ((a, b), (b, a)):
            mids, tids = _ids(mine), _ids(theirs)
            if mids and tids and mids <= group_of.keys() and tids <= other_ids:
                pairs.append((substitute(mine, group_of), theirs))
                break
    if not pairs or not _repeatable(other):
        return None
    if rows(other) > MAX_OUTER_FRACTION * rows(agg) or _scanned(other, rows) > _scanned(agg.child, rows):
        return None
    copy, mapping = fresh_copy(other, new_field)
    renamed = {i: ColRef(f) for i, f in mapping.items()}
    theirs = [substitute(t, renamed) for _, t in pairs]
    if all(isinstance(t, ColRef) for t in theirs):
        key_side = copy
    else:  # expressions of the other side's columns: computed once, in a projection
        fields = [new_field(f"key{i}", t.type) for i, t in enumerate(theirs)]
        key_side = L.Project(copy, tuple(zip(fields, theirs)))
        theirs = [ColRef(f) for f in fields]
    cond = conjoin([Call("eq", (m, t), T.BOOLEAN) for (m, _), t in zip(pairs, theirs)])
    needed = set().union(*(_ids(m) for m, _ in pairs))
    child = _semi_join_at(agg.child, needed, key_side, cond)
    new_side = _replaced(agg_side, agg, L.Aggregate(child, agg.groups, agg.aggs, agg.grouping))
    if side == "right":
        return L.Join(join.left, new_side, join.kind, join.condition, join.mark, join.null_aware)
    return L.Join(new_side, join.right, join.kind, join.condition, join.mark, join.null_aware)


def _replaced(node: L.LogicalNode, old: L.LogicalNode, new: L.LogicalNode) -> L.LogicalNode:
    """``node`` with its descendant ``old`` (through single-child nodes) replaced by ``new``."""
    if node is old:
        return new
    return node.with_children((_replaced(node.child, old, new),))


def _aggregate_below(node: L.LogicalNode):
    """(the aggregate under projections and filters of its output, output
    field id -> the group's expression over the aggregate's input) for the
    group columns that reach ``node``'s output; None when there is none."""
    levels = []
    while isinstance(node, (L.Project, L.Filter)):
        if isinstance(node, L.Project):
            levels.append(node.exprs)
        node = node.child
    if not isinstance(node, L.Aggregate) or node.grouping is not None or not node.groups:
        return None
    group_of: dict[int, Expr] = {f.id: e for f, e in node.groups}
    for exprs in reversed(levels):  # innermost projection first
        group_of = {f.id: group_of[e.field.id] for f, e in exprs if isinstance(e, ColRef) and e.field.id in group_of}
    return (node, group_of) if group_of else None


def _semi_join_at(node: L.LogicalNode, needed: set[int], keys: L.LogicalNode, cond: Expr) -> L.LogicalNode:
    """``node`` with its rows semi-joined to ``keys`` on ``cond``, down through
    projections and joins to the input that produces the columns ``needed``,
    above its filters (a scan's filter is cheaper and prunes chunks)."""
    if isinstance(node, L.Project) and all(
        any(f.id == i and isinstance(e, ColRef) and e.field.id == i for f, e in node.exprs) for i in needed
    ):
        return L.Project(_semi_join_at(node.child, needed, keys, cond), node.exprs)
    if isinstance(node, L.Join) and node.mark is None:
        left_ids = {f.id for f in node.left.schema}
        right_ids = {f.id for f in node.right.schema}
        # rows of a side may go early where the join keeps only matched rows of that side
        if needed <= left_ids and node.kind in ("inner", "semi", "anti", "left", "single"):
            return L.Join(
                _semi_join_at(node.left, needed, keys, cond),
                node.right,
                node.kind,
                node.condition,
                node.mark,
                node.null_aware,
            )
        if needed <= right_ids and node.kind in ("inner", "right"):
            return L.Join(
                node.left,
                _semi_join_at(node.right, needed, keys, cond),
                node.kind,
                node.condition,
                node.mark,
                node.null_aware,
            )
    return L.Join(node, keys, "semi", cond)


def _repeatable(node: L.LogicalNode) -> bool:
    ok = [True]

    def visit(n):
        if isinstance(n, _NOT_REPEATED):
            ok[0] = False
        return n

    node.transform_up(visit)
    return ok[0]


def _scanned(node: L.LogicalNode, rows) -> float:
    """The rows the scans under ``node`` read (their tables' estimated rows)."""
    total = [0.0]

    def visit(n):
        if isinstance(n, (L.Scan, L.Values)):
            total[0] += rows(n)
        return n

    node.transform_up(visit)
    return total[0]


def _ids(e: Expr) -> set[int]:
    return {f.id for f in e.fields()}
