"""Projection pruning: every node keeps only the columns someone above reads,
so a scan reads only the columns the query uses.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import ColRef, Field
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> plan = L.Project(L.Scan("t", ("a", "b"), (a, b)), ((a, ColRef(a)),))
>>> print(prune_columns(plan).explain())
Scan t [a#1]
"""

from __future__ import annotations

from dataclasses import replace

from glint.plan import logical as L
from glint.plan.expr import ColRef


def prune_columns(plan: L.LogicalNode) -> L.LogicalNode:
    return _prune(plan, {f.id for f in plan.schema}, top=True)


def _refs(exprs) -> set[int]:
    return {f.id for e in exprs for f in e.fields()}


def _prune(node: L.LogicalNode, need: set[int], top: bool = False) -> L.LogicalNode:
    if isinstance(node, L.Scan):
        keep = [(c, f) for c, f in zip(node.columns, node.fields) if f.id in need]
        if not keep:  # COUNT(*) and friends still need the row count: keep the narrowest column
            keep = [min(zip(node.columns, node.fields), key=lambda cf: cf[1].type.torch_dtype.itemsize)]
        return L.Scan(node.table, tuple(c for c, _ in keep), tuple(f for _, f in keep), node.alias)
    if isinstance(node, (L.OneRow, L.Series, L.WorkingTable)):
        return node
    if isinstance(node, L.SeriesPerRow):
        child = _prune(node.child, (need - {node.field.id}) | _refs(node.expressions()))
        return replace(node, child=child)
    if isinstance(node, L.RecursiveCTE):
        # every column takes part in the recursion
        return L.RecursiveCTE(
            _prune(node.left, {f.id for f in node.left.schema}),
            _prune(node.right, {f.id for f in node.right.schema}),
            node.all,
            node.fields,
            node.key,
        )
    if isinstance(node, L.Values):
        keep = [i for i, f in enumerate(node.fields) if f.id in need]
        if len(keep) == len(node.fields):
            return node
        return L.Values(tuple(tuple(r[i] for i in keep) for r in node.rows), tuple(node.fields[i] for i in keep))
    if isinstance(node, L.Filter):
        f = L.Filter(_prune(node.child, need | _refs([node.predicate])), node.predicate)
        keep = tuple((x, ColRef(x)) for x in f.schema if x.id in need)
        if keep and len(keep) < len(f.schema) and not top:
            # columns only the predicate reads end here (a breaker above need not hold them)
            return L.Project(f, keep)
        return f
    if isinstance(node, L.Project):
        exprs = tuple((f, e) for f, e in node.exprs if f.id in need or top)
        child = _prune(node.child, _refs(e for _, e in exprs))
        if _is_identity(exprs, child):
            return child
        return L.Project(child, exprs)
    if isinstance(node, L.Join):
        extra = _refs([node.condition] if node.condition is not None else [])
        if node.null_aware:
            extra |= _refs(node.null_aware)
        want = need | extra
        left = _prune(node.left, want & {f.id for f in node.left.schema})
        right_need = want & {f.id for f in node.right.schema}
        right = _prune(node.right, right_need)
        j = L.Join(left, right, node.kind, node.condition, node.mark, node.null_aware)
        keep = tuple((x, ColRef(x)) for x in j.schema if x.id in need)
        if keep and len(keep) < len(j.schema) and not top:
            # columns only the condition reads (the join keys) end here: the join then
            # gathers only the others for its rows (glint.exec.physical_planner.narrow_join)
            return L.Project(j, keep)
        return j
    if isinstance(node, L.Aggregate):
        aggs = tuple((f, a) for f, a in node.aggs if f.id in need)
        child = _prune(node.child, _refs([e for _, e in node.groups] + [a for _, a in aggs]))
        return replace(node, child=child, aggs=aggs)
    if isinstance(node, L.Sort):
        return L.Sort(_prune(node.child, need | _refs(k.expr for k in node.keys)), node.keys)
    if isinstance(node, L.Limit):
        return L.Limit(_prune(node.child, need), node.limit, node.offset)
    if isinstance(node, L.Window):
        # a window function nobody reads is not computed (it never changes the rows)
        funcs = tuple((f, w) for f, w in node.funcs if f.id in need)
        child_need = (need & {f.id for f in node.child.schema}) | {f.id for _, w in funcs for f in w.fields()}
        child = _prune(node.child, child_need)
        return L.Window(child, funcs) if funcs else child
    if isinstance(node, L.SetOp) and node.kind == "union" and node.all and not top:
        # UNION ALL keeps its rows whatever the columns: the columns nobody reads go on
        # both sides (by position), down to the scans; at least one stays for the row count
        keep = [i for i, f in enumerate(node.fields) if f.id in need] or [0]
        if len(keep) < len(node.fields):
            return L.SetOp(
                *(_prune_positions(side, keep) for side in (node.left, node.right)),
                node.kind,
                node.all,
                tuple(node.fields[i] for i in keep),
            )
    if isinstance(node, L.SetOp):
        return L.SetOp(
            _prune(node.left, {f.id for f in node.left.schema}),
            _prune(node.right, {f.id for f in node.right.schema}),
            node.kind,
            node.all,
            node.fields,
        )
    raise TypeError(f"prune_columns: unknown node {type(node).__name__}")


def _prune_positions(node: L.LogicalNode, keep: list[int]) -> L.LogicalNode:
    """``node`` pruned to exactly the columns at positions ``keep``, in order
    (a set operation's inputs line up by position)."""
    fields = [node.schema[i] for i in keep]
    child = _prune(node, {f.id for f in fields})
    exprs = tuple((f, ColRef(f)) for f in fields)
    return child if _is_identity(exprs, child) else L.Project(child, exprs)


def _is_identity(exprs, child) -> bool:
    schema = child.schema
    return len(exprs) == len(schema) and all(
        isinstance(e, ColRef) and e.field == f and f == s for (f, e), s in zip(exprs, schema)
    )
