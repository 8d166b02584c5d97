"""Rows grouped by destination: a counting sort of small partition numbers.

An exchange sends each row to one of ``parts`` ranks (or a spill writes it
to one of ``parts`` files): the rows must be grouped by destination, keeping
their order within each group, with the size of each group. A general sort
does far more than that needs (a radix sort of 64-bit keys makes several
passes over keys and row numbers). The Triton kernels make two passes over
the destinations alone:

1. each program counts its block's rows per destination (a histogram);
2. an exclusive prefix sum over (destination, block) gives each block's
   first slot in each destination's segment; each program then ranks its
   rows within their destination (a prefix sum of a one-hot matrix in
   registers) and writes each row's number to its slot.

The result is a permutation: ``order[k]`` is the row that goes to slot k,
slots grouped by destination, rows in their original order within a group
(the same as a stable argsort). Everywhere else the torch reference runs:
a stable argsort and a bincount.

>>> import torch
>>> order, counts = partition_order(torch.tensor([2, 0, 1, 0, 2]), 3)
>>> order.tolist(), counts.tolist()
([1, 3, 2, 0, 4], [2, 1, 2])
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton

_BLOCK = 1024  # rows per program, at most
# the ranking's prefix sum over a [rows, bins] int32 matrix sits in shared memory: at most
# 128 KiB of it (an H100/H200 SM has 227 KiB; 1,024 rows x 64 bins asked for 256 KiB and failed)
_RANK_CELLS = 32768
MAX_TRITON_PARTS = 64  # more destinations than this: the one-hot ranking takes too many registers


def partition_order(dest: torch.Tensor, parts: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(order, counts): ``order`` (int64) lists the rows grouped by their
    destination in ``dest`` (values 0..parts-1), stable; ``counts[p]`` rows
    go to p (int64, on dest's device)."""
    if use_triton(dest) and 1 <= parts <= MAX_TRITON_PARTS and dest.numel() < 2**31:
        return partition_order_triton(dest, parts)
    return partition_order_torch(dest, parts)


def partition_order_torch(dest: torch.Tensor, parts: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference: a stable argsort and a bincount."""
    if dest.numel() == 0:
        return torch.zeros(0, dtype=torch.int64, device=dest.device), torch.zeros(
            parts, dtype=torch.int64, device=dest.device
        )
    return torch.argsort(dest, stable=True), torch.bincount(dest, minlength=parts)[:parts]


def _padded_parts(parts: int) -> int:
    """Histogram bins: a power of two past ``parts`` (the last bin takes the
    lanes past the input's end).

    >>> _padded_parts(1), _padded_parts(4), _padded_parts(7), _padded_parts(8)
    (2, 8, 8, 16)
    """
    return 1 << parts.bit_length()


def _block_rows(bins: int) -> int:
    """Rows per program for ``bins`` histogram bins: the ranking matrix kept
    within _RANK_CELLS.

    >>> _block_rows(2), _block_rows(32), _block_rows(64), _block_rows(128)
    (1024, 1024, 512, 256)
    """
    return min(_BLOCK, _RANK_CELLS // bins)


def partition_order_triton(dest: torch.Tensor, parts: int) -> tuple[torch.Tensor, torch.Tensor]:
    n = dest.numel()
    dev = dest.device
    bins = _padded_parts(parts)
    block = _block_rows(bins)
    nb = blocks(n, block)
    dest = dest.contiguous()
    hist = torch.empty((nb, bins), dtype=torch.int32, device=dev)
    order = torch.empty(n, dtype=torch.int64, device=dev)
    with on_device(dest):
        _histogram_kernel[(nb,)](dest, hist, n, PARTS=parts, BINS=bins, BLOCK=block)
        per_part = hist[:, :parts].t().reshape(-1).to(torch.int64)  # (destination, block) order
        base = torch.cumsum(per_part, 0) - per_part
        counts = per_part.view(parts, nb).sum(1)
        if n:
            _place_kernel[(nb,)](dest, base, order, n, nb, PARTS=parts, BINS=bins, BLOCK=block)
    return order, counts


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _histogram_kernel(dest_ptr, hist_ptr, n, PARTS: tl.constexpr, BINS: tl.constexpr, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        d = tl.load(dest_ptr + offs, mask=m, other=PARTS).to(tl.int32)
        h = tl.histogram(d, BINS)
        tl.store(hist_ptr + pid.to(tl.int64) * BINS + tl.arange(0, BINS), h)

    @triton.jit
    def _place_kernel(
        dest_ptr, base_ptr, order_ptr, n, nb, PARTS: tl.constexpr, BINS: tl.constexpr, BLOCK: tl.constexpr
    ):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        m = offs < n
        d = tl.load(dest_ptr + offs, mask=m, other=PARTS).to(tl.int32)
        hot = (d[:, None] == tl.arange(0, BINS)[None, :]).to(tl.int32)  # [BLOCK, BINS]
        before = tl.cumsum(hot, axis=0) - hot  # rows of the same destination earlier in the block
        rank = tl.sum(before * hot, axis=1)
        first = tl.load(base_ptr + d.to(tl.int64) * nb + pid, mask=m, other=0)
        tl.store(order_ptr + first + rank, offs, mask=m)
