"""Per-group central moments beyond the variance, and co-moments of pairs:
the states of SKEWNESS / KURTOSIS (count, mean, M2, M3, M4 with Mk the sum
of (x - mean)**k) and of CORR / COVAR_* / REGR_* (count, the means of y and
x, their M2 and the co-moment C = sum (x - mean_x) * (y - mean_y)).

A chunk's groups are computed at once, two-pass, with each group's values
first shifted by one of them (its first): a group of equal values then has
moments of exactly 0 however its values round, as DuckDB's streaming
(Welford) update has. States merge by shifting every state's moments to the
combined mean (the binomial expansion of sum ((x - m_i) + d_i)**k with d_i =
m_i - m, exact in real arithmetic), for any number of states per group at
once; the combined mean is taken relative to the first state's, so that
equal means stay exact.

>>> import torch
>>> from glint.kernels.groupby import Slots
>>> s = Slots(torch.tensor([0, 0, 0, 0, 1]), 2)
>>> n, mean, m2, m3, m4 = moments4(torch.tensor([1.0, 2.0, 4.0, 8.0, 0.1], dtype=torch.float64), None, s)
>>> n.tolist(), mean.tolist(), m2.tolist(), m3.tolist(), m4.tolist()
([4, 1], [3.75, 0.1], [28.75, 0.0], [50.625, 0.0], [392.828125, 0.0])
>>> a = moments4(torch.tensor([1.0, 2.0], dtype=torch.float64), None, Slots(torch.tensor([0, 0]), 1))
>>> b = moments4(torch.tensor([4.0, 8.0], dtype=torch.float64), None, Slots(torch.tensor([0, 0]), 1))
>>> [t.tolist() for t in merge4(*(torch.cat([x, y]) for x, y in zip(a, b)), Slots(torch.tensor([0, 0]), 1))]
[[4], [3.75], [28.75], [50.625], [392.828125]]
"""

from __future__ import annotations

import torch

from glint.kernels import groupby as G


def _sum(values: torch.Tensor, slots) -> torch.Tensor:
    return slots.fold(slots.scatter_add(values), "sum")


def _first_valid(x: torch.Tensor, ok: torch.Tensor, slots) -> torch.Tensor:
    """Per group, the value at its first row that ``ok`` keeps (0 for none)."""
    n = x.shape[0]
    if n == 0:
        return torch.zeros(slots.n, dtype=x.dtype, device=x.device)
    pos = torch.where(ok, torch.arange(n, device=x.device), torch.full((n,), n, device=x.device))
    first = G.extreme(pos, slots, False).clamp(0, n - 1)
    has = _sum(ok.long(), slots) > 0
    return torch.where(has, x[first], torch.zeros_like(x[first]))


def _centered(x: torch.Tensor, ok: torch.Tensor, slots, nd: torch.Tensor):
    """(mean, x - mean for kept rows, 0 elsewhere) of each group, two-pass
    over the values shifted by the group's first one."""
    zero = torch.zeros_like(x)
    shift = _first_valid(x, ok, slots)
    d = torch.where(ok, x - shift[slots.gid], zero)
    mean_d = _sum(d, slots) / nd
    d = torch.where(ok, d - mean_d[slots.gid], zero)
    c = _sum(d, slots) / nd  # the first pass's rounding, corrected
    d = torch.where(ok, d - c[slots.gid], zero)
    return shift + (mean_d + c), d


def moments4(x: torch.Tensor, valid: torch.Tensor | None, slots):
    """(count, mean, M2, M3, M4) of the valid float64 values of each group (0
    where a group has none; NaN and infinities propagate)."""
    ok = torch.ones_like(x, dtype=torch.bool) if valid is None else valid
    n = _sum(ok.long(), slots)
    nd = n.double().clamp(min=1.0)
    mean, d = _centered(x, ok, slots, nd)
    d2 = d * d
    return n, mean, _sum(d2, slots), _sum(d2 * d, slots), _sum(d2 * d2, slots)


def _merged_mean(n: torch.Tensor, mean: torch.Tensor, slots, total: torch.Tensor):
    """The combined mean of each group's states, relative to its first state's
    mean (equal means stay exact), and each state's distance from it."""
    has = n > 0
    base = _first_valid(mean, has, slots)
    nd = total.double().clamp(min=1.0)
    rel = torch.where(has, mean - base[slots.gid], torch.zeros_like(mean))
    m = base + _sum(n.double() * rel, slots) / nd
    d = torch.where(has, mean - m[slots.gid], torch.zeros_like(mean))
    return m, d


def merge4(n, mean, m2, m3, m4, slots):
    """Combine (count, mean, M2, M3, M4) states of several rows per group."""
    total = _sum(n, slots)
    m, d = _merged_mean(n, mean, slots, total)
    nd = n.double()
    zero = torch.zeros_like(mean)
    has = n > 0

    def part(v):
        return _sum(torch.where(has, v, zero), slots)

    d2 = d * d
    return (
        total,
        m,
        part(m2 + nd * d2),
        part(m3 + 3 * d * m2 + nd * d2 * d),
        part(m4 + 4 * d * m3 + 6 * d2 * m2 + nd * d2 * d2),
    )


def comoments(y: torch.Tensor, x: torch.Tensor, ok: torch.Tensor, slots):
    """(count, mean_y, mean_x, M2_y, M2_x, C) over the rows ``ok`` keeps
    (pairs where both values are present)."""
    n = _sum(ok.long(), slots)
    nd = n.double().clamp(min=1.0)
    my, dy = _centered(y, ok, slots, nd)
    mx, dx = _centered(x, ok, slots, nd)
    return n, my, mx, _sum(dy * dy, slots), _sum(dx * dx, slots), _sum(dx * dy, slots)


def merge_comoments(n, my, mx, m2y, m2x, c, slots):
    """Combine (count, mean_y, mean_x, M2_y, M2_x, C) states per group."""
    total = _sum(n, slots)
    new_my, dy = _merged_mean(n, my, slots, total)
    new_mx, dx = _merged_mean(n, mx, slots, total)
    nd = n.double()
    zero = torch.zeros_like(my)
    has = n > 0

    def part(v):
        return _sum(torch.where(has, v, zero), slots)

    return (
        total,
        new_my,
        new_mx,
        part(m2y + nd * dy * dy),
        part(m2x + nd * dx * dx),
        part(c + nd * dx * dy),
    )
