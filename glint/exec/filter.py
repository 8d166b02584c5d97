"""Filter: keep the rows where the predicate is TRUE."""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ExecutionError
from ..plan.expr import Expr, conjuncts
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
        try:
            mask = predicate_mask(evaluate(self.predicate, batch))
        except ExecutionError:
            return self._conjunct_by_conjunct(batch)
        idx = mask.nonzero().squeeze(1)      # the one size this operator must know
        return batch.take(idx)

    def _conjunct_by_conjunct(self, batch):
        """AND evaluated the way SQL engines do: each conjunct only on the rows the
        ones before it kept, so an error (an overflow) on a row an earlier
        conjunct rejects is never raised. Taken only when evaluating everything
        at once failed."""
        for part in conjuncts(self.predicate):
            mask = predicate_mask(evaluate(part, batch))
            batch = batch.take(mask.nonzero().squeeze(1))
        return batch
