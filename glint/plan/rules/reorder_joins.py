"""Join ordering: each tree of inner joins is flattened into its inputs and
conditions, then rebuilt by dynamic programming over subsets of inputs
(bushy trees; cost = sum of estimated intermediate result sizes, C_out).
Cross products are considered only for subsets no predicate connects.

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


DP_LIMIT = 12     # inputs up to which the exhaustive subset DP runs


def _reorder(node: L.Join, est: Estimator) -> L.LogicalNode:
    leaves, preds = [], []
    _flatten(node, leaves, preds)
    if len(leaves) < 3 or len(leaves) > DP_LIMIT:
        return node
    n = len(leaves)
    ids = [{f.id for f in leaf.schema} for leaf in leaves]
    rows = [est.rows(leaf) for leaf in leaves]
    # which inputs each predicate touches
    touch = []
    for p in preds:
        refs = {f.id for f in p.fields()}
        touch.append(sum(1 << i for i in range(n) if refs & ids[i]))
    pair_sel = _pair_selectivities(preds, touch, leaves, rows, est)
    card = {}

    def cardinality(mask):
        c = card.get(mask)
        if c is None:
            c = 1.0
            members = [i for i in range(n) if mask >> i & 1]
            for i in members:
                c *= rows[i]
            for (a, b), sel in pair_sel.items():
                if mask >> a & 1 and mask >> b & 1:
                    c *= sel
            card[mask] = c = max(c, 1.0)
        return c

    def connected(m1, m2):
        return any(t & m1 and t & m2 and not t & ~(m1 | m2) for t in touch)

    best = {1 << i: (0.0, i) for i in range(n)}
    full = (1 << n) - 1
    for size in range(2, n + 1):
        for mask in range(1, full + 1):
            if bin(mask).count("1") != size:
                continue
            choice = None
            for allow_cross in (False, True):
                sub = (mask - 1) & mask
                while sub:
                    other = mask ^ sub
                    if sub < other and sub in best and other in best and (allow_cross or connected(sub, other)):
                        cost = best[sub][0] + best[other][0] + cardinality(mask)
                        if choice is None or cost < choice[0]:
                            choice = (cost, (sub, other))
                    sub = (sub - 1) & mask
                if choice is not None:
                    break
            if choice is not None:
                best[mask] = choice
    used = [False] * len(preds)
    pred_sets = [{f.id for f in p.fields()} for p in preds]

    def build(mask):
        entry = best[mask][1]
        if isinstance(entry, int):
            return leaves[entry], ids[entry]
        a, b = entry
        (pa_, ia), (pb, ib) = build(a), build(b)
        if cardinality(a) < cardinality(b):     # larger input on the left (probe side)
            pa_, pb, ia, ib = pb, pa_, ib, ia
        covered = ia | ib
        return _join(pa_, pb, preds, pred_sets, used, covered), covered

    plan, _ = build(full)
    left_over = [p for p, u in zip(preds, used) if not u]
    return L.Filter(plan, conjoin(left_over)) if left_over else plan


def _pair_selectivities(preds, touch, leaves, rows, est):
    """Selectivity of the predicates between each pair of inputs. Several
    equalities between the same two inputs (a composite key) are not
    independent: their product is clamped so the join keeps at least as many
    rows as its larger input has (the foreign-key case)."""
    out = {}
    for p, t in zip(preds, touch):
        members = [i for i in range(len(leaves)) if t >> i & 1]
        if len(members) != 2:
            continue
        a, b = members
        out[(a, b)] = out.get((a, b), 1.0) * est.selectivity(p, rows[a] * rows[b], join=True)
    for (a, b), sel in out.items():
        out[(a, b)] = max(sel, 1.0 / max(rows[a], rows[b]))
    return out


def _join(left, right, preds, pred_sets, used, covered):
    cond = []
    for n, (p, p_ids) in enumerate(zip(preds, pred_sets)):
        if not used[n] and p_ids <= covered:
            cond.append(p)
            used[n] = True
    return L.Join(left, right, "inner", conjoin(cond))
