"""generate_series / range: one column of evenly spaced values, made on the
device chunk by chunk.

>>> from glint.columnar import types as T
>>> from glint.exec.base import ExecContext
>>> from glint.plan.expr import Field
>>> ctx = ExecContext("cpu", None)
>>> ctx.chunk_rows = 4
>>> f = Field(1, "range", T.BIGINT)
>>> [b[1].data.tolist() for b in SeriesExec(10, -3, 6, f).stream(ctx)]
[[10, 7, 4, 1], [-2, -5]]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar.column import Batch, Column
from glint.exec.base import PhysicalNode
from glint.plan.expr import Field

_WRAP = 2**64


@dataclass(frozen=True, slots=True, eq=False)
class SeriesExec(PhysicalNode):
    start: int
    step: int
    count: int
    field: Field
    est_rows: float = 0.0

    def describe(self):
        return f"Series {self.count:,} values from {self.start} by {self.step}"

    def stream(self, ctx):
        step_rows = max(1, ctx.chunk_rows)
        for first in range(0, max(self.count, 1), step_rows):
            n = max(0, min(self.count - first, step_rows))
            # start + step * k in int64 arithmetic, which wraps: every value is
            # in range, so the wrapped intermediate products give exact results
            base = _as_int64(self.start + self.step * first)
            k = torch.arange(n, dtype=torch.int64, device=ctx.device)
            data = k.mul_(_as_int64(self.step)).add_(base)
            yield Batch({self.field.id: Column(self.field.type, data)}, n, ctx.device)


def _as_int64(v: int) -> int:
    """v as a two's-complement int64 (wrapped)."""
    v %= _WRAP
    return v - _WRAP if v >= 2**63 else v
