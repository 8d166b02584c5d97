"""Window-function building blocks over rows already sorted by (partition,
order): segment boundaries, frame bounds, and range reductions over
[lo, hi) row ranges — prefix sums for exact (integer) sums and counts, a
segment tree for float sums and for the row holding a frame's MIN / MAX, a
segmented running maximum (cummax) for MIN / MAX over frames that start at
their partition's start.
Everything is vectorised over rows (no loop over rows or partitions; the
segment tree loops over its log2(n) levels).

>>> import torch
>>> starts = boundaries([(torch.tensor([1, 1, 2, 2, 2]), None)], 5)
>>> starts.tolist()
[True, False, True, False, False]
>>> segment_start(starts).tolist(), segment_end(starts).tolist()
([0, 0, 2, 2, 2], [2, 2, 5, 5, 5])
>>> range_sum_exact(torch.tensor([2**62, 2**62, 5]), torch.tensor([0, 1]), torch.tensor([2, 3])).tolist()
[[2147483648, 0], [1073741824, 5]]
"""

from __future__ import annotations

import torch

from glint.kernels.groupby import LIMB_BITS, LIMB_MASK
from glint.kernels.sort import float_order_key


def boundaries(keys, n: int, device=None) -> torch.Tensor:
    """True where a sorted row starts a new run of equal keys. keys =
    [(values, validity or None)]: NULLs equal each other, floats compare as
    DuckDB orders them (NaN equals NaN, -0.0 equals 0.0); values may be (n,)
    or (n, 2) for wide decimals. ``device``: where the flags live when there
    are no keys (a window without PARTITION BY on CUDA)."""
    dev = keys[0][0].device if keys else device
    flags = torch.zeros(n, dtype=torch.bool, device=dev)
    if n == 0:
        return flags
    flags[0] = True
    for values, valid in keys:
        if values.is_floating_point():
            values = float_order_key(values)
        if valid is not None:
            values = torch.where(
                valid if values.dim() == 1 else valid[:, None],
                values,
                torch.zeros((), dtype=values.dtype, device=values.device),
            )
        diff = values[1:] != values[:-1]
        if diff.dim() == 2:
            diff = diff.any(1)
        if valid is not None:
            diff |= valid[1:] != valid[:-1]
        flags[1:] |= diff
    return flags


def segment_start(starts: torch.Tensor) -> torch.Tensor:
    """Index of the first row of each row's segment (``starts`` from :func:`boundaries`)."""
    pos = torch.arange(starts.shape[0], device=starts.device)
    if starts.shape[0] == 0:
        return pos
    return torch.cummax(torch.where(starts, pos, 0), 0).values


def segment_end(starts: torch.Tensor) -> torch.Tensor:
    """One past the last row of each row's segment."""
    n = starts.shape[0]
    pos = torch.arange(n, device=starts.device)
    if n == 0:
        return pos
    next_start = torch.cat([starts[1:], torch.ones(1, dtype=torch.bool, device=starts.device)])
    ends = torch.where(next_start, pos + 1, n)
    return torch.flip(torch.cummin(torch.flip(ends, (0,)), 0).values, (0,))


def _prefix(v: torch.Tensor) -> torch.Tensor:
    return torch.cat([torch.zeros(1, dtype=v.dtype, device=v.device), torch.cumsum(v, 0)])


class MarkedRows:
    """The rows where ``mask`` is set, numbered in order: ``before[i]`` is how
    many come before row i (n + 1 entries), ``row(k)`` is the k-th one. What
    IGNORE NULLS needs: the k-th non-NULL row of a frame is
    ``row(before[start] + k - 1)`` when that is below ``before[end]``.

    >>> m = MarkedRows(torch.tensor([False, True, False, True, True]))
    >>> m.before.tolist(), m.row(torch.tensor([0, 2])).tolist()
    ([0, 0, 1, 1, 2, 3], [1, 4])
    """

    __slots__ = ("before", "rows")

    def __init__(self, mask: torch.Tensor):
        self.before = _prefix(mask.long())
        # one sentinel entry keeps the gather valid when nothing is marked
        self.rows = torch.cat([mask.nonzero().squeeze(1), torch.zeros(1, dtype=torch.int64, device=mask.device)])

    def row(self, k: torch.Tensor) -> torch.Tensor:
        return self.rows[k.clamp(min=0, max=self.rows.shape[0] - 1)]


def range_count(mask: torch.Tensor | None, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """Rows of [lo, hi) where mask is set (all rows without a mask); lo <= hi."""
    if mask is None:
        return hi - lo
    p = _prefix(mask.long())
    return p[hi] - p[lo]


def range_sum_exact(values: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """Exact sums over [lo, hi) of int64 values, or of wide (n, 2) [hi, lo]
    values, as (n, 2) [hi, lo] limbs (value = hi * 2**32 + lo, 0 <= lo <
    2**32; groupby.exact_sum's form): differences of prefix sums of the two
    limbs. The low limbs' sums cannot overflow; the high limbs' prefix sums
    may wrap, but their differences are exact modulo 2**64, so every range
    sum that fits the wide form is exact."""
    if values.dim() == 2:
        limb_hi, limb_lo = values[:, 0], values[:, 1]
    else:
        v = values.long()
        limb_hi, limb_lo = v >> LIMB_BITS, v & LIMB_MASK
    p_lo, p_hi = _prefix(limb_lo), _prefix(limb_hi)
    s_lo, s_hi = p_lo[hi] - p_lo[lo], p_hi[hi] - p_hi[lo]
    return torch.stack([s_hi + (s_lo >> LIMB_BITS), s_lo & LIMB_MASK], dim=1)


def _tree_levels(leaves: torch.Tensor, combine, identity) -> list[torch.Tensor]:
    """Level k holds the combination of leaves [j * 2**k, (j + 1) * 2**k)."""
    levels = [leaves]
    while levels[-1].shape[0] > 1:
        cur = levels[-1]
        if cur.shape[0] % 2:
            cur = torch.cat([cur, identity.expand(1)])
        levels.append(combine(cur[0::2], cur[1::2]))
    return levels


def _tree_query(levels, lo: torch.Tensor, hi: torch.Tensor, combine, identity) -> torch.Tensor:
    """combine over leaves [lo, hi) for every row at once (the bottom-up
    segment-tree walk, one step per level for all rows)."""
    acc = identity.expand(lo.shape[0]).clone()
    l, r = lo.clone(), hi.clone()
    for level in levels:
        last = level.shape[0] - 1
        active = l < r
        take_l = active & (l % 2 == 1)
        acc = torch.where(take_l, combine(acc, level[l.clamp(max=last)]), acc)
        l = l + take_l.long()
        take_r = active & (r % 2 == 1)
        r = r - take_r.long()
        acc = torch.where(take_r, combine(acc, level[r.clamp(min=0, max=last)]), acc)
        l, r = l // 2, r // 2
    return acc


def range_sum_float(values: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """float64 sums over [lo, hi) by a segment tree: no difference of large
    prefix sums, so one partition's magnitudes never cost another's precision.

    >>> range_sum_float(torch.tensor([1e300, 0.5, 0.25], dtype=torch.float64), torch.tensor([1, 0]), torch.tensor([3, 1])).tolist()
    [0.75, 1e+300]
    """
    if values.shape[0] == 0:
        return torch.zeros(lo.shape[0], dtype=torch.float64, device=values.device)
    zero = torch.zeros((), dtype=torch.float64, device=values.device)
    levels = _tree_levels(values.double(), torch.add, zero)
    return _tree_query(levels, lo, hi, torch.add, zero)


def best_of(key: torch.Tensor, ok: torch.Tensor, a: torch.Tensor, b: torch.Tensor, largest: bool) -> torch.Tensor:
    """Row by row, the better of rows a and b (-1: none) by ``key``, among
    rows where ``ok`` is set; -1 when neither is.

    >>> best_of(torch.tensor([3, 7]), torch.tensor([True, True]), torch.tensor([0, -1]), torch.tensor([1, 0]),
    ...         largest=True).tolist()
    [1, 0]
    """
    ia, ib = a.clamp(min=0), b.clamp(min=0)
    ok_a, ok_b = (a >= 0) & ok[ia], (b >= 0) & ok[ib]
    wins = (key[ia] >= key[ib]) if largest else (key[ia] <= key[ib])
    pick_a = ok_a & (~ok_b | wins)
    return torch.where(pick_a, a, torch.where(ok_b, b, torch.full_like(a, -1)))


def kth_in_pieces(pieces, k: torch.Tensor) -> torch.Tensor:
    """Row by row, the position of the k-th (1-based) element of ordered,
    disjoint ranges [lo, hi) taken together; -1 when there are fewer than k.

    >>> kth_in_pieces([(torch.tensor([0, 0]), torch.tensor([2, 0])), (torch.tensor([5, 5]), torch.tensor([7, 6]))],
    ...               torch.tensor([3, 2])).tolist()
    [5, -1]
    """
    at = torch.full_like(k, -1)
    left = k
    for lo, hi in pieces:
        size = hi - lo
        here = (left >= 1) & (left <= size)
        at = torch.where(here & (at < 0), lo + left - 1, at)
        left = left - size
    return at


def range_best_row(
    key: torch.Tensor, valid: torch.Tensor | None, lo: torch.Tensor, hi: torch.Tensor, largest: bool
) -> torch.Tensor:
    """For each [lo, hi), a row of the range whose key is smallest (largest),
    skipping rows that are not valid; -1 when there is none. ``key`` is an
    integer order key (floats through kernels.sort.float_order_key, strings
    their byte-order ranks).

    >>> range_best_row(torch.tensor([5, 1, 9, 1]), torch.tensor([True, False, True, True]),
    ...                torch.tensor([0, 0, 1]), torch.tensor([2, 4, 2]), largest=False).tolist()
    [0, 3, -1]
    """
    n = key.shape[0]
    none = torch.full((), -1, dtype=torch.int64, device=key.device)
    if n == 0:
        return none.expand(lo.shape[0]).clone()
    ok = torch.ones(n, dtype=torch.bool, device=key.device) if valid is None else valid

    def better(a, b):
        return best_of(key, ok, a, b, largest)

    rows = torch.where(ok, torch.arange(n, device=key.device), none)
    levels = _tree_levels(rows, better, none)
    return _tree_query(levels, lo, hi, better, none)


def bisect_rows(before, lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
    """For every row at once, the first position p in [lo, hi) where
    ``before(p)`` is False (hi if none), for a predicate that is True then
    False over each range: a binary search of all rows in step, log2(n) steps.

    >>> v = torch.tensor([1, 3, 3, 7, 2, 5])          # two sorted runs: [0, 4) and [4, 6)
    >>> bisect_rows(lambda p: v[p] < torch.tensor([3, 3, 6, 9, 0, 5])[:], torch.tensor([0, 0, 0, 0, 4, 4]),
    ...             torch.tensor([4, 4, 4, 4, 6, 6])).tolist()
    [1, 1, 3, 4, 4, 5]
    """
    lo, hi = lo.clone(), hi.clone()
    steps = int(hi.max() - lo.min()).bit_length() + 1 if lo.numel() else 0
    last = max(int(hi.max()) - 1, 0) if lo.numel() else 0
    for _ in range(steps):
        active = lo < hi
        mid = (lo + hi) // 2
        go_right = before(mid.clamp(max=last))
        lo = torch.where(active & go_right, mid + 1, lo)
        hi = torch.where(active & ~go_right, mid, hi)
    return lo


def running_best_row(
    key: torch.Tensor,
    valid: torch.Tensor | None,
    segment: torch.Tensor,
    lo: torch.Tensor,
    hi: torch.Tensor,
    largest: bool,
) -> torch.Tensor:
    """:func:`range_best_row` for ranges that start where their segment
    starts (running and whole-partition frames), by one segmented scan: each
    row's key rank, offset by its segment number so that a running maximum
    (torch.cummax) never carries over from the segment before; the row of
    the best rank is then looked up. ``segment``: the segment number of each
    (sorted) row, nondecreasing.

    >>> running_best_row(torch.tensor([5, 1, 9, 1, 4]), torch.tensor([True, True, True, False, True]),
    ...                  torch.tensor([0, 0, 0, 1, 1]), torch.tensor([0, 0, 0, 3, 3]),
    ...                  torch.tensor([1, 2, 3, 4, 5]), largest=False).tolist()
    [0, 1, 1, -1, 4]
    """
    n = key.shape[0]
    rows = torch.arange(n, device=key.device)
    if n == 0:
        return torch.full_like(lo, -1)
    order = torch.argsort(key, stable=True)
    dense = torch.cumsum(boundaries([(key[order], None)], n).long(), 0)  # 1..distinct keys
    rank = torch.empty_like(dense)
    rank[order] = dense
    score = rank if largest else n + 1 - rank  # higher is better, 1..n
    if valid is not None:
        score = torch.where(valid, score, 0)  # 0: nothing to pick
    best = torch.cummax(segment * (n + 1) + score, 0).values
    at = (hi - 1).clamp(min=0)
    best_score = torch.where(hi > lo, best[at] - segment[at] * (n + 1), 0)
    row_of = torch.full((n + 1,), -1, dtype=torch.int64, device=key.device)
    row_of.scatter_(0, score, rows)  # rows of equal score hold equal values: any one will do
    row_of[0] = -1
    return row_of[best_score]
