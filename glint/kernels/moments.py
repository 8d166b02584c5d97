"""Per-group count, mean and sum of squared deviations (M2) of doubles: the
state of VAR_* and STDDEV_*, and how such states combine.

DuckDB streams each value through Welford's update. Here a chunk's groups
are computed at once by the corrected two-pass method (mean, then the
deviations from it and their sum as a correction: Chan, Golub and LeVeque),
and states merge by the parallel formula generalised to k states per group.
Both are at least as accurate as Welford's running update; results agree
with DuckDB's to within a few units in the last place, except where DuckDB's
own rounding dominates. When a plain sum overflows, the first pass sums
x / n instead, so a mean of values near the largest double does not
overflow where DuckDB's running mean does not.

>>> import torch
>>> from glint.kernels.groupby import Slots
>>> s = Slots(torch.tensor([0, 0, 0, 1]), 2)
>>> n, mean, m2 = moments(torch.tensor([1.0, 2.0, 4.0, 5.0]), None, s)
>>> n.tolist(), mean.tolist(), m2.tolist()
([3, 1], [2.3333333333333335, 5.0], [4.666666666666666, 0.0])
>>> a = moments(torch.tensor([1.0, 2.0]), None, Slots(torch.tensor([0, 0]), 1))
>>> b = moments(torch.tensor([4.0]), None, Slots(torch.tensor([0]), 1))
>>> [t.tolist() for t in merge(*(torch.cat([x, y]) for x, y in zip(a, b)), Slots(torch.tensor([0, 0]), 1))]
[[3], [2.3333333333333335], [4.666666666666666]]
"""

from __future__ import annotations

import torch


def _sum(values: torch.Tensor, slots) -> torch.Tensor:
    return slots.fold(slots.scatter_add(values), "sum")


def moments(x: torch.Tensor, valid: torch.Tensor | None, slots):
    """(count, mean, M2) of the valid float64 values of each group (mean and
    M2 are 0 where a group has no values; NaN and infinities propagate)."""
    zero = torch.zeros_like(x)
    ok = torch.ones_like(x, dtype=torch.bool) if valid is None else valid
    n = _sum(ok.long(), slots)
    nd = n.double().clamp(min=1.0)
    xs = torch.where(ok, x, zero)
    total = _sum(xs, slots)
    # the plain sum when it is finite (exact for integers), else the sum of x / n
    mean0 = torch.where(torch.isfinite(total), total / nd, _sum(xs / nd[slots.gid], slots))
    d = torch.where(ok, xs - mean0[slots.gid], zero)
    c = _sum(d, slots)
    m2 = _sum(d * d, slots) - c * c / nd
    return n, mean0 + c / nd, _non_negative(m2)


def merge(n: torch.Tensor, mean: torch.Tensor, m2: torch.Tensor, slots):
    """Combine the (count, mean, M2) states of several rows per group of ``slots``."""
    has = n > 0
    zero = torch.zeros_like(mean)
    total = _sum(n, slots)
    nd = total.double().clamp(min=1.0)
    w = n.double() / nd[slots.gid]
    mean0 = _sum(torch.where(has, w * mean, zero), slots)
    d = torch.where(has, mean - mean0[slots.gid], zero)
    c = _sum(n.double() * d, slots)
    m2 = _sum(torch.where(has, m2 + n.double() * d * d, zero), slots) - c * c / nd
    return total, mean0 + c / nd, _non_negative(m2)


def _non_negative(m2: torch.Tensor) -> torch.Tensor:
    """Rounding can leave a sum of squares a hair below zero; NaN stays NaN."""
    return torch.where(m2 < 0, torch.zeros_like(m2), m2)
