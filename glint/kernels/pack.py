"""Several small integer columns packed into one int64 key per row:
``sum((part - lo) << shift)``, the GROUP BY and join key of several columns
(glint.exec.keys). Evaluated part by part, each part costs a widening copy,
a subtraction, a shift and an OR over the whole chunk (TPC-H Q1's two flag
columns: about 1.4 ms of each 33M-row chunk on an H200); the Triton kernel
reads each part once, in its own width (int32 dictionary codes, int64
values, booleans), and writes the key once, up to MAX_PARTS parts a launch.

>>> import torch
>>> pack([torch.tensor([3, 4], dtype=torch.int32), torch.tensor([True, False])], [3, 0], [1, 0]).tolist()
[1, 2]
"""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, on_device, use_triton

MAX_PARTS = 4  # parts one launch reads


def pack(parts: list[torch.Tensor], los: list[int], shifts: list[int], dtype=torch.int64) -> torch.Tensor:
    """``sum((parts[i] - los[i]) << shifts[i])`` per row, as ``dtype``; the
    caller keeps every ``(part - lo) << shift`` within 62 bits (within
    ``dtype``'s positive range, for a narrower one) and the shifted fields
    apart. A narrow key (int8 for TPC-H Q1's two flags) is a group id the
    few-groups kernels read in an eighth of the bytes."""
    if HAS_TRITON and use_triton(parts[0]) and parts[0].shape[0]:
        return pack_triton(parts, los, shifts, dtype)
    return pack_torch(parts, los, shifts, dtype)


def pack_torch(parts, los, shifts, dtype=torch.int64) -> torch.Tensor:
    """The reference: one field at a time."""
    key = torch.zeros(parts[0].shape[0], dtype=torch.int64, device=parts[0].device)
    for p, lo, sh in zip(parts, los, shifts):
        key |= (p.long() - lo) << sh
    return key if dtype == torch.int64 else key.to(dtype)


def pack_triton(parts, los, shifts, dtype=torch.int64) -> torch.Tensor:
    n = parts[0].shape[0]
    key = torch.empty(n, dtype=dtype, device=parts[0].device)
    block = 1024
    for start in range(0, len(parts), MAX_PARTS):
        chunk = list(range(start, min(start + MAX_PARTS, len(parts))))
        args = []
        for j in range(MAX_PARTS):
            i = chunk[j] if j < len(chunk) else chunk[0]
            p = parts[i].view(torch.uint8) if parts[i].dtype == torch.bool else parts[i]
            args += [p, los[i], shifts[i]]
        with on_device(key):
            _pack_kernel[(blocks(n, block),)](key, n, *args, K=len(chunk), ACC=start > 0, BLOCK=block)
    return key


if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _field(p_ptr, lo, sh, offs, inb):
        return (tl.load(p_ptr + offs, mask=inb, other=0).to(tl.int64) - lo) << sh

    @triton.jit
    def _pack_kernel(
        key_ptr, n, p0, lo0, sh0, p1, lo1, sh1, p2, lo2, sh2, p3, lo3, sh3,
        K: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr,
    ):  # fmt: skip
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inb = offs < n
        key = _field(p0, lo0, sh0, offs, inb)
        if K > 1:
            key |= _field(p1, lo1, sh1, offs, inb)
        if K > 2:
            key |= _field(p2, lo2, sh2, offs, inb)
        if K > 3:
            key |= _field(p3, lo3, sh3, offs, inb)
        if ACC:
            key |= tl.load(key_ptr + offs, mask=inb, other=0).to(tl.int64)
        tl.store(key_ptr + offs, key.to(key_ptr.dtype.element_ty), mask=inb)
