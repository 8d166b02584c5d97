"""A copy into this GPU's memory from another GPU's, made by this GPU's
SMs reading over NVLink (a pull), where torch's own copy between devices
would be a push by the source GPU.

Why not torch's copy: for a copy from GPU k to GPU 0, torch enables GPU
k's access to GPU 0's memory, and its caching allocator then maps every
later allocation of GPU 0 into GPU k as well (with expandable segments, on
every growth of a segment). Measured on a host of four H200s under a 16 GB
limit (glint.io.forwarding): TPC-H SF 100's queries that copied nothing
over the bus took 30-50% longer once the three other GPUs had such access,
and the whole run 5.11 s against 4.15 s. A pull needs the other way
round only: GPU 0 may read GPU k's memory, and only GPU k's allocations
(the forwarder's bounce buffers) are mapped, once.

``pull(dst, src)``: the Triton kernel on CUDA (launched on the current
device and stream), ``dst.copy_(src)`` elsewhere (its reference)."""

from __future__ import annotations

import torch

from glint.kernels.backend import HAS_TRITON, blocks, triton_enabled

if HAS_TRITON:
    import triton
    import triton.language as tl

    @triton.jit
    def _copy_kernel(src, dst, n, BLOCK: tl.constexpr):
        at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        keep = at < n
        tl.store(dst + at, tl.load(src + at, mask=keep), mask=keep)


BLOCK_BYTES = 32 << 10  # bytes a program copies


def _widest(dst: torch.Tensor, src: torch.Tensor) -> torch.dtype:
    """The widest integer type both byte ranges can be read as (their
    addresses and length multiples of its size)."""
    n = dst.numel()
    for dt, size in ((torch.int64, 8), (torch.int32, 4)):
        if n % size == 0 and dst.data_ptr() % size == 0 and src.data_ptr() % size == 0:
            return dt
    return torch.uint8


def pull(dst: torch.Tensor, src: torch.Tensor, interpret: bool = False) -> None:
    """Copies ``src`` into ``dst`` (both uint8, contiguous, as many bytes;
    ``dst`` on the current CUDA device, ``src`` on one it can read).
    ``interpret``: run the Triton kernel on CPU tensors (under
    TRITON_INTERPRET=1, in the tests)."""
    if dst.numel() == 0:
        return
    if not (HAS_TRITON and ((dst.is_cuda and triton_enabled()) or interpret)):
        dst.copy_(src)
        return
    dt = _widest(dst, src)
    d, s = dst.view(dt), src.view(dt)
    n = d.numel()
    block = BLOCK_BYTES // d.element_size()
    _copy_kernel[(blocks(n, block),)](s, d, n, BLOCK=block)
