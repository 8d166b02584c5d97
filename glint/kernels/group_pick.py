"""Per-group picks and reductions that scatter reductions do not offer: the
first, last or best row of each group, products, and bitwise AND / OR / XOR.

Rows are grouped by ``slots`` (glint.kernels.groupby.Slots). A group's row
is a position into the input (``-1`` where the group has none), so that any
column of the row can be gathered afterwards.

- first / last rows: the smallest or largest position among a group's rows
  (row order is what FIRST and LAST follow, and chunks are combined in
  order);
- best rows: the first row holding the group's smallest or largest key (an
  int64 that orders as the values do: ARG_MIN / ARG_MAX);
- bitwise reductions: rows sorted by group, then a segmented doubling scan
  (log2 of the largest group's size steps over all rows at once);
- products: a scatter product with 1 as the identity.

>>> import torch
>>> from glint.kernels.groupby import Slots
>>> s = Slots(torch.tensor([1, 0, 1, 1, 0]), 3)
>>> first_rows(s).tolist(), last_rows(s, torch.tensor([True, True, True, False, False])).tolist()
([1, 0, -1], [1, 2, -1])
>>> best_rows(torch.tensor([5, 2, 9, 9, 2]), s, largest=True).tolist()
[1, 2, -1]
>>> bitwise(torch.tensor([6, 3, 5, 4, 1]), s, "xor").tolist()
[2, 7, 0]
>>> product(torch.tensor([2.0, 3.0, 4.0, 0.5, 5.0]), s).tolist()
[15.0, 4.0, 1.0]
"""

from __future__ import annotations

import torch

from glint.kernels import groupby as G

_OPS = {"and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}


def _rows(slots, mask: torch.Tensor | None, largest: bool) -> torch.Tensor:
    n = slots.gid.shape[0]
    pos = torch.arange(n, device=slots.gid.device)
    if mask is not None:
        pos = torch.where(mask, pos, torch.full_like(pos, -1 if largest else n))
    if n == 0:
        return torch.full((slots.n,), -1, dtype=torch.int64, device=slots.gid.device)
    best = G.extreme(pos, slots, largest)
    has = G.count(slots, mask) > 0
    return torch.where(has, best, torch.full_like(best, -1))


def first_rows(slots, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Each group's first row (among those ``mask`` keeps), -1 for none."""
    return _rows(slots, mask, False)


def last_rows(slots, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Each group's last row (among those ``mask`` keeps), -1 for none."""
    return _rows(slots, mask, True)


def best_rows(key: torch.Tensor, slots, largest: bool, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Each group's first row whose int64 ``key`` is the group's largest
    (smallest) among the rows ``mask`` keeps; -1 for a group without rows."""
    if key.shape[0] == 0:
        return torch.full((slots.n,), -1, dtype=torch.int64, device=key.device)
    k = key
    if mask is not None:
        fill = torch.iinfo(torch.int64).min if largest else torch.iinfo(torch.int64).max
        k = torch.where(mask, key, torch.full_like(key, fill))
    best = G.extreme(k, slots, largest)
    hit = k == best[slots.gid]
    if mask is not None:
        hit = hit & mask
    return first_rows(slots, hit)


def bitwise(values: torch.Tensor, slots, op: str) -> torch.Tensor:
    """Per-group bitwise AND / OR / XOR (``op``) of int64 values; a group
    without rows gets the operation's identity."""
    fn = _OPS[op]
    identity = -1 if op == "and" else 0
    out = torch.full((slots.n,), identity, dtype=values.dtype, device=values.device)
    if values.shape[0] == 0:
        return out
    if slots.n == 1:  # one group: halve the rows until one is left
        v = values
        while v.shape[0] > 1:
            if v.shape[0] % 2:
                v = torch.cat([v, v.new_full((1,), identity)])
            v = fn(v[0::2], v[1::2])
        return v
    gid = slots.gid
    perm = torch.argsort(gid, stable=True)
    v, g = values[perm], gid[perm]
    n = v.shape[0]
    step = 1
    while step < n:
        same = g[step:] == g[:-step]
        v = torch.cat([v[:step], torch.where(same, fn(v[step:], v[:-step]), v[step:])])
        step *= 2
    last = torch.ones(n, dtype=torch.bool, device=v.device)
    last[:-1] = g[1:] != g[:-1]
    return out.index_copy(0, g[last], v[last])


def product(values: torch.Tensor, slots) -> torch.Tensor:
    """Per-group product of float64 values (1.0 for a group without rows)."""
    out = torch.ones(slots.bins, dtype=torch.float64, device=values.device)
    out.scatter_reduce_(0, slots.idx, values.double(), reduce="prod", include_self=True)
    if slots.p > 1:
        out = out.view(slots.p, slots.n).prod(0)
    return out
