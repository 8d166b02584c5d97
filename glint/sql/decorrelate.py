"""Decorrelation of subqueries whose WHERE reads the outer query.

The binder pulls a correlated subquery's correlated WHERE conjuncts out of it
and applies them as the condition of the join that computes the subquery
(glint.sql.binder). A subquery that aggregates cannot take its correlation as
a join condition after the fact: its groups must be the outer rows' values.

- When every correlated condition is an equality between an inner and an
  outer expression, the aggregate is grouped by the inner sides, and the
  outer rows are joined to the groups on the equalities (the classic rewrite).
- Otherwise (an OR, a range, any other condition) the subquery becomes a
  dependent join, as DuckDB flattens it: the distinct values of the outer
  columns it reads (its *domain*) are joined to the subquery's rows on the
  whole condition, the aggregate is grouped by those values, and the outer
  rows are joined to the groups on them, NULLs matching NULLs. The domain is
  known only once the outer query's plan is: :class:`Domain` holds its place
  in the subquery's plan until :meth:`Domain.attach` puts it there.

A group an outer row does not find is an aggregate over no rows: the
scalar-subquery binder gives the row that value (COUNT's 0) through
``Correlated.groups[0]``, a column that is never NULL in a found group.
"""

from __future__ import annotations

from glint.columnar import types as T
from glint.errors import NotSupported
from glint.plan import logical as L
from glint.plan import typing as ty
from glint.plan.expr import AggCall, Call, ColRef, Expr, Field, Literal, conjuncts, substitute
from glint.plan.fresh import fresh_copy
from glint.plan.rules.factor_disjunctions import factor_expr


class Correlated:
    """What a subquery's binding pulled out: the correlation conditions, the
    fields of a correlated aggregate's groups (the first never NULL in a
    found group), its value over no rows, and the domain of a dependent join."""

    __slots__ = ("conditions", "groups", "empty_value", "domain")

    def __init__(self, conditions, groups, empty_value, domain=None):
        self.conditions = conditions
        self.groups = groups
        self.empty_value = empty_value
        self.domain = domain

    def attach(self, outer_plan: L.LogicalNode, plan: L.LogicalNode, new_field) -> L.LogicalNode:
        """The subquery's plan, ready to be joined to ``outer_plan``."""
        return self.domain.attach(outer_plan, plan, new_field) if self.domain is not None else plan


class Domain:
    """The distinct values of the outer columns ``outer`` that a subquery
    reads, as the columns of ``placeholder`` (an empty VALUES that holds their
    place in the subquery's plan)."""

    __slots__ = ("placeholder", "outer")

    def __init__(self, placeholder: L.Values, outer: tuple[Field, ...]):
        self.placeholder = placeholder
        self.outer = outer

    def attach(self, outer_plan: L.LogicalNode, plan: L.LogicalNode, new_field) -> L.LogicalNode:
        have = {f.id for f in outer_plan.schema}
        if any(o.id not in have for o in self.outer):
            raise NotSupported(
                "a correlated subquery whose condition (other than equalities) reads a query two or more levels out"
            )
        copy, mapping = fresh_copy(outer_plan, new_field)
        groups = tuple((d, ColRef(mapping[o.id])) for d, o in zip(self.placeholder.fields, self.outer))
        domain = L.Aggregate(copy, groups, ())
        return plan.transform_up(lambda n: domain if n is self.placeholder else n)


def local_conjuncts(e: Expr, outer_ids: set[int]) -> tuple[list[Expr], list[Expr]]:
    """(the conjuncts of ``e`` that read only the subquery, those that read the
    outer query), after the conjuncts every branch of an OR shares are pulled
    out of it: ``(i.a = o.a AND x) OR (i.a = o.a AND y)`` correlates by the
    equality alone, and ``x OR y`` filters the subquery's rows."""
    inner, outer = [], []
    for c in conjuncts(factor_expr(e)):
        (outer if {f.id for f in c.fields()} & outer_ids else inner).append(c)
    return inner, outer


def split_correlation(conds: list[Expr], outer_ids: set[int]):
    """[(inner expr, outer expr)] when every condition is an equality between
    an expression of the subquery and one of the outer query, else None."""
    pairs = []
    for c in conds:
        if not (isinstance(c, Call) and c.fn == "eq"):
            return None
        a, b = c.args
        ia, ib = _ids(a), _ids(b)
        if ia and not (ia & outer_ids) and ib and ib <= outer_ids:
            pairs.append((a, b))
        elif ib and not (ib & outer_ids) and ia and ia <= outer_ids:
            pairs.append((b, a))
        else:
            return None
    return pairs


def dependent_join(conds: list[Expr], outer_ids: set[int], plan: L.LogicalNode, new_field):
    """(the subquery's rows joined to its domain on ``conds``, the domain, and
    [(domain column, outer column)])."""
    outer = sorted({f for c in conds for f in c.fields() if f.id in outer_ids}, key=lambda f: f.id)
    cols = tuple(new_field(o.name, o.type) for o in outer)
    mapping = {o.id: ColRef(d) for o, d in zip(outer, cols)}
    cond = substitute(_conjoin([c for c in conds]), mapping)
    domain = Domain(L.Values((), cols), tuple(outer))
    return L.Join(domain.placeholder, plan, "inner", cond), domain, list(zip(cols, outer))


def found_marker(new_field) -> tuple[Field, AggCall]:
    """An aggregate that is never NULL in a group: COUNT(*)."""
    return new_field("found", T.BIGINT), AggCall("count_star", (), T.BIGINT)


def null_safe_equal(a: Expr, b: Expr) -> list[Expr]:
    """Conditions that hold when ``a IS NOT DISTINCT FROM b``, as equalities a
    hash join takes as keys: the values with NULLs replaced by one of the
    type's values, and whether each is NULL."""
    t = ty.common_of([a, b], "correlation")
    zero = _some_value(t)
    if zero is None:
        return [Call("is_not_distinct", (ty.cast(a, t), ty.cast(b, t)), T.BOOLEAN)]

    def filled(e):
        return Call("coalesce", (ty.cast(e, t), zero), t)

    is_null_a = Call("is_null", (a,), T.BOOLEAN)
    is_null_b = Call("is_null", (b,), T.BOOLEAN)
    return [ty.compare("eq", filled(a), filled(b)), ty.compare("eq", is_null_a, is_null_b)]


def _some_value(t: T.DataType) -> Literal | None:
    if t.kind in ("INTEGER", "BIGINT", "HUGEINT", "DECIMAL", "DATE", "TIMESTAMP"):
        return Literal(0, t)
    if t.kind == "DOUBLE":
        return Literal(0.0, t)
    if t.kind == "VARCHAR":
        return Literal("", t)
    if t.kind == "BOOLEAN":
        return Literal(False, t)
    return None


def _ids(e: Expr) -> set[int]:
    return {f.id for f in e.fields()}


def _conjoin(parts: list[Expr]) -> Expr:
    out = parts[0]
    for p in parts[1:]:
        out = Call("and", (out, p), T.BOOLEAN)
    return out
