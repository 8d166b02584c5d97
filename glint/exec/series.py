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
from glint.errors import ExecutionError
from glint.exec.base import PhysicalNode
from glint.functions.evaluate import evaluate
from glint.plan.expr import Expr, Field

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


@dataclass(frozen=True, slots=True, eq=False)
class SeriesPerRowExec(PhysicalNode):
    """Each input row once per value of its own series (glint.plan.logical.SeriesPerRow),
    made in pieces of at most a chunk: a row's values may span several."""

    child: PhysicalNode
    start: Expr
    stop: Expr
    step: Expr
    inclusive: bool
    field: Field
    keep_empty: bool = False
    est_rows: float = 0.0

    def describe(self):
        fn = "generate_series" if self.inclusive else "range"
        return f"SeriesPerRow {fn}({self.start!r}, {self.stop!r}, {self.step!r})"

    def stream(self, ctx, child):
        for b in child:
            yield from self._expand(ctx, b)

    def _expand(self, ctx, b: Batch):
        start, stop, step = (evaluate(e, b) for e in (self.start, self.stop, self.step))
        valid = start.validity() & stop.validity() & step.validity()
        s, e, st = start.data.long(), stop.data.long(), step.data.long()
        if bool((valid & (st == 0)).any()):
            raise ExecutionError("interval cannot be 0!")
        counts = series_counts(s, e, st, valid, self.inclusive)
        empty = None
        if self.keep_empty:
            empty = counts == 0
            counts = torch.where(empty, torch.ones_like(counts), counts)
        ends = torch.cumsum(counts, 0)
        # the series' lengths come from the row's values: the run's queued overflow tests are
        # read first, so that a value that overflowed cannot ask for a series without end
        ctx.verify_checks()
        total = int(ends[-1]) if ends.numel() else 0
        piece = max(1, ctx.chunk_rows)
        for p0 in range(0, total, piece):
            pos = torch.arange(p0, min(total, p0 + piece), dtype=torch.int64, device=ctx.device)
            row = torch.searchsorted(ends, pos, right=True)
            k = pos - (ends[row] - counts[row])
            values = s[row] + k * st[row]
            out = b.take(row)
            value_valid = None if empty is None else ~empty[row]
            out.columns[self.field.id] = Column(self.field.type, values, value_valid)
            yield out
        if total == 0:
            out = b.take(torch.zeros(0, dtype=torch.int64, device=ctx.device))
            out.columns[self.field.id] = Column(self.field.type, torch.zeros(0, dtype=torch.int64, device=ctx.device))
            yield out


def series_counts(start, stop, step, valid, inclusive: bool) -> torch.Tensor:
    """How many values each row's series has (0 where an argument is NULL or
    the step moves away from the stop).

    >>> t = lambda *v: torch.tensor(v)
    >>> series_counts(t(0, 10, 1, 5), t(3, 0, 7, 5), t(1, -3, 2, 1), t(True, True, True, True), False).tolist()
    [3, 4, 3, 0]
    """
    span = torch.where(step > 0, stop - start, start - stop)
    a = step.abs().clamp(min=1)
    if inclusive:
        n = torch.where(span >= 0, torch.div(span, a, rounding_mode="floor") + 1, torch.zeros_like(span))
    else:
        n = torch.where(span > 0, torch.div(span + a - 1, a, rounding_mode="floor"), torch.zeros_like(span))
    return torch.where(valid, n, torch.zeros_like(n))
