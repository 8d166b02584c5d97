"""The nodes of a logical plan, for the plan tests' assertions."""

from __future__ import annotations

from glint.plan import logical as L


def nodes_of(plan: L.LogicalNode, cls: type) -> list:
    """Every node of ``plan`` (itself included) that is a ``cls``."""
    out, stack = [], [plan]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if isinstance(node, cls):
            out.append(node)
    return out
