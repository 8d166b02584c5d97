"""Pull conjuncts shared by every branch of an OR out in front of it:
(A AND B) OR (A AND C)  ->  A AND (B OR C). This exposes join keys hidden in
disjunctions (TPC-H Q19) to predicate pushdown and hash joins.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Call, ColRef, Field
>>> a, b, c = (ColRef(Field(i, n, T.BOOLEAN)) for i, n in enumerate("abc"))
>>> AND = lambda x, y: Call("and", (x, y), T.BOOLEAN)
>>> factor_expr(Call("or", (AND(a, b), AND(a, c)), T.BOOLEAN))
(a#0 AND (b#1 OR c#2))
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.plan import logical as L
from glint.plan.expr import Call, Expr, conjoin, conjuncts


def factor_disjunctions(plan: L.LogicalNode) -> L.LogicalNode:
    def rule(node):
        if isinstance(node, L.Filter):
            return L.Filter(node.child, factor_expr(node.predicate))
        if isinstance(node, L.Join) and node.condition is not None:
            return L.Join(node.left, node.right, node.kind, factor_expr(node.condition), node.mark, node.null_aware)
        return node

    return plan.transform_up(rule)


def factor_expr(e: Expr) -> Expr:
    return e.transform(_factor)


def _disjuncts(e: Expr) -> list[Expr]:
    if isinstance(e, Call) and e.fn == "or":
        return [d for a in e.args for d in _disjuncts(a)]
    return [e]


def _factor(e: Expr) -> Expr:
    if not (isinstance(e, Call) and e.fn == "or"):
        return e
    branches = [conjuncts(d) for d in _disjuncts(e)]
    common = [c for c in branches[0] if all(c in b for b in branches[1:])]
    if not common:
        return e
    rests = [[c for c in b if c not in common] for b in branches]
    if any(not r for r in rests):  # one branch is just the common part: the OR is implied
        return conjoin(common)
    rest = conjoin(rests[0])
    for r in rests[1:]:
        rest = Call("or", (rest, conjoin(r)), T.BOOLEAN)
    return conjoin(common + [rest])
