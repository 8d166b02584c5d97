"""Join ordering: each tree of inner joins is flattened into its inputs and
conditions, then rebuilt greedily, always adding the input connected to what
is joined so far that gives the smallest estimated result (GOO-style, on the
cardinality estimates). Cross products are taken only when nothing connects.

>>> from glint import types as T
>>> from glint.plan.expr import Call, ColRef, Field
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> j = L.Join(L.Scan("t", ("a",), (a,)), L.Scan("u", ("b",), (b,)), "inner",
...            Call("eq", (ColRef(a), ColRef(b)), T.BOOLEAN))
>>> isinstance(reorder_joins(j, None), L.Join)
True
"""
from __future__ import annotations

from .. import logical as L
from ..cardinality import Estimator
from ..expr import conjoin, conjuncts


def reorder_joins(plan: L.LogicalNode, catalog) -> L.LogicalNode:
    if catalog is None:
        return plan
    est = Estimator(catalog)

    def rule(node):
        if isinstance(node, L.Join) and node.kind == "inner":
            return _reorder(node, est)
        return node
    return _top_down(plan, rule)


def _top_down(node, rule):
    node = rule(node)
    kids = node.children
    if not kids:
        return node
    if isinstance(node, L.Join) and node.kind == "inner":
        # the reordered tree's leaves are optimised in turn, not its inner joins again
        return node.with_children(tuple(_top_down_leaves(k, rule) for k in kids))
    return node.with_children(tuple(_top_down(k, rule) for k in kids))


def _top_down_leaves(node, rule):
    if isinstance(node, L.Join) and node.kind == "inner":
        return node.with_children(tuple(_top_down_leaves(k, rule) for k in node.children))
    if isinstance(node, L.Filter) and isinstance(node.child, L.Join) and node.child.kind == "inner":
        return L.Filter(_top_down_leaves(node.child, rule), node.predicate)
    return _top_down(node, rule)


def _flatten(node, leaves, preds):
    if isinstance(node, L.Join) and node.kind == "inner":
        _flatten(node.left, leaves, preds)
        _flatten(node.right, leaves, preds)
        preds.extend(conjuncts(node.condition))
    else:
        leaves.append(node)


def _reorder(node: L.Join, est: Estimator) -> L.LogicalNode:
    leaves, preds = [], []
    _flatten(node, leaves, preds)
    if len(leaves) < 3:
        return node
    ids = [{f.id for f in leaf.schema} for leaf in leaves]
    pred_sets = [{f.id for f in p.fields()} for p in preds]
    rows = [est.rows(leaf) for leaf in leaves]

    def touches(p_ids, covered):
        return bool(p_ids) and p_ids <= covered

    def join_rows(cur_rows, covered, i):
        cand = covered | ids[i]
        sel = 1.0
        for p, p_ids in zip(preds, pred_sets):
            if touches(p_ids, cand) and not touches(p_ids, covered) and not p_ids <= ids[i]:
                sel *= est.selectivity(p, cur_rows * rows[i], join=True)
        return cur_rows * rows[i] * sel, sel < 1.0

    # start from the pair with the smallest connected join
    best = None
    for i in range(len(leaves)):
        for k in range(len(leaves)):
            if i == k:
                continue
            r, connected = join_rows(rows[i], ids[i], k)
            if connected and (best is None or r < best[0]):
                best = (r, i, k)
    if best is None:
        return node
    _, i, k = best
    # the larger input goes left (probe), the smaller right (build)
    order = [i, k] if rows[i] >= rows[k] else [k, i]
    covered = ids[i] | ids[k]
    cur_rows = best[0]
    remaining = [x for x in range(len(leaves)) if x not in (i, k)]
    used = [False] * len(preds)
    plan = _join(leaves[order[0]], leaves[order[1]], preds, pred_sets, used, covered)
    while remaining:
        choice = None
        for x in remaining:
            r, connected = join_rows(cur_rows, covered, x)
            key = (not connected, r)
            if choice is None or key < choice[0]:
                choice = (key, x, r)
        _, x, r = choice
        covered = covered | ids[x]
        plan = _join(plan, leaves[x], preds, pred_sets, used, covered)
        cur_rows = r
        remaining.remove(x)
    left_over = [p for p, u in zip(preds, used) if not u]
    return L.Filter(plan, conjoin(left_over)) if left_over else plan


def _join(left, right, preds, pred_sets, used, covered):
    cond = []
    for n, (p, p_ids) in enumerate(zip(preds, pred_sets)):
        if not used[n] and p_ids <= covered:
            cond.append(p)
            used[n] = True
    return L.Join(left, right, "inner", conjoin(cond))
