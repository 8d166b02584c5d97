"""Grouping and per-group reductions on int64 group ids.

Exact sums of int64 values (DECIMAL, integers) split each value into two
32-bit limbs summed separately in int64, so no group sum can overflow before
it is recombined and checked (GPU-NOTES, "Exact decimals").

>>> import torch
>>> gid, n, first = group_ids(torch.tensor([7, 3, 7, 3, 9]))
>>> gid.tolist(), n, first.tolist()
([1, 0, 1, 0, 2], 3, [1, 0, 4])
>>> exact_sum(torch.tensor([2**62, 2**62, 5]), torch.tensor([0, 0, 1]), 2).tolist()
[[2147483648, 0], [0, 5]]
"""
from __future__ import annotations

import torch

LIMB_BITS = 32
LIMB_MASK = (1 << LIMB_BITS) - 1


DENSE_LIMIT = 1 << 26


def key_range(key: torch.Tensor) -> tuple[int, int]:
    """(min, max) of a non-empty int64 tensor with one host synchronisation."""
    lo, hi = torch.stack([key.min(), key.max()]).tolist()
    return lo, hi


def group_ids(key: torch.Tensor):
    """(group id per row, number of groups, first row of each group). Groups
    are numbered in ascending key order. Keys spanning a small range are
    grouped by direct addressing (no sort); others through torch.unique."""
    n = key.shape[0]
    dev = key.device
    rows = torch.arange(n, device=dev)
    if n == 0:
        return key, 0, key
    lo, hi = key_range(key)
    span = hi - lo + 1
    if span <= max(2 * n, 1 << 16) and span <= DENSE_LIMIT:
        k = key - lo
        present = torch.zeros(span, dtype=torch.int64, device=dev)
        present.index_fill_(0, k, 1)
        slot = torch.cumsum(present, 0)
        groups = int(slot[-1])
        gid = slot[k] - 1
    else:
        uniq, gid = torch.unique(key, return_inverse=True)
        groups = uniq.shape[0]
    first = torch.full((groups,), n, dtype=torch.int64, device=dev)
    first.scatter_reduce_(0, gid, rows, reduce="amin", include_self=True)
    return gid, groups, first


def count(gid: torch.Tensor, n: int, mask: torch.Tensor | None = None) -> torch.Tensor:
    ones = torch.ones_like(gid) if mask is None else mask.long()
    return torch.zeros(n, dtype=torch.int64, device=gid.device).scatter_add_(0, gid, ones)


def exact_sum(values: torch.Tensor, gid: torch.Tensor, n: int) -> torch.Tensor:
    """Per-group sums of int64 values as (n, 2) [hi, lo] with sum = hi*2**32 + lo, 0 <= lo < 2**32."""
    v = values.long()
    lo = v & LIMB_MASK
    hi = v >> LIMB_BITS
    z = torch.zeros(n, dtype=torch.int64, device=v.device)
    lo_s = z.clone().scatter_add_(0, gid, lo)
    hi_s = z.scatter_add_(0, gid, hi)
    hi_s = hi_s + (lo_s >> LIMB_BITS)
    lo_s = lo_s & LIMB_MASK
    return torch.stack([hi_s, lo_s], dim=1)


def narrow_if_fits(wide: torch.Tensor):
    """int64 sums when every group fits in int64 (one sync), else the wide form."""
    hi = wide[:, 0]
    fits = bool(((hi >= -(1 << 31)) & (hi < (1 << 31))).all()) if wide.shape[0] else True
    if fits:
        return (hi << LIMB_BITS) | wide[:, 1]
    return wide


def float_sum(values: torch.Tensor, gid: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=torch.float64, device=values.device).scatter_add_(0, gid, values.double())


def extreme(values: torch.Tensor, gid: torch.Tensor, n: int, largest: bool) -> torch.Tensor:
    """Per-group min or max; groups without rows get an arbitrary value."""
    if values.dtype == torch.bool:
        return extreme(values.to(torch.int8), gid, n, largest).bool()
    out = torch.zeros(n, dtype=values.dtype, device=values.device)
    return out.scatter_reduce_(0, gid, values, reduce="amax" if largest else "amin", include_self=False)
