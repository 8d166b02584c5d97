"""Selectivity arithmetic shared by the cardinality estimator and the join
graph: combining the selectivities of possibly correlated predicates."""

from __future__ import annotations

from glint.plan.expr import Call, Expr

BACKOFF_TERMS = 4  # conjuncts that count in exponential backoff


def backoff(selectivities) -> float:
    """Combined selectivity of predicates that may be correlated: the most
    selective counts fully, the next with exponent 1/2, then 1/4 and 1/8.

    >>> backoff([0.1, 0.1, 0.1]) == 0.1 * 0.1 ** 0.5 * 0.1 ** 0.25
    True
    >>> backoff([])
    1.0
    """
    s, e = 1.0, 1.0
    for x in sorted(selectivities)[:BACKOFF_TERMS]:
        s *= x**e
        e /= 2
    return s


def strip_cast(e: Expr) -> Expr:
    while isinstance(e, Call) and e.fn == "cast":
        e = e.args[0]
    return e
