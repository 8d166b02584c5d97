"""Rows of several columns at the same positions, in one pass: a join's
output takes each payload column (and its validity) at the matched rows.

``t[idx]`` per tensor reads the positions once per tensor and launches once
per tensor. :func:`take_many` reads them once for up to ``PER_LAUNCH``
tensors of any element types: a Triton program loads a block of positions,
then loads and stores each tensor's values at them. On tensors that are not
on CUDA (or without Triton) it is ``t[idx]`` per tensor, the reference the
tests run the kernel against (under ``TRITON_INTERPRET=1`` on the CPU).

>>> import torch
>>> a, b = torch.tensor([10, 11, 12]), torch.tensor([True, False, True])
>>> [t.tolist() for t in take_many([a, b], torch.tensor([2, 0, 2]))]
[[12, 10, 12], [True, True, True]]
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton

PER_LAUNCH = 8  # tensors one launch takes
# whether Batch.take and a join's output gather through take_many (off: t[idx] per tensor, for
# measuring one against the other)
FUSED = True
_BLOCK = 1024
_WARPS = 4


def fusable(t: torch.Tensor) -> bool:
    """A one-dimensional tensor with its elements next to each other."""
    return t.dim() == 1 and t.is_contiguous()


def take_many(tensors: list[torch.Tensor], idx: torch.Tensor) -> list[torch.Tensor]:
    """``[t[idx] for t in tensors]`` for int64 positions. The tensors of the
    first one's length are gathered together; as with ``t[idx]``, a negative
    position counts from the end. A position outside a tensor (where ``t[idx]``
    raises) gives zero, never a read outside it."""
    if not tensors:
        return []
    if not use_triton(idx) or idx.dtype != torch.int64 or idx.dim() != 1:
        return [t[idx] for t in tensors]
    out: list[torch.Tensor | None] = [None] * len(tensors)
    size = tensors[0].shape[0]
    fused = [i for i, t in enumerate(tensors) if fusable(t) and t.device == idx.device and t.shape[0] == size]
    for i, t in enumerate(tensors):
        if i not in fused:
            out[i] = t[idx]
    n = idx.shape[0]
    idx = idx.contiguous()
    for a in range(0, len(fused), PER_LAUNCH):  # over groups of columns, not rows
        group = fused[a : a + PER_LAUNCH]
        srcs = [tensors[i] for i in group]
        dsts = [torch.empty(n, dtype=s.dtype, device=s.device) for s in srcs]
        if n:
            _launch(srcs, dsts, idx, n, size)
        for i, d in zip(group, dsts):
            out[i] = d
    return out  # type: ignore[return-value]


def _launch(srcs: list[torch.Tensor], dsts: list[torch.Tensor], idx: torch.Tensor, n: int, size: int) -> None:
    k = len(srcs)
    args: list[torch.Tensor] = []
    for j in range(PER_LAUNCH):  # over the launch's slots, not rows
        s, d = (srcs[j], dsts[j]) if j < k else (srcs[0], dsts[0])
        args += [s, d]
    with on_device(idx):
        _take_kernel[(blocks(n, _BLOCK),)](idx, n, size, *args, K=k, BLOCK=_BLOCK, num_warps=_WARPS)


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _take_one(src, dst, at, i, ok, inside):
        tl.store(dst + i, tl.load(src + at, mask=inside, other=0), mask=ok)

    @triton.jit
    def _take_kernel(
        idx,
        n,
        size,
        s0,
        d0,
        s1,
        d1,
        s2,
        d2,
        s3,
        d3,
        s4,
        d4,
        s5,
        d5,
        s6,
        d6,
        s7,
        d7,
        K: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        # the positions read once for all K tensors (of ``size`` rows each); the slots past K
        # are not touched
        i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        ok = i < n
        at = tl.load(idx + i, mask=ok, other=0)
        at = tl.where(at < 0, at + size, at)
        inside = ok & (at >= 0) & (at < size)
        _take_one(s0, d0, at, i, ok, inside)
        if K > 1:
            _take_one(s1, d1, at, i, ok, inside)
        if K > 2:
            _take_one(s2, d2, at, i, ok, inside)
        if K > 3:
            _take_one(s3, d3, at, i, ok, inside)
        if K > 4:
            _take_one(s4, d4, at, i, ok, inside)
        if K > 5:
            _take_one(s5, d5, at, i, ok, inside)
        if K > 6:
            _take_one(s6, d6, at, i, ok, inside)
        if K > 7:
            _take_one(s7, d7, at, i, ok, inside)
