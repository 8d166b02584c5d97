"""Copy pieces into a fresh Arrow-layout buffer: the one way strings are
materialised (compaction, results to Arrow, concatenation, substrings).

>>> from .pieces import from_strings
>>> p = from_strings(["hello", "", "wörld"])
>>> offsets, data = gather(p.take(torch.tensor([2, 0, 0])))
>>> offsets.tolist(), bytes(data.tolist()).decode()
([0, 6, 11, 16], 'wörldhellohello')
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton
from glint.kernels.strings.pieces import Pieces, chunk_bounds, exclusive_cumsum, packed


def gather(p: Pieces, total: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(int64 offsets of length n + 1, uint8 bytes): the pieces, one after the
    other. ``total`` (the sum of the lengths), when the caller knows it, saves
    the one host synchronisation."""
    offsets = exclusive_cumsum(p.lengths)
    if total is None:
        total = int(offsets[-1]) if len(p) else 0
    out = torch.empty(total, dtype=torch.uint8, device=p.device)
    if total:
        (_gather_triton if use_triton(p.data) else _gather_torch)(p, offsets, out)
    return offsets, out


def _gather_torch(p: Pieces, offsets: torch.Tensor, out: torch.Tensor) -> None:
    for a, b in chunk_bounds(p.lengths):
        buf, offs = packed(p.slice(a, b))
        lo = int(offsets[a])
        out[lo : lo + buf.shape[0]] = buf


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _gather_kernel(src, starts, lengths, out_off, out, m, BE: tl.constexpr, BB: tl.constexpr):
        # a block of BE pieces, copied BB bytes per piece per step
        e = tl.program_id(0).to(tl.int64) * BE + tl.arange(0, BE)
        em = e < m
        s = tl.load(starts + e, mask=em, other=0)
        n = tl.load(lengths + e, mask=em, other=0)
        o = tl.load(out_off + e, mask=em, other=0)
        longest = tl.max(n, axis=0)
        for c in range(0, longest, BB):
            i = c + tl.arange(0, BB).to(tl.int64)
            mask = em[:, None] & (i[None, :] < n[:, None])
            b = tl.load(src + s[:, None] + i[None, :], mask=mask, other=0)
            tl.store(out + o[:, None] + i[None, :], b, mask=mask)


def _gather_triton(p: Pieces, offsets: torch.Tensor, out: torch.Tensor) -> None:
    m = len(p)
    BE, BB = 32, 32
    with on_device(out):
        _gather_kernel[(blocks(m, BE),)](p.data, p.starts, p.lengths, offsets, out, m, BE=BE, BB=BB)
