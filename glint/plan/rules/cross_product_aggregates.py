"""Aggregates over a cross product, computed from its inputs' aggregates.

A cross product of inputs A x B x ... repeats each row of A once per row of
the other inputs, so an aggregate that reads only A's columns follows from
A's own aggregate and the other inputs' row counts, without the product:

- ``count(*)`` is ``|A| * |B| * ...``; ``count(a.x)`` is ``count_A(x) * |B| * ...``;
- ``sum(a.x)`` is ``sum_A(x) * |B| * ...`` (NULL when another input is empty);
- ``min``, ``max``, ``avg``, ``bool_and``, ``bool_or`` and the DISTINCT
  aggregates are A's own (NULL, or 0 for a count, when another input is empty).

The rule rewrites an aggregate over an unconditioned inner join tree (the
conditions a WHERE gives are pushed into the joins first, so only a true
cross product qualifies) when every aggregate and every GROUP BY key reads
one input: the grouped input is aggregated by its keys, the others to one
row each, and the rows are put together. ``count(*)`` over three 100k-row
tables is then three scans, not 10**15 rows.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import AggCall, ColRef, Field
>>> a, b = Field(1, "a", T.INTEGER), Field(2, "b", T.INTEGER)
>>> n, s = Field(3, "n", T.BIGINT), Field(4, "s", T.HUGEINT)
>>> join = L.Join(L.Scan("t", ("a",), (a,)), L.Scan("u", ("b",), (b,)), "inner")
>>> aggs = ((n, AggCall("count_star", (), T.BIGINT)), (s, AggCall("sum", (ColRef(a),), T.HUGEINT)))
>>> print(aggregate_cross_products(L.Aggregate(join, (), aggs)).explain())
Project (rows#5 * rows#6) AS n#3, CASE WHEN (rows#6 = 0) THEN NULL ELSE (s#7 * CAST(rows#6 AS HUGEINT)) END AS s#4
  Join INNER
    Aggregate groups=[] aggs=[count_star() AS rows#5, sum(a#1) AS s#7]
      Scan t [a#1]
    Aggregate groups=[] aggs=[count_star() AS rows#6]
      Scan u [b#2]
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import AggCall, Call, Case, ColRef, Expr, Literal
from glint.plan.fresh import field_maker
from glint.plan.rules.projections import below_projections

# what each aggregate becomes: "count" (times the other inputs' rows), "sum" (times
# them, NULL when another input is empty), "zero" (the input's own, 0 when another
# input is empty), "null" (the input's own, NULL when another input is empty)
_PLAIN = {"count_star": "count", "count": "count", "sum": "sum"}
_ALIKE = ("min", "max", "avg", "bool_and", "bool_or")


def aggregate_cross_products(plan: L.LogicalNode) -> L.LogicalNode:
    new_field = field_maker(plan)
    return plan.transform_up(lambda node: _rewrite(node, new_field))


def _cross_inputs(node: L.LogicalNode) -> list[L.LogicalNode]:
    """The inputs of a tree of unconditioned inner joins (the node itself when
    it is not one)."""
    if isinstance(node, L.Join) and node.kind == "inner" and node.condition is None:
        return _cross_inputs(node.left) + _cross_inputs(node.right)
    return [node]


def _kind(agg: AggCall) -> str | None:
    if agg.order or agg.params:
        return None
    if agg.distinct:
        return {"count": "zero", "sum": "null", "avg": "null"}.get(agg.fn) or ("null" if agg.fn in _ALIKE else None)
    return _PLAIN.get(agg.fn) or ("null" if agg.fn in _ALIKE else None)


def _rewrite(node, new_field) -> L.LogicalNode:
    if not isinstance(node, L.Aggregate) or node.grouping is not None:
        return node
    child, resolve = below_projections(node.child)  # aggregates read through projections
    inputs = _cross_inputs(child)
    if len(inputs) < 2:
        return node
    owner = {f.id: i for i, inp in enumerate(inputs) for f in inp.schema}

    def input_of(e: Expr) -> int | None:
        """The one input an expression reads (None: none; -1: several)."""
        found = {owner.get(f.id, -1) for f in e.fields()}
        return next(iter(found)) if len(found) == 1 else (None if not found else -1)

    groups = [(f, resolve(e)) for f, e in node.groups]
    grouped = {input_of(e) for _, e in groups}
    if groups and (len(grouped) != 1 or None in grouped or -1 in grouped):
        return node
    g = grouped.pop() if groups else None
    plans = []  # per aggregate: (its field, kind, input, the input's aggregate)
    for f, agg in node.aggs:
        kind = _kind(agg)
        agg = resolve(agg)
        reads = [*agg.args] + ([agg.filter] if agg.filter is not None else [])
        where = {input_of(e) for e in reads} - {None}
        if kind is None or -1 in where or len(where) > 1 or (agg.fn != "count_star" and not where):
            return node
        plans.append((f, kind, where.pop() if where else None, agg))
    counts = [new_field("rows", T.BIGINT) for _ in inputs]
    local: list[list] = [[(counts[i], AggCall("count_star", (), T.BIGINT))] for i in range(len(inputs))]
    outputs = []
    for f, kind, i, agg in plans:
        if i is None:  # count(*) without a FILTER
            outputs.append((f, ty.cast(_product([ColRef(c) for c in counts]), f.type)))
            continue
        part = new_field(f.name, agg.type)
        local[i].append((part, agg))
        outputs.append((f, _combine(kind, ColRef(part), [ColRef(c) for j, c in enumerate(counts) if j != i], f.type)))
    sides = [  # (an input that is a cross product itself is rewritten in turn)
        _rewrite(L.Aggregate(inp, tuple(groups) if i == g else (), tuple(local[i]), None), new_field)
        for i, inp in enumerate(inputs)
    ]
    order = ([g] if g is not None else []) + [i for i in range(len(inputs)) if i != g]
    plan = sides[order[0]]
    for i in order[1:]:
        plan = L.Join(plan, sides[i], "inner")
    if g is not None:
        # a group exists only where every other input has rows
        others = [ColRef(c) for j, c in enumerate(counts) if j != g]
        plan = L.Filter(plan, ty.compare("gt", _product(others), Literal(0, T.BIGINT)))
    return L.Project(plan, tuple((f, ColRef(f)) for f, _ in groups) + tuple(outputs))


def _product(counts: list[Expr]) -> Expr:
    out = counts[0]
    for c in counts[1:]:
        out = ty.arith("mul", out, c)
    return out


def _combine(kind: str, value: Expr, others: list[Expr], type_) -> Expr:
    times = _product(others)
    if kind in ("count", "sum"):
        value = ty.cast(ty.arith("mul", value, times), type_)
        if kind == "count":
            return value
    empty = Call("eq", (times, Literal(0, T.BIGINT)), T.BOOLEAN)
    if_empty = Literal(0, type_) if kind == "zero" else Literal(None, type_)
    return Case(((empty, if_empty),), ty.cast(value, type_), type_)
