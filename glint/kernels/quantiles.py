"""Positions of quantiles within sorted groups, as DuckDB 1.4 computes them
(QuantileValue / Interpolator).

Rows are sorted by (group, value); a group of n values starts at the sum of
the sizes of the groups before it.

- discrete (QUANTILE_DISC, MEDIAN of non-numbers): the value at position
  max(1, n - floor(n - n*q)) - 1; for a DECIMAL q = num / den that floor is
  taken exactly in integers, for a DOUBLE q in doubles;
- continuous (QUANTILE_CONT, MEDIAN): RN = (n - 1) * q in doubles, the values
  at floor(RN) and ceil(RN), and RN - floor(RN) to interpolate between them.

>>> import torch
>>> n = torch.tensor([4, 5, 1, 0])
>>> discrete_position(n, 0.25, 1, 4).tolist(), discrete_position(n, 0.5, None, 1).tolist()
([0, 1, 0, 0], [1, 2, 0, 0])
>>> lo, hi, frac = continuous_position(n, 0.3)
>>> lo.tolist(), hi.tolist(), [round(f, 6) for f in frac.tolist()]
([0, 1, 0, 0], [1, 2, 0, 0], [0.9, 0.2, 0.0, 0.0])
"""

from __future__ import annotations

import torch

from glint.kernels import wide as W
from glint.kernels.sort import lexsort


def sort_in_groups(gid: torch.Tensor, key: torch.Tensor, descending: bool) -> torch.Tensor:
    """Row order by group, then by ``key`` (an integer or float tensor that
    orders as the values do) ascending or descending; ties keep row order."""
    return lexsort([(gid, None, False, False), (key, None, descending, False)])


def group_starts(counts: torch.Tensor) -> torch.Tensor:
    """Where each group's rows begin in the sorted order."""
    return torch.cumsum(counts, 0) - counts


def discrete_position(counts: torch.Tensor, q: float, num: int | None, den: int) -> torch.Tensor:
    """Position (0-based, within each group) of the discrete quantile; 0 for
    empty groups."""
    n = counts.long()
    if num is not None:
        # floor(n * (den - num) / den), exactly (n * (den - num) can pass 64 bits)
        floored = W.narrow(W.floordiv(W.mul(n, torch.full_like(n, den - num)), den))
    else:
        nd = n.double()
        floored = torch.floor(nd - nd * q).long()
    return ((n - floored).clamp(min=1) - 1).clamp(min=0)


def continuous_position(counts: torch.Tensor, q: float):
    """(lower position, upper position, fraction between them) per group."""
    rn = (counts.long() - 1).clamp(min=0).double() * q
    lo = torch.floor(rn)
    hi = torch.ceil(rn)
    return lo.long(), hi.long(), rn - lo
