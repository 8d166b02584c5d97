"""The optimizer: named rules, each a pure function plan -> plan, run in order,
timed, and switchable one by one (``Connection(optimizer={"reorder_joins": False})``).
"""

from __future__ import annotations

import time

from glint.errors import NotSupported
from glint.plan import logical as L
from glint.plan.cardinality import prefetch_stats
from glint.plan.rules.aggregate_below_joins import aggregate_below_joins
from glint.plan.rules.cross_product_aggregates import aggregate_cross_products
from glint.plan.rules.factor_disjunctions import factor_disjunctions
from glint.plan.rules.fold_constants import ConstantEvaluator, fold_constants
from glint.plan.rules.prune_columns import prune_columns
from glint.plan.rules.pushdown_predicates import pushdown_predicates
from glint.plan.rules.reorder_joins import reorder_joins
from glint.plan.rules.semi_join_reduction import semi_join_reduction
from glint.plan.rules.simplify_outer_joins import inner_joins_below_outer, simplify_outer_joins

RULES = (
    ("fold_constants", lambda plan, catalog, evaluator: fold_constants(plan, evaluator)),
    ("factor_disjunctions", lambda plan, catalog, evaluator: factor_disjunctions(plan, catalog)),
    ("simplify_outer_joins", lambda plan, catalog, evaluator: simplify_outer_joins(plan, evaluator.strict)),
    ("pushdown_predicates", lambda plan, catalog, evaluator: pushdown_predicates(plan)),
    # filters pushed into a UNION's branches may compare constants there
    ("fold_constants_after_pushdown", lambda plan, catalog, evaluator: fold_constants(plan, evaluator)),
    ("inner_joins_below_outer", lambda plan, catalog, evaluator: inner_joins_below_outer(plan)),
    ("reorder_joins", lambda plan, catalog, evaluator: reorder_joins(plan, catalog)),
    ("pushdown_predicates_after_reorder", lambda plan, catalog, evaluator: pushdown_predicates(plan, False)),
    ("semi_join_reduction", lambda plan, catalog, evaluator: semi_join_reduction(plan, catalog)),
    ("aggregate_below_joins", lambda plan, catalog, evaluator: aggregate_below_joins(plan, catalog)),
    ("aggregate_cross_products", lambda plan, catalog, evaluator: aggregate_cross_products(plan)),
    ("prune_columns", lambda plan, catalog, evaluator: prune_columns(plan)),
)
RULE_NAMES = tuple(n for n, _ in RULES)


def optimize(
    plan: L.LogicalNode, catalog, evaluator: ConstantEvaluator, disabled=(), timings: dict | None = None
) -> L.LogicalNode:
    """The plan after every rule not in ``disabled``; ``evaluator`` computes a
    constant expression's value and names the strict functions (see
    :mod:`glint.plan.rules.fold_constants`)."""
    t0 = time.perf_counter()
    prefetch_stats(plan, catalog)  # the columns' statistics the rules will ask for, side by side
    if timings is not None:
        timings["stats"] = time.perf_counter() - t0
    for name, rule in RULES:
        if name in disabled or name.removesuffix("_after_reorder").removesuffix("_after_pushdown") in disabled:
            continue
        t0 = time.perf_counter()
        plan = rule(plan, catalog, evaluator)
        if timings is not None:
            timings[name] = time.perf_counter() - t0
    validate(plan)
    return plan


def validate(plan: L.LogicalNode) -> None:
    """Every expression reads only columns its node's inputs produce."""

    def check(node):
        avail = {f.id for c in node.children for f in c.schema}
        exprs = node.expressions()
        for e in exprs:
            missing = [f for f in e.fields() if f.id not in avail]
            if missing:
                raise NotSupported(
                    f"a column reference that crosses more than one subquery level "
                    f"({', '.join(f.name for f in missing)})"
                )
        return node

    plan.transform_up(check)
