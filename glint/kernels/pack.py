"""Several small integer columns packed into one int64 key per row:
``sum((part - lo) << shift)``, the GROUP BY and join key of several columns
(glint.exec.keys). Evaluated part by part, each part costs a widening copy,
a subtraction, a shift and an OR over the whole chunk (TPC-H Q1's two flag
columns: about 1.4 ms of each 33M-row chunk on an H200); the Triton kernel
reads each part once, in its own width (int32 dictionary codes, int64
values, booleans), and writes the key once, up to MAX_PARTS parts a launch.

:func:`pack_checked` is the same for a join's probe rows against its build
side's value ranges: a part outside its range (a value the build side does not
have) or NULL makes the row unmatchable, and the key and that test come from
one launch instead of six operations a part.

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


def pack_checked(
    parts: list[torch.Tensor],
    valids: list[torch.Tensor | None],
    los: list[int],
    his: list[int],
    shifts: list[int],
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """(key, ok) per row: ``ok`` where every part is valid (``valids[i]`` None:
    no NULLs) and within ``[los[i], his[i]]``; ``key`` the parts packed as
    :func:`pack` does where ``ok``, else 0. At most MAX_PARTS parts go to
    the kernel in one launch; more run the reference.

    >>> k, ok = pack_checked([torch.tensor([3, 9, 4])], [None], [3], [5], [0])
    >>> k.tolist(), ok.tolist()
    ([0, 0, 1], [True, False, True])
    """
    if HAS_TRITON and use_triton(parts[0]) and parts[0].shape[0] and len(parts) <= MAX_PARTS:
        return pack_checked_triton(parts, valids, los, his, shifts)
    return pack_checked_torch(parts, valids, los, his, shifts)


def pack_checked_torch(parts, valids, los, his, shifts):
    """The reference: a part at a time (compared before subtracting: values
    minus lo may wrap around int64)."""
    key = ok = None
    for p, v, lo, hi, sh in zip(parts, valids, los, his, shifts):
        p = p.long()
        inside = (p >= lo) & (p <= hi)
        if v is not None:
            inside &= v
        ok = inside if ok is None else ok & inside
        f = (p - lo) << sh
        key = f if key is None else key | f
    return torch.where(ok, key, torch.zeros_like(key)), ok


def pack_checked_triton(parts, valids, los, his, shifts):
    n = parts[0].shape[0]
    dev = parts[0].device
    key = torch.empty(n, dtype=torch.int64, device=dev)
    ok = torch.empty(n, dtype=torch.bool, device=dev)
    args = []
    for j in range(MAX_PARTS):
        i = j if j < len(parts) else 0
        p = parts[i].contiguous()
        p = p.view(torch.uint8) if p.dtype == torch.bool else p
        v = valids[i]
        args += [p, key if v is None else v.contiguous().view(torch.uint8), los[i], his[i], shifts[i]]
    flags = [j < len(parts) and valids[j] is not None for j in range(MAX_PARTS)]
    block = 1024
    with on_device(key):
        _pack_checked_kernel[(blocks(n, block),)](
            key, ok.view(torch.uint8), n, *args,
            K=len(parts), V0=flags[0], V1=flags[1], V2=flags[2], V3=flags[3], BLOCK=block,
        )  # fmt: skip
    return key, ok


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

    @triton.jit
    def _checked(key, ok, p_ptr, v_ptr, lo, hi, sh, offs, inb, V: tl.constexpr):
        x = tl.load(p_ptr + offs, mask=inb, other=0).to(tl.int64)
        inside = (x >= lo) & (x <= hi)
        if V:
            inside = inside & (tl.load(v_ptr + offs, mask=inb, other=0) != 0)
        return key | ((x - lo) << sh), ok & inside

    @triton.jit
    def _pack_checked_kernel(
        key_ptr, ok_ptr, n,
        p0, v0, lo0, hi0, sh0, p1, v1, lo1, hi1, sh1, p2, v2, lo2, hi2, sh2, p3, v3, lo3, hi3, sh3,
        K: tl.constexpr, V0: tl.constexpr, V1: tl.constexpr, V2: tl.constexpr, V3: tl.constexpr,
        BLOCK: tl.constexpr,
    ):  # fmt: skip
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        inb = offs < n
        key = tl.zeros([BLOCK], dtype=tl.int64)
        ok = inb
        key, ok = _checked(key, ok, p0, v0, lo0, hi0, sh0, offs, inb, V0)
        if K > 1:
            key, ok = _checked(key, ok, p1, v1, lo1, hi1, sh1, offs, inb, V1)
        if K > 2:
            key, ok = _checked(key, ok, p2, v2, lo2, hi2, sh2, offs, inb, V2)
        if K > 3:
            key, ok = _checked(key, ok, p3, v3, lo3, hi3, sh3, offs, inb, V3)
        tl.store(key_ptr + offs, tl.where(ok, key, 0), mask=inb)
        tl.store(ok_ptr + offs, ok.to(tl.uint8), mask=inb)
