"""A copy of a logical plan whose every column has a new id.

A plan refers to columns by id, so one subtree cannot appear twice in a plan.
A correlated subquery that is decorrelated through the distinct values of the
outer columns it reads (a dependent join) reads the outer query's rows twice:
once for those values and once for the rows themselves. The first reading is
this copy.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import ColRef, Field
>>> import itertools
>>> ids = itertools.count(10)
>>> a = Field(1, "a", T.INTEGER)
>>> plan = L.Filter(L.Scan("t", ("a",), (a,)), ColRef(a))
>>> copy, mapping = fresh_copy(plan, lambda name, type_: Field(next(ids), name, type_))
>>> print(copy.explain())
Filter a#10
  Scan t [a#10]
>>> mapping[1]
a#10
"""

from __future__ import annotations

from dataclasses import replace

from glint.plan import logical as L
from glint.plan.expr import ColRef, Expr, Field


def fresh_copy(plan: L.LogicalNode, new_field) -> tuple[L.LogicalNode, dict[int, Field]]:
    """(the copy, old field id -> new field). ``new_field(name, type)`` makes a field."""
    mapping: dict[int, Field] = {}

    def renew(f: Field) -> Field:
        g = new_field(f.name, f.type)
        mapping[f.id] = g
        return g

    def refs(e: Expr) -> Expr:
        return e.transform(
            lambda n: ColRef(mapping[n.field.id]) if isinstance(n, ColRef) and n.field.id in mapping else n
        )

    def rule(node: L.LogicalNode) -> L.LogicalNode:
        node = node.map_expressions(refs)  # the children are copied already
        if isinstance(node, L.Scan):
            return replace(node, fields=tuple(renew(f) for f in node.fields))
        if isinstance(node, L.Values):
            return replace(node, fields=tuple(renew(f) for f in node.fields))
        if isinstance(node, (L.Series, L.SeriesPerRow)):
            return replace(node, field=renew(node.field))
        if isinstance(node, (L.RecursiveCTE, L.WorkingTable)):
            return replace(node, fields=tuple(renew(f) for f in node.fields))
        if isinstance(node, L.Project):
            return L.Project(node.child, tuple((renew(f), e) for f, e in node.exprs))
        if isinstance(node, L.Join):
            return replace(node, mark=renew(node.mark)) if node.mark is not None else node
        if isinstance(node, L.Aggregate):
            groups = tuple((renew(f), e) for f, e in node.groups)
            grouping = node.grouping
            if grouping is not None:
                grouping = L.GroupingSets(grouping.sets, renew(grouping.field))
            aggs = tuple((renew(f), a) for f, a in node.aggs)
            return L.Aggregate(node.child, groups, aggs, grouping)
        if isinstance(node, L.SetOp):
            return replace(node, fields=tuple(renew(f) for f in node.fields))
        if isinstance(node, L.Window):
            return L.Window(node.child, tuple((renew(f), w) for f, w in node.funcs))
        if isinstance(node, (L.Filter, L.Sort, L.Limit, L.OneRow)):
            return node
        raise TypeError(f"fresh_copy: no rule for {type(node).__name__}")

    return plan.transform_up(rule), mapping


def max_field_id(plan: L.LogicalNode) -> int:
    """The highest column id ``plan`` produces or reads."""
    top = 0

    def visit(node):
        nonlocal top
        for f in node.schema:
            top = max(top, f.id)
        for e in node.expressions():
            for f in e.fields():
                top = max(top, f.id)
        return node

    plan.transform_up(visit)
    return top


def field_maker(plan: L.LogicalNode):
    """``new_field(name, type)``: fields with ids that ``plan`` does not use."""
    ids = [max_field_id(plan)]

    def new_field(name: str, type_) -> Field:
        ids[0] += 1
        return Field(ids[0], name, type_)

    return new_field
