"""Filter: keep the rows where the predicate is TRUE, chunk by chunk."""

from __future__ import annotations

from dataclasses import dataclass

from glint.columnar.column import Batch
from glint.errors import ExecutionError
from glint.exec.base import PhysicalNode
from glint.functions.evaluate import evaluate
from glint.functions.fused_predicate import fused_mask
from glint.functions.validity import predicate_mask
from glint.kernels.backend import triton_enabled
from glint.plan.expr import Expr, conjuncts


@dataclass(frozen=True, slots=True, eq=False)
class FilterExec(PhysicalNode):
    child: PhysicalNode
    predicate: Expr
    est_rows: float = 0.0
    # the ids of the columns the operator above reads (None: every column); the others,
    # read only by the predicate, are not gathered
    keep: frozenset[int] | None = None

    def describe(self):
        return f"Filter {self.predicate!r}"

    def stream(self, ctx, inp):
        fused = ctx.settings.fused_filters
        for batch in inp:
            yield filter_batch(self.predicate, batch, fused, self.keep)


def filter_batch(predicate: Expr, batch, fused: bool = False, keep=None, mask=None):
    """The rows where ``predicate`` is TRUE (of the columns whose ids are in
    ``keep``, when given; ``mask``: the predicate's, where the caller has it).
    With ``fused``, on CUDA, the predicate runs as one generated kernel where
    it compiles (glint.functions.fused_predicate: its comparisons raise no
    errors)."""
    try:
        if mask is None:
            mask = filter_mask(predicate, batch, fused)
    except ExecutionError:
        return _columns(_conjunct_by_conjunct(predicate, batch), keep)
    return _columns(batch, keep).take(mask.nonzero().squeeze(1))  # the one size this operator must know


def _columns(batch: Batch, keep) -> Batch:
    if keep is None or len(keep) == len(batch.columns):
        return batch
    return Batch({k: c for k, c in batch.columns.items() if k in keep}, batch.num_rows, batch.device)


def filter_mask(predicate: Expr, batch, fused: bool = False):
    """The boolean mask of the rows where ``predicate`` is TRUE (raises what
    evaluating it over every row raises)."""
    mask = None
    if fused and batch.num_rows and batch.device.type == "cuda" and triton_enabled():
        mask = fused_mask(predicate, batch)  # (None where the predicate does not compile)
    if mask is None:
        mask = predicate_mask(evaluate(predicate, batch))
    return mask


def _conjunct_by_conjunct(predicate: Expr, batch):
    """AND evaluated the way SQL engines do: each conjunct only on the rows the
    ones before it kept, so an error (an overflow) on a row an earlier
    conjunct rejects is never raised. Taken only when evaluating everything
    at once failed."""
    for part in conjuncts(predicate):
        mask = predicate_mask(evaluate(part, batch))
        batch = batch.take(mask.nonzero().squeeze(1))
    return batch
