"""Outer joins whose NULL-extended rows a condition above them drops become
the joins that do not make those rows: a LEFT JOIN under a WHERE (or an
inner join's ON) that rejects NULLs of its right side's columns is an inner
join, a FULL JOIN becomes a LEFT, RIGHT or inner join. An inner join can
then be ordered with the others (TPC-DS q93: ``store_sales LEFT JOIN
store_returns ... WHERE sr_reason_sk = r_reason_sk`` joins the few returns
of one reason first, not every sale to its returns).

A condition rejects NULLs of a set of columns when it cannot be TRUE while
all of them are NULL: a strict expression of one of them (a comparison,
arithmetic, LIKE, a cast: NULL in, NULL out), ``x IS NOT NULL``, ``x IN
(...)``, an AND with such a conjunct or an OR whose every branch is one.
Conditions move down only through nodes that keep each row as it is
(filters, projections, sorts, inner joins, the kept side of an outer or
semi join); not through an aggregate, a window, a LIMIT or a set operation,
whose result would change with the rows under it.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> j = L.Join(L.Scan("t", ("a",), (a,)), L.Scan("u", ("b",), (b,)), "left",
...            Call("eq", (ColRef(a), ColRef(b)), T.BOOLEAN))
>>> gt = Call("gt", (ColRef(b), Literal(1, T.INTEGER)), T.BOOLEAN)
>>> print(simplify_outer_joins(L.Filter(j, gt), {"gt", "eq"}).explain())
Filter (b#2 > 1)
  Join INNER ON (a#1 = b#2)
    Scan t [a#1]
    Scan u [b#2]
>>> is_null = Call("is_null", (ColRef(b),), T.BOOLEAN)
>>> simplify_outer_joins(L.Filter(j, is_null), {"gt", "eq"}).child.kind
'left'
"""

from __future__ import annotations

from dataclasses import replace

from glint.plan import logical as L
from glint.plan.expr import Call, ColRef, Expr, conjuncts, substitute


def simplify_outer_joins(plan: L.LogicalNode, strict) -> L.LogicalNode:
    """The plan with its outer joins simplified; ``strict`` names the
    functions whose result is NULL whenever an argument is."""
    return _walk(plan, [], frozenset(strict))


def _ids(node: L.LogicalNode) -> frozenset[int]:
    return frozenset(f.id for f in node.schema)


def _null_when(e: Expr, ids: frozenset[int], strict: frozenset[str]) -> bool:
    """Whether ``e`` is NULL whenever every column in ``ids`` is."""
    if isinstance(e, ColRef):
        return e.field.id in ids
    if isinstance(e, Call):
        if e.fn in strict:
            return any(_null_when(a, ids, strict) for a in e.args)
        if e.fn == "in_list":  # x IN (...) is NULL when x is
            return bool(e.args) and _null_when(e.args[0], ids, strict)
    return False


def rejects_nulls(p: Expr, ids: frozenset[int], strict: frozenset[str]) -> bool:
    """Whether the condition ``p`` is never TRUE while every column in
    ``ids`` is NULL."""
    if not isinstance(p, Call):
        return False
    if p.fn == "and":
        return any(rejects_nulls(a, ids, strict) for a in p.args)
    if p.fn == "or":
        return all(rejects_nulls(a, ids, strict) for a in p.args)
    if p.fn == "not" and len(p.args) == 1:
        inner = p.args[0]
        if isinstance(inner, Call) and inner.fn == "is_null" and len(inner.args) == 1:
            return _null_when(inner.args[0], ids, strict)
    return _null_when(p, ids, strict)


def _walk(node: L.LogicalNode, above: list[Expr], strict: frozenset[str]) -> L.LogicalNode:
    """``node`` simplified, given conditions ``above`` it that drop every row
    for which they are not TRUE (each row of ``node`` reaches them as it is)."""
    if isinstance(node, L.Filter):
        return L.Filter(_walk(node.child, above + conjuncts(node.predicate), strict), node.predicate)
    if isinstance(node, L.Project):
        mapping = {f.id: e for f, e in node.exprs}
        return L.Project(_walk(node.child, [substitute(p, mapping) for p in above], strict), node.exprs)
    if isinstance(node, L.Sort):
        return L.Sort(_walk(node.child, above, strict), node.keys)
    if isinstance(node, L.Join):
        return _walk_join(node, above, strict)
    # an aggregate, a window, a limit, a set operation: what they make depends on
    # every row below them, so nothing above says which rows below may go
    kids = node.children
    return node.with_children(tuple(_walk(k, [], strict) for k in kids)) if kids else node


def _walk_join(j: L.Join, above: list[Expr], strict: frozenset[str]) -> L.LogicalNode:
    kind = j.kind
    cond = conjuncts(j.condition) if j.condition is not None else []
    if kind in ("left", "right", "full") and j.null_aware is None:
        lids, rids = _ids(j.left), _ids(j.right)
        left_gone = any(rejects_nulls(p, lids, strict) for p in above)
        right_gone = any(rejects_nulls(p, rids, strict) for p in above)
        keeps_left = kind in ("left", "full") and not right_gone  # unmatched left rows survive
        keeps_right = kind in ("right", "full") and not left_gone
        kind = {(True, True): "full", (True, False): "left", (False, True): "right"}.get(
            (keeps_left, keeps_right), "inner"
        )
    if kind == "inner":
        # a row of either side reaches the conditions above and the join's own
        left, right = above + cond, above + cond
    elif kind == "left":
        # the left side's rows all reach the conditions above; the right side's
        # rows that fail the join condition match nothing and are not kept
        left, right = above, cond
    elif kind == "right":
        left, right = cond, above
    elif kind in ("semi", "anti", "single") or (kind == "mark" and j.null_aware is None):
        left, right = above, cond
    else:  # full, or a NULL-aware mark join (IN / NOT IN: a right row's NULL counts)
        left, right = [], []
    return replace(j, left=_walk(j.left, left, strict), right=_walk(j.right, right, strict), kind=kind)


def inner_joins_below_outer(plan: L.LogicalNode) -> L.LogicalNode:
    """Inner joins that read only the kept side of a LEFT JOIN below them
    move under it: ``(A LEFT JOIN B ON p) JOIN C ON q`` is ``(A JOIN C ON q)
    LEFT JOIN B ON p`` when ``q`` reads no column of B (each row of A meets
    the same rows of C either way, and its B rows or NULLs do not depend on
    C). Join ordering then orders A's inner joins together: TPC-DS q80's
    ``store_sales LEFT JOIN store_returns ..., date_dim, store, item,
    promotion`` joins one month of sales to their returns, not all of them.
    (A join's columns are named, not positional: the order of its output
    does not change what the plan computes.)

    >>> from glint.columnar import types as T
    >>> from glint.plan.expr import Call, Field
    >>> a, b, c = (Field(i, n, T.INTEGER) for i, n in ((1, "a"), (2, "b"), (3, "c")))
    >>> eq = lambda x, y: Call("eq", (ColRef(x), ColRef(y)), T.BOOLEAN)
    >>> t, u, v = (L.Scan(n, (f.name,), (f,)) for n, f in (("t", a), ("u", b), ("v", c)))
    >>> print(inner_joins_below_outer(L.Join(L.Join(t, u, "left", eq(a, b)), v, "inner", eq(a, c))).explain())
    Join LEFT ON (a#1 = b#2)
      Join INNER ON (a#1 = c#3)
        Scan t [a#1]
        Scan v [c#3]
      Scan u [b#2]
    >>> inner_joins_below_outer(L.Join(L.Join(t, u, "left", eq(a, b)), v, "inner", eq(b, c))).kind  # reads B
    'inner'
    """

    def rule(node):
        if not (isinstance(node, L.Join) and node.kind == "inner" and node.null_aware is None):
            return node
        reads = {f.id for f in node.condition.fields()} if node.condition is not None else set()
        for pos, outer in enumerate((node.left, node.right)):
            if (
                isinstance(outer, L.Join)
                and outer.kind == "left"
                and outer.null_aware is None
                and not reads & _ids(outer.right)
            ):
                other = node.right if pos == 0 else node.left
                # the kept side may itself be a LEFT JOIN: moved under that one too
                kept = rule(L.Join(outer.left, other, "inner", node.condition))
                return L.Join(kept, outer.right, "left", outer.condition)
        return node

    return plan.transform_up(rule)
