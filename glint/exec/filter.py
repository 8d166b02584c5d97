"""Filter: keep the rows where the predicate is TRUE."""
from __future__ import annotations

from dataclasses import dataclass

from ..plan.expr import Expr
from .base import PhysicalNode
from .expr_eval import evaluate, predicate_mask


@dataclass(frozen=True, slots=True, eq=False)
class FilterExec(PhysicalNode):
    child: PhysicalNode
    predicate: Expr
    est_rows: float = 0.0

    def describe(self):
        return f"Filter {self.predicate!r}"

    def execute(self, ctx, batch):
        mask = predicate_mask(evaluate(self.predicate, batch))
        idx = mask.nonzero().squeeze(1)      # the one size this operator must know
        return batch.take(idx)
