"""Exact string equality: byte compares of piece pairs, and dense ids that are
equal exactly when the strings are.

:func:`dense_ids` hashes every piece (:mod:`.hashing`), numbers the distinct
hashes, and then verifies that each piece is byte-equal to the first piece
with its hash. A hash is never trusted alone: on any collision the ids come
from an exact sort (:func:`.order.ranks`) instead.

>>> from .pieces import from_strings
>>> a, b = from_strings(["x", "yy", "x", ""]), from_strings(["", "yy", "z"])
>>> (ia, ib), n = dense_ids([a, b])
>>> n, bool(ia[0] == ia[2]), bool(ia[1] == ib[1]), bool(ia[3] == ib[0]), bool(ib[2] != ia[0])
(4, True, True, True, True)
>>> pair_equal(from_strings(["ab", "ab", "a"]), from_strings(["ab", "ac", "ab"])).tolist()
[True, False, False]
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton
from glint.kernels.strings.gather import gather
from glint.kernels.strings.hashing import hash_pieces
from glint.kernels.strings.order import ranks
from glint.kernels.strings.pieces import Pieces, chunk_bounds, packed, segment_sums


def pair_equal(a: Pieces, b: Pieces) -> torch.Tensor:
    """a[i] == b[i], byte for byte (the two may live in different buffers)."""
    same_len = a.lengths == b.lengths
    if len(a) == 0:
        return same_len
    if use_triton(a.data):
        return same_len & _pair_equal_triton(a, b)
    # pairs of unequal length are unequal: compare none of their bytes, so both sides pack alike
    n = torch.where(same_len, a.lengths, 0)
    a, b = a.with_lengths(n), b.with_lengths(n)
    bad = torch.zeros(len(a), dtype=torch.int64, device=a.device)
    for lo, hi in chunk_bounds(n):
        x, offs = packed(a.slice(lo, hi))
        y, _ = packed(b.slice(lo, hi))
        bad[lo:hi] = segment_sums(x != y, offs)
    return same_len & (bad == 0)


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _pair_equal_kernel(da, sa, la, db, sb, lb, out, m, BE: tl.constexpr, BB: tl.constexpr):
        e = tl.program_id(0).to(tl.int64) * BE + tl.arange(0, BE)
        em = e < m
        pa = tl.load(sa + e, mask=em, other=0)
        pb = tl.load(sb + e, mask=em, other=0)
        n = tl.minimum(tl.load(la + e, mask=em, other=0), tl.load(lb + e, mask=em, other=0))
        diff = tl.zeros([BE], dtype=tl.int32)
        for c in range(0, tl.max(n, axis=0), BB):
            i = c + tl.arange(0, BB).to(tl.int64)
            mask = em[:, None] & (i[None, :] < n[:, None]) & (diff == 0)[:, None]
            x = tl.load(da + pa[:, None] + i[None, :], mask=mask, other=0)
            y = tl.load(db + pb[:, None] + i[None, :], mask=mask, other=0)
            diff += tl.sum((x != y).to(tl.int32), axis=1)
        tl.store(out + e, diff == 0, mask=em)


def _pair_equal_triton(a: Pieces, b: Pieces) -> torch.Tensor:
    m = len(a)
    out = torch.empty(m, dtype=torch.bool, device=a.device)
    BE, BB = 32, 32
    with on_device(out):
        _pair_equal_kernel[(blocks(m, BE),)](
            a.data, a.starts, a.lengths, b.data, b.starts, b.lengths, out, m, BE=BE, BB=BB
        )
    return out


def concat_pieces(parts: list[Pieces]) -> Pieces:
    """Several piece sets as one, over one buffer (their bytes are copied).

    >>> from .pieces import from_strings, to_pylist
    >>> to_pylist(concat_pieces([from_strings(["a", "bc"]), from_strings(["d"])]))
    ['a', 'bc', 'd']
    """
    if len(parts) == 1:
        return parts[0]
    offsets, data = [], []
    base = 0
    for p in parts:
        o, d = gather(p)
        offsets.append(o[:-1] + base)
        data.append(d)
        base += d.shape[0]
    starts = torch.cat(offsets)
    lengths = torch.cat([p.lengths for p in parts])
    return Pieces(torch.cat(data), starts, lengths)


def dense_ids(parts: list[Pieces]) -> tuple[list[torch.Tensor], int]:
    """(int64 ids for each part's pieces, number of distinct strings): ids are
    in [0, n) and equal exactly when the strings are, across all parts. A few
    host synchronisations (the distinct count, the verification)."""
    sizes = [len(p) for p in parts]
    total = sum(sizes)
    dev = parts[0].device
    if total == 0:
        return [torch.zeros(0, dtype=torch.int64, device=dev) for _ in parts], 0
    h = torch.cat([hash_pieces(p) for p in parts])
    uniq, inverse = torch.unique(h, return_inverse=True)
    idx = torch.arange(total, device=dev)
    first = torch.full((uniq.shape[0],), total, dtype=torch.int64, device=dev)
    first.scatter_reduce_(0, inverse, idx, "amin")
    rep = first[inverse]
    if not _verified(parts, sizes, idx, rep):
        exact, n = ranks(concat_pieces(parts))  # a hash collision: sort instead
        return list(torch.split(exact, sizes)), n
    return list(torch.split(inverse, sizes)), int(uniq.shape[0])


def _verified(parts: list[Pieces], sizes: list[int], idx: torch.Tensor, rep: torch.Tensor) -> bool:
    """Is every piece byte-equal to the first piece of its hash?"""
    dup = (rep != idx).nonzero().squeeze(1)
    if dup.numel() == 0:
        return True
    if len(parts) == 1:
        return bool(pair_equal(parts[0].take(dup), parts[0].take(rep[dup])).all())
    bounds = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0).tolist())).to(idx.device)
    src_dup = torch.searchsorted(bounds, dup, right=True) - 1
    src_rep = torch.searchsorted(bounds, rep[dup], right=True) - 1
    for sa in range(len(parts)):  # pairs of parts (a piece's first is in its part or an earlier one)
        for sb in range(sa + 1):
            pick = ((src_dup == sa) & (src_rep == sb)).nonzero().squeeze(1)
            if pick.numel() == 0:
                continue
            a = parts[sa].take(dup[pick] - bounds[sa])
            b = parts[sb].take(rep[dup[pick]] - bounds[sb])
            if not bool(pair_equal(a, b).all()):
                return False
    return True
