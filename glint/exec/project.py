"""Projection: compute the output columns from each input chunk."""

from __future__ import annotations

from dataclasses import dataclass

from glint.columnar.column import Batch
from glint.exec.base import PhysicalNode
from glint.functions.evaluate import evaluate
from glint.plan.expr import ColRef, Expr, Field


@dataclass(frozen=True, slots=True, eq=False)
class ProjectExec(PhysicalNode):
    child: PhysicalNode
    exprs: tuple[tuple[Field, Expr], ...]
    est_rows: float = 0.0

    def describe(self):
        return "Project " + ", ".join(
            repr(f) if isinstance(e, ColRef) and e.field == f else f"{e!r} AS {f!r}" for f, e in self.exprs
        )

    def stream(self, ctx, inp):
        for batch in inp:
            yield project_batch(self.exprs, batch)


def project_batch(exprs, batch: Batch) -> Batch:
    return Batch({f.id: evaluate(e, batch) for f, e in exprs}, batch.num_rows, batch.device)
