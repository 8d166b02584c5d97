"""Reading an aggregate's expressions through the projections below it: the
rules that rewrite an aggregate over a join look past the Projects between
them.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import ColRef, Field
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> scan = L.Scan("t", ("a",), (a,))
>>> child, resolve = below_projections(L.Project(scan, ((b, ColRef(a)),)))
>>> child is scan, resolve(ColRef(b))
(True, a#1)
"""

from __future__ import annotations

from collections.abc import Callable

from glint.plan import logical as L
from glint.plan.expr import Expr, substitute


def below_projections(node: L.LogicalNode) -> tuple[L.LogicalNode, Callable[[Expr], Expr]]:
    """The first node below ``node`` that is not a Project, and a function
    rewriting an expression over ``node`` into one over that node."""
    levels = []
    while isinstance(node, L.Project):
        levels.append({f.id: e for f, e in node.exprs})
        node = node.child

    def resolve(e: Expr) -> Expr:
        for level in levels:
            e = substitute(e, level)
        return e

    return node, resolve
