"""Per-piece byte counts: code points (LENGTH, SUBSTRING) and non-ASCII bytes
(which pieces need the exact Unicode mapping of the host).

In valid UTF-8 every code point has exactly one byte that is not a
continuation byte (``10xxxxxx``), so counting those counts code points.

>>> from .pieces import from_strings
>>> p = from_strings(["", "abc", "héllo", "日本", "👍🏽"])
>>> count_chars(p).tolist(), count_non_ascii(p).tolist()
([0, 3, 5, 2, 2], [0, 0, 2, 6, 8])
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton
from glint.kernels.strings.pieces import Pieces, chunk_bounds, packed, segment_sums

_CHARS, _NON_ASCII = 0, 1


def count_chars(p: Pieces) -> torch.Tensor:
    """Code points of each piece (int64)."""
    return _count(p, _CHARS)


def count_non_ascii(p: Pieces) -> torch.Tensor:
    """Bytes >= 0x80 of each piece (int64): 0 means plain ASCII."""
    return _count(p, _NON_ASCII)


def _count(p: Pieces, what: int) -> torch.Tensor:
    out = torch.zeros(len(p), dtype=torch.int64, device=p.device)
    if len(p):
        (_count_triton if use_triton(p.data) else _count_torch)(p, what, out)
    return out


def _count_torch(p: Pieces, what: int, out: torch.Tensor) -> None:
    for a, b in chunk_bounds(p.lengths):
        buf, offs = packed(p.slice(a, b))
        hit = (buf & 0xC0) != 0x80 if what == _CHARS else buf >= 0x80
        out[a:b] = segment_sums(hit, offs)


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _count_kernel(data, starts, lengths, out, m, WHAT: tl.constexpr, BE: tl.constexpr, BB: tl.constexpr):
        e = tl.program_id(0).to(tl.int64) * BE + tl.arange(0, BE)
        em = e < m
        s = tl.load(starts + e, mask=em, other=0)
        n = tl.load(lengths + e, mask=em, other=0)
        acc = tl.zeros([BE], dtype=tl.int64)
        for c in range(0, tl.max(n, axis=0), BB):
            i = c + tl.arange(0, BB).to(tl.int64)
            mask = em[:, None] & (i[None, :] < n[:, None])
            b = tl.load(data + s[:, None] + i[None, :], mask=mask, other=0).to(tl.int32)
            if WHAT == 0:
                hit = (b & 0xC0) != 0x80
            else:
                hit = b >= 0x80
            acc += tl.sum((hit & mask).to(tl.int64), axis=1)
        tl.store(out + e, acc, mask=em)


def _count_triton(p: Pieces, what: int, out: torch.Tensor) -> None:
    m = len(p)
    BE, BB = 32, 32
    with on_device(out):
        _count_kernel[(blocks(m, BE),)](p.data, p.starts, p.lengths, out, m, WHAT=what, BE=BE, BB=BB)
