"""A 64-bit hash of each piece's bytes, the same on every device and in every
process: a function of the bytes only, never of where they are stored.

Definition (all arithmetic modulo 2**64, ``fmix`` is MurmurHash3's 64-bit
finaliser): with ``w_j`` the little-endian word of bytes ``8j .. 8j+7``
(missing bytes are 0) and ``L`` the byte length,

    S = sum_j fmix(w_j XOR (j + 1) * K1)
    hash = fmix(S + L * K2 + K3)             (as a signed int64)

Words are mixed independently and summed, so the torch code needs no loop
over string lengths and the Triton kernel no order of summation. Equal bytes
give equal hashes; distinct strings can collide, so equality built on these
hashes is verified (:mod:`.equality`).

>>> from .pieces import from_strings
>>> h = hash_pieces(from_strings(["abc", "", "abc", "abd"]))
>>> h.dtype, bool(h[0] == h[2]), bool(h[0] != h[3]), bool(h[1] != 0)
(torch.int64, True, True, True)
>>> inside = Pieces(from_strings(["xxglint"]).data, torch.tensor([2]), torch.tensor([5]))
>>> hash_pieces(from_strings(["glint"])).tolist() == hash_pieces(inside).tolist()
True
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton
from glint.kernels.strings.pieces import Pieces, chunk_bounds, exclusive_cumsum, load_word, packed, segment_sums

K1 = 0x9E3779B97F4A7C15
K2 = 0xC2B2AE3D27D4EB4F
K3 = 0x165667B19E3779F9
F1 = 0xFF51AFD7ED558CCD
F2 = 0xC4CEB9FE1A85EC53


def _signed(u: int) -> int:
    return u - (1 << 64) if u >= 1 << 63 else u


def _srl(x: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 (torch's >> is arithmetic)."""
    return (x >> s) & ((1 << (64 - s)) - 1)


def fmix(x: torch.Tensor) -> torch.Tensor:
    """MurmurHash3's fmix64 on int64 tensors (wrapping multiplication).

    >>> fmix(torch.tensor([0, 1])).tolist()
    [0, -5451962507482445012]
    """
    x = x ^ _srl(x, 33)
    x = x * _signed(F1)
    x = x ^ _srl(x, 33)
    x = x * _signed(F2)
    return x ^ _srl(x, 33)


def hash_pieces(p: Pieces) -> torch.Tensor:
    """int64 hash of each piece (see the module's definition)."""
    out = torch.empty(len(p), dtype=torch.int64, device=p.device)
    if len(p):
        (_hash_triton if use_triton(p.data) else _hash_torch)(p, out)
    return out


def _hash_torch(p: Pieces, out: torch.Tensor) -> None:
    for a, b in chunk_bounds(p.lengths):
        c = p.slice(a, b)
        buf, offs = packed(c)
        words_per = (c.lengths + 7) // 8
        word_base = exclusive_cumsum(words_per)
        n_words = int(word_base[-1])
        piece = torch.repeat_interleave(torch.arange(b - a, device=c.device), words_per, output_size=n_words)
        j = torch.arange(n_words, device=c.device) - word_base[piece]
        words = load_word(buf, offs[piece] + 8 * j, (c.lengths[piece] - 8 * j).clamp(max=8))
        mixed = fmix(words ^ ((j + 1) * _signed(K1)))
        # int64 running sums wrap modulo 2**64, as the definition's sum does
        out[a:b] = fmix(segment_sums(mixed, word_base) + c.lengths * _signed(K2) + _signed(K3))


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _fmix_u64(x):
        x = x ^ (x >> 33)
        x = x * 0xFF51AFD7ED558CCD
        x = x ^ (x >> 33)
        x = x * 0xC4CEB9FE1A85EC53
        return x ^ (x >> 33)

    @triton.jit
    def _hash_kernel(data, starts, lengths, out, m, BE: tl.constexpr):
        e = tl.program_id(0).to(tl.int64) * BE + tl.arange(0, BE)
        em = e < m
        s = tl.load(starts + e, mask=em, other=0)
        n = tl.load(lengths + e, mask=em, other=0)
        n_words = (n + 7) // 8
        acc = tl.zeros([BE], dtype=tl.uint64)
        for j in range(0, tl.max(n_words, axis=0)):
            jj = tl.full([BE], 0, tl.int64) + j  # a tensor in the interpreter too, where j is an int
            w = tl.zeros([BE], dtype=tl.uint64)
            for t in tl.static_range(8):
                at = jj * 8 + t
                b = tl.load(data + s + at, mask=em & (at < n), other=0)
                w = w | (b.to(tl.uint64) << (8 * t))
            key = (jj + 1).to(tl.uint64) * 0x9E3779B97F4A7C15
            acc += tl.where(jj < n_words, _fmix_u64(w ^ key), 0)
        h = _fmix_u64(acc + n.to(tl.uint64) * 0xC2B2AE3D27D4EB4F + 0x165667B19E3779F9)
        tl.store(out + e, h.to(tl.int64, bitcast=True), mask=em)


def _hash_triton(p: Pieces, out: torch.Tensor) -> None:
    m = len(p)
    BE = 128
    with on_device(out):
        _hash_kernel[(blocks(m, BE),)](p.data, p.starts, p.lengths, out, m, BE=BE)
