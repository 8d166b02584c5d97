"""Parquet's RLE / bit-packed hybrid streams (dictionary indices, definition
levels) decoded on the GPU: one Triton program per stream walks its run
headers (a ULEB128 varint each: bit 0 set, a bit-packed run of 8 * (h >> 1)
values of ``width`` bits, LSB first; clear, h >> 1 copies of one value in
ceil(width / 8) bytes) and writes each run's values with block-wide vector
stores. Walking the headers is sequential within a stream but streams are
many (a Parquet page each, about 20,000 values), so the GPU runs thousands of
them side by side, where the host would parse millions of run headers one by
one (the torch reference in glint.io.parquet_pages does exactly that,
for the CPU and the tests).

One kernel, two uses: :func:`decode_pages_triton` decodes whole data pages
(a dictionary-encoded page's indices, each replaced by its dictionary value;
a PLAIN page's values copied), :func:`decode_streams_triton` writes the
decoded values of bare streams (the indices themselves).
"""

from __future__ import annotations

import contextlib

import torch

try:
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover - Triton comes with CUDA builds of torch
    HAS_TRITON = False

BLOCK = 512  # values a program writes per step (a bit-packed run holds up to 504 in practice)


# ------------------------------------------------------------------ whole pages: indices and values
# Columns of the page table handed to decode_pages_triton (int64, one row per page)
PAGE_START, PAGE_END, PAGE_WIDTH, PAGE_COUNT, PAGE_OUT, PAGE_BASE, PAGE_LIMIT = range(7)
PAGE_FIELDS = 7

if HAS_TRITON:

    @triton.jit
    def _pages_kernel(data, values, table, out, err, BLOCK: tl.constexpr, GATHER: tl.constexpr):
        # one program per data page: its values, ``count`` of them, written to
        # out[o:o + count]. A PLAIN page (width -1) copies values[base:base +
        # count]; a dictionary-encoded page decodes its index stream (a
        # hybrid stream) and gathers values[base + index], where an index at
        # or past ``limit`` (the dictionary's size) reads nothing and sets
        # err[0], as does a stream that ends short. GATHER false: the
        # indices themselves are written (``values`` and ``limit`` unused).
        s = tl.program_id(0)
        row = table + s * 7
        pos = tl.load(row + 0)
        end = tl.load(row + 1)
        w = tl.load(row + 2)
        left = tl.load(row + 3)
        o = tl.load(row + 4)
        base = tl.load(row + 5)
        limit = tl.load(row + 6)
        lanes = tl.arange(0, BLOCK).to(tl.int64)
        if w < 0:  # PLAIN: a straight copy
            for j in range(0, left, BLOCK):
                k = j + lanes
                m = k < left
                tl.store(out + o + k, tl.load(values + base + k, mask=m), mask=m)
        else:
            mask_w = (tl.full((), 1, tl.int64) << w) - 1
            vbytes = (w + 7) // 8
            bad = tl.full((), 0, tl.int32)
            while (left > 0) & (pos < end):
                h = tl.full((), 0, tl.int64)
                shift = tl.full((), 0, tl.int64)
                more = tl.full((), 1, tl.int64)
                while (more != 0) & (pos < end):
                    b = tl.load(data + pos).to(tl.int64)
                    pos += 1
                    h = h | ((b & 0x7F) << shift)
                    shift += 7
                    more = b >> 7
                n = h >> 1
                if (h & 1) != 0:  # bit-packed: 8 * n indices
                    take = tl.minimum(n * 8, left)
                    first = pos * 8
                    for j in range(0, take, BLOCK):
                        k = j + lanes
                        m = k < take
                        bit = first + k * w
                        byte = bit >> 3
                        word = tl.load(data + byte, mask=m, other=0).to(tl.int64)
                        word = word | (tl.load(data + byte + 1, mask=m, other=0).to(tl.int64) << 8)
                        word = word | (tl.load(data + byte + 2, mask=m, other=0).to(tl.int64) << 16)
                        word = word | (tl.load(data + byte + 3, mask=m, other=0).to(tl.int64) << 24)
                        word = word | (tl.load(data + byte + 4, mask=m, other=0).to(tl.int64) << 32)
                        idx = (word >> (bit & 7)) & mask_w
                        if GATHER:
                            ok = m & (idx < limit)
                            bad = bad | tl.max((m & (idx >= limit)).to(tl.int32), axis=0)
                            tl.store(out + o + k, tl.load(values + base + idx, mask=ok), mask=m)
                        else:
                            tl.store(out + o + k, idx.to(out.dtype.element_ty), mask=m)
                    pos += n * w
                else:  # RLE: n copies of one index
                    rle = tl.full((), 0, tl.int64)
                    for t in range(0, vbytes):
                        rle = rle | (tl.load(data + pos + t).to(tl.int64) << (8 * t))
                    pos += vbytes
                    take = tl.minimum(n, left)
                    if GATHER:
                        in_range = rle < limit
                        bad = bad | ((take > 0) & (rle >= limit)).to(tl.int32)
                        # the value loaded by every lane (not zeros + value: on the
                        # GPU arithmetic turns a NaN's payload into 0x7fffffff, and
                        # the bits must stay the file's); an index past the
                        # dictionary reads entry 0, or the 8 bytes that follow the
                        # values: the flag makes the caller raise
                        v = tl.load(values + base + tl.where(in_range, rle, 0) + lanes * 0)
                    else:
                        v = (rle + lanes * 0).to(out.dtype.element_ty)
                    for j in range(0, take, BLOCK):
                        k = j + lanes
                        tl.store(out + o + k, v, mask=k < take)
                o += take
                left -= take
            bad = bad | (left > 0).to(tl.int32)
            tl.store(err, bad, mask=bad != 0)


def decode_pages_triton(
    data: torch.Tensor, values: torch.Tensor, table: torch.Tensor, out: torch.Tensor, err: torch.Tensor
) -> torch.Tensor:
    """Every page of ``table`` (an int64 [pages, PAGE_FIELDS] tensor: stream
    start and end in ``data``, index bit width or -1 for a PLAIN page, value
    count, output offset, base in ``values``, dictionary size) decoded into
    ``out`` (``values``' dtype) by one program per page; err[0] (int32) is set
    to 1 when an index is past its dictionary or a stream ends short (what
    was read is then not the page's: the caller raises). ``data``: uint8,
    followed by at least 8 bytes the bit gathers may read."""
    n = table.shape[0]
    if n:
        with torch.cuda.device(data.device) if data.is_cuda else contextlib.nullcontext():
            _pages_kernel[(n,)](data, values, table, out, err, BLOCK=BLOCK, GATHER=True)
    return out


def decode_streams_triton(
    data: torch.Tensor,
    starts: torch.Tensor,
    ends: torch.Tensor,
    widths: torch.Tensor,
    counts: torch.Tensor,
    out_offsets: torch.Tensor,
    out: torch.Tensor,
) -> torch.Tensor:
    """The values of bare hybrid streams (int32 ``out``): stream s is
    ``data[starts[s]:ends[s]]`` (``data`` followed by at least 8 bytes),
    ``widths[s]`` bits wide (0..32), ``counts[s]`` values (a last bit-packed
    run's padding dropped) written to ``out[out_offsets[s]:]``. A stream that
    ends before its count leaves the rest of its output untouched (the
    caller checks the values it needs against the bytes it had)."""
    n = starts.shape[0]
    if n:
        zero = torch.zeros_like(starts)
        table = torch.stack([starts, ends, widths, counts, out_offsets, zero, zero], 1).to(torch.int64).contiguous()
        err = torch.zeros(1, dtype=torch.int32, device=data.device)
        with torch.cuda.device(data.device) if data.is_cuda else contextlib.nullcontext():
            _pages_kernel[(n,)](data, out, table, out, err, BLOCK=BLOCK, GATHER=False)
    return out
