"""Cross products too large to hold, found when a query is planned.

A join without conditions (``FROM a, b`` with nothing relating them, or
``CROSS JOIN``) has exactly the product of its inputs' rows, and its inputs'
rows are often known exactly: a table's rows, a VALUES list's, an aggregate
without GROUP BY's one row. When such a product must be held whole, as the
query's result or as the side a join keeps in memory, and its bytes pass a
limit (the ``cross_product_limit`` setting), the query cannot finish: it is
refused before it runs, with the rows and bytes it would take. Estimated
sizes never refuse a query: a join with conditions, or a filter, makes the
size unknown and the check silent.

>>> from glint.columnar import types as T
>>> from glint.plan.expr import Field
>>> class Cat:
...     def table(self, name):
...         return type("T", (), {"num_rows": 100_000})()
>>> scans = [L.Scan(n, ("x",), (Field(i, "x", T.BIGINT),)) for i, n in enumerate("abc")]
>>> plan = L.Join(L.Join(scans[0], scans[1], "inner"), scans[2], "inner")
>>> exact_rows(plan, Cat())
1000000000000000
>>> print(oversized_cross_product(plan, Cat(), 1 << 30))
the query's result: a cross product of 1,000,000,000,000,000 rows (about 21827.9 TiB)
>>> oversized_cross_product(L.Limit(plan, 10, 0), Cat(), 1 << 30) is None
True
>>> pairs = L.Join(scans[0], scans[1], "inner")
>>> both = L.Join(pairs, L.Join(scans[2], scans[0], "inner"), "inner")
>>> print(oversized_cross_product(L.Limit(both, 10, 0), Cat(), 1 << 30))
the side a join without equality conditions holds in memory: a cross product of 10,000,000,000 rows (about 149.0 GiB)
"""

from __future__ import annotations

from glint.plan import logical as L
from glint.plan.cardinality import Estimator
from glint.plan.expr import Call, conjuncts
from glint.runtime.memory import format_bytes

_STRING_BYTES = 16  # a string value's bytes in a result, a guess (its length is not known)


def exact_rows(node: L.LogicalNode, catalog) -> int | None:
    """The node's row count when its inputs' counts give it exactly (tables,
    VALUES, aggregates without GROUP BY, projections and joins without
    conditions of those), else None."""
    if isinstance(node, L.Scan):
        return int(catalog.table(node.table).num_rows)
    if isinstance(node, L.OneRow):
        return 1
    if isinstance(node, L.Values):
        return len(node.rows)
    if isinstance(node, L.Aggregate):
        return 1 if not node.groups and node.grouping is None else None
    if isinstance(node, (L.Project, L.Sort, L.Window)):
        return exact_rows(node.child, catalog)
    if isinstance(node, L.Limit):
        child = exact_rows(node.child, catalog)
        if child is None or node.limit is None:
            return child
        return max(0, min(child - (node.offset or 0), node.limit))
    if _is_cross(node):
        left = exact_rows(node.left, catalog)
        right = exact_rows(node.right, catalog) if left is not None else None
        return None if right is None else left * right
    return None


def _is_cross(node) -> bool:
    return isinstance(node, L.Join) and node.kind == "inner" and node.condition is None


def row_bytes(fields) -> int:
    """About how many bytes a row of these columns takes when held: 8 a
    value, 16 a string or a 128-bit number."""
    total = 0
    for f in fields:
        t = f.type
        wide = t.is_string or t.kind == "HUGEINT" or (t.is_decimal and t.precision > 18)
        total += 16 if wide else 8
    return max(total, 1)


def _holds_cross(node) -> bool:
    while isinstance(node, (L.Project, L.Sort, L.Window)):
        node = node.child
    return _is_cross(node)


def oversized_cross_product(plan: L.LogicalNode, catalog, limit: int) -> str | None:
    """Where ``plan`` holds a cross product of more than ``limit`` bytes whole,
    described (None when it holds none)."""
    return oversized(held_cross_products(plan, catalog), limit)


def oversized(held: tuple, limit: int) -> str | None:
    """The first of :func:`held_cross_products` larger than ``limit`` bytes, described."""
    return next((where for nbytes, where in held if nbytes > limit), None)


def held_cross_products(plan: L.LogicalNode, catalog) -> tuple[tuple[int, str], ...]:
    """(bytes, description) of each cross product ``plan`` holds whole, of a
    known size: its result, and the side each join without equality conditions
    holds in memory, in the order :func:`oversized_cross_product` reports them.
    Found once per plan: a plan made again for the same query text reuses it
    (the tables' sizes are the plan's own), and each run compares it with the
    memory it may use then."""
    held = []
    if _holds_cross(plan):
        rows = exact_rows(plan, catalog)
        if rows is not None:
            held.append((rows * row_bytes(plan.schema), f"the query's result: {_describe(rows, plan.schema)}"))
    estimator = Estimator(catalog)

    def visit(node):
        if isinstance(node, L.Join) and not _has_equality(node):
            # a join without equality keys runs as a nested loop and holds its
            # smaller input whole (as the physical planner picks it)
            right = node.kind == "single" or estimator.rows(node.right) <= estimator.rows(node.left)
            held_side = node.right if right else node.left
            rows = exact_rows(held_side, catalog) if _holds_cross(held_side) else None
            if rows is not None:
                where = "the side a join without equality conditions holds in memory"
                held.append((rows * row_bytes(held_side.schema), f"{where}: {_describe(rows, held_side.schema)}"))
        return node

    plan.transform_up(visit)
    return tuple(held)


def _has_equality(join: L.Join) -> bool:
    """Whether a join's condition has an equality between its two inputs (a
    key: the join is not a nested loop)."""
    left, right = {f.id for f in join.left.schema}, {f.id for f in join.right.schema}
    for c in conjuncts(join.condition):
        if isinstance(c, Call) and c.fn == "eq":
            fa, fb = ({f.id for f in a.fields()} for a in c.args)
            if (fa or fb) and ((fa <= left and fb <= right) or (fa <= right and fb <= left)):
                return True
    return False


def _describe(rows: int, schema) -> str:
    return f"a cross product of {rows:,} rows (about {format_bytes(rows * row_bytes(schema))})"
