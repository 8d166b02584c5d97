"""Grouping and per-group reductions on int64 group ids.

Exact sums of int64 values (DECIMAL, integers) split each value into two
32-bit limbs summed separately in int64, so no group sum can overflow before
it is recombined and checked (float64 sums would round, and int64 sums of
DECIMALs overflow long before their SUM's DECIMAL(38) result does).

>>> import torch
>>> gid, n, first = group_ids(torch.tensor([7, 3, 7, 3, 9]))
>>> gid.tolist(), n, first.tolist()
([1, 0, 1, 0, 2], 3, [1, 0, 4])
>>> exact_sum(torch.tensor([2**62, 2**62, 5]), Slots(torch.tensor([0, 0, 1]), 2)).tolist()
[[2147483648, 0], [0, 5]]
"""

from __future__ import annotations

import torch

from glint.kernels.hash_table import hashed_on, key_set

LIMB_BITS = 32
LIMB_MASK = (1 << LIMB_BITS) - 1


# the widest key span grouped by direct addressing (a chunk of 2**28 rows of TPC-H lineitem
# spans 2**28 order keys: its int64 slots take 2 GB, against a hash table of its 67M groups)
DENSE_LIMIT = 1 << 28


def key_range(key: torch.Tensor) -> tuple[int, int]:
    """(min, max) of a non-empty int64 tensor with one host synchronisation."""
    lo, hi = torch.stack([key.min(), key.max()]).tolist()
    return lo, hi


def group_ids(key: torch.Tensor, bounds: tuple[int, int] | None = None):
    """(group id per row, number of groups, first row of each group). Keys
    spanning a small range are grouped by direct addressing (no sort), groups
    numbered in ascending key order; others through a GPU hash table on CUDA
    (glint.kernels.hash_table: groups in no particular order), else through
    torch.unique (ascending). ``bounds``: (lo, hi) known to hold every key
    (else read from the keys)."""
    n = key.shape[0]
    dev = key.device
    if n == 0:
        return key, 0, key
    lo, hi = bounds if bounds is not None else key_range(key)
    span = hi - lo + 1
    if span <= max(2 * n, 1 << 16) and span <= DENSE_LIMIT:
        k = key - lo
        present = torch.zeros(span, dtype=torch.int64, device=dev)
        present.index_fill_(0, k, 1)
        slot = torch.cumsum(present, 0)
        groups = int(slot[-1])
        gid = slot[k] - 1
    elif hashed_on(key):
        table, gid = key_set(key, hashed=True)
        groups = table.size
    else:
        uniq, gid = torch.unique(key, return_inverse=True)
        groups = uniq.shape[0]
    return gid, groups, first_rows(gid, groups)


SPREAD_BINS = 4096


def first_rows(gid: torch.Tensor, groups: int, spread: int | None = None) -> torch.Tensor:
    """The first row of each of ``groups`` groups, by a scatter-min of row
    numbers. On CUDA, with few groups, each group's minimum is spread over P
    bins (row i to bin gid + groups * (i % P)) and the bins folded after, so
    that the atomic minimums do not pile onto a handful of addresses (12M rows
    into TPC-H Q1's 4 groups took 6 ms in one scatter on an H200).

    >>> first_rows(torch.tensor([1, 0, 1, 0, 2]), 3, spread=2).tolist()
    [1, 0, 4]
    """
    n = gid.shape[0]
    if spread is None:
        spread = max(1, SPREAD_BINS // max(groups, 1)) if gid.is_cuda and groups < SPREAD_BINS and n >= 1 << 20 else 1
    rows = torch.arange(n, device=gid.device)
    idx = gid if spread == 1 else gid + groups * (rows % spread)
    first = torch.full((groups * spread,), n, dtype=torch.int64, device=gid.device)
    first.scatter_reduce_(0, idx, rows, reduce="amin", include_self=True)
    return first if spread == 1 else first.view(spread, groups).amin(0)


class Slots:
    """Where each row's aggregate goes. On CUDA, with few groups, each group is
    spread over P bins (row i goes to bin gid + n * (i % P)) so atomic adds do
    not pile onto a handful of addresses (one int64 scatter-add of 600M rows
    into 4 groups took 362 ms on an H100); the P partial results are folded
    afterwards. Chunks with few groups usually skip the scatters altogether:
    glint.kernels.group_reduce.

    >>> s = Slots(torch.tensor([0, 1, 0, 1]), 2, spread=2)
    >>> s.fold(s.scatter_add(torch.ones(4, dtype=torch.int64)), "sum").tolist()
    [2, 2]
    """

    __slots__ = ("ids", "n", "p", "_gid", "_idx")

    def __init__(self, gid: torch.Tensor, n: int, spread: int | None = None):
        # ``ids``: the group ids as given, maybe narrower than int64 (a span of a few groups
        # packed into int8, read so by glint.kernels.group_reduce); ``gid`` widens them once,
        # for the scatters and gathers of torch, which index with int64 only
        self.ids, self.n = gid, n
        self._gid = gid if gid.dtype == torch.int64 else None
        if spread is None:
            rows = gid.shape[0]
            spread = max(1, SPREAD_BINS // max(n, 1)) if gid.is_cuda and n < SPREAD_BINS and rows >= 1 << 20 else 1
        self.p = spread
        self._idx = None

    @property
    def gid(self) -> torch.Tensor:
        """Each row's group id, int64."""
        if self._gid is None:
            self._gid = self.ids.long()
        return self._gid

    @property
    def idx(self) -> torch.Tensor:
        """Each row's bin (its group, spread over P bins); made on first use,
        so slots whose reductions all run elsewhere (glint.kernels.group_reduce)
        never compute it."""
        if self._idx is None:
            if self.p > 1:
                lane = torch.arange(self.gid.shape[0], device=self.gid.device) % self.p
                self._idx = self.gid + self.n * lane
            else:
                self._idx = self.gid
        return self._idx

    @property
    def bins(self) -> int:
        return self.n * self.p

    def scatter_add(self, values: torch.Tensor) -> torch.Tensor:
        return torch.zeros(self.bins, dtype=values.dtype, device=values.device).scatter_add_(0, self.idx, values)

    def scatter_reduce(self, values: torch.Tensor, reduce: str) -> torch.Tensor:
        out = torch.zeros(self.bins, dtype=values.dtype, device=values.device)
        return out.scatter_reduce_(0, self.idx, values, reduce=reduce, include_self=False)

    def fold(self, out: torch.Tensor, how: str) -> torch.Tensor:
        if self.p == 1:
            return out
        parts = out.view(self.p, self.n, *out.shape[1:])
        if how == "sum":
            return parts.sum(0)
        return parts.amax(0) if how == "max" else parts.amin(0)

    def subset(self, mask: torch.Tensor) -> Slots:
        s = Slots.__new__(Slots)
        s._gid = s.ids = self.gid[mask]
        s.n, s.p, s._idx = self.n, self.p, self.idx[mask]
        return s


def count(slots: Slots, mask: torch.Tensor | None = None) -> torch.Tensor:
    ones = torch.ones_like(slots.idx) if mask is None else mask.long()
    return slots.fold(slots.scatter_add(ones), "sum")


def exact_sum(values: torch.Tensor, slots: Slots) -> torch.Tensor:
    """Per-group sums of int64 values as (n, 2) [hi, lo] with sum = hi*2**32 + lo, 0 <= lo < 2**32."""
    v = values.long()
    lo_s = slots.fold(slots.scatter_add(v & LIMB_MASK), "sum")
    hi_s = slots.fold(slots.scatter_add(v >> LIMB_BITS), "sum")
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


def float_sum(values: torch.Tensor, slots: Slots) -> torch.Tensor:
    return slots.fold(slots.scatter_add(values.double()), "sum")


def extreme(values: torch.Tensor, slots: Slots, largest: bool) -> torch.Tensor:
    """Per-group min or max; groups without rows get an arbitrary value.
    Floats follow DuckDB's order, where NaN is above every number: MAX is NaN
    when a group has one, MIN skips NaNs unless there is nothing else."""
    if values.dtype == torch.bool:
        return extreme(values.to(torch.int8), slots, largest).bool()
    if not values.is_floating_point():
        return _extreme(values, slots, largest)
    nan = torch.isnan(values)
    inf = float("-inf") if largest else float("inf")
    best = _extreme(torch.where(nan, torch.full_like(values, inf), values), slots, largest)
    counted = nan if largest else ~nan
    hits = slots.fold(slots.scatter_add(counted.long()), "sum")
    use_nan = hits > 0 if largest else hits == 0
    return torch.where(use_nan, torch.full_like(best, float("nan")), best)


def _extreme(values: torch.Tensor, slots: Slots, largest: bool) -> torch.Tensor:
    how = "max" if largest else "min"
    out = slots.scatter_reduce(values, "amax" if largest else "amin")
    if slots.p > 1:
        # empty bins hold 0: give them the neutral value before folding
        filled = slots.scatter_add(torch.ones_like(slots.idx)) > 0
        neutral = torch.finfo(values.dtype) if values.dtype.is_floating_point else torch.iinfo(values.dtype)
        out = torch.where(filled, out, torch.full_like(out, neutral.min if largest else neutral.max))
    return slots.fold(out, how)


def exact_sum_wide(wide: torch.Tensor, slots: Slots) -> torch.Tensor:
    """Per-group sums of wide values ([hi, lo] rows, 0 <= lo < 2**32), in the
    same wide form: how partial sums of chunks are combined.

    >>> w = torch.tensor([[1, 4294967295], [0, 1], [-1, 0]])
    >>> exact_sum_wide(w, Slots(torch.tensor([0, 0, 1]), 2)).tolist()
    [[2, 0], [-1, 0]]
    """
    lo_s = slots.fold(slots.scatter_add(wide[:, 1]), "sum")
    hi_s = slots.fold(slots.scatter_add(wide[:, 0]), "sum")
    hi_s = hi_s + (lo_s >> LIMB_BITS)
    return torch.stack([hi_s, lo_s & LIMB_MASK], dim=1)
