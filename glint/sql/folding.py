"""Constant folding while binding (a LIMIT, a window offset, STRING_AGG's
separator, a quantile): the optimizer's folding rule with the executor's own
evaluator, so that a constant means what it will mean when the query runs."""

from __future__ import annotations

from glint.functions.evaluate import CONSTANT_EVALUATOR
from glint.plan.expr import Expr
from glint.plan.rules.fold_constants import fold


def fold_expr(e: Expr) -> Expr:
    """e with its constant parts folded."""
    return fold(e, CONSTANT_EVALUATOR)
