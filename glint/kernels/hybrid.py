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
a PLAIN page's values copied; an optional column's page's definition levels
checked to be all 1 first), :func:`decode_streams_triton` writes the
decoded values of bare streams (the indices themselves). A second kernel,
:func:`decode_levels_triton`, decodes the definition levels of pages that
may hold NULLs into each row's place among the page's stored values, before
the page kernel runs (glint.io.raw_decode puts the values in their rows).
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
# widths of a v1 data page of an optional column without NULLs, whose body
# (from PAGE_START to PAGE_END) starts with its definition levels (a 4-byte
# length, then a hybrid stream of 1-bit levels, every one 1): then the index
# width byte and the index stream, or PLAIN values (at any byte offset)
LEVELS_THEN_WIDTH, LEVELS_THEN_PLAIN = -3, -4
# a PLAIN page whose values start at PAGE_START, at any byte offset (a v1
# page's whose levels the levels kernel decoded)
PLAIN_BYTES = -5

if HAS_TRITON:

    @triton.jit
    def _run_header(data, pos, end):
        # a hybrid stream's run header at data[pos] (a ULEB128 varint):
        # (its value, the position after it)
        h = tl.full((), 0, tl.int64)
        shift = tl.full((), 0, tl.int64)
        more = tl.full((), 1, tl.int64)
        while (more != 0) & (pos < end):
            b = tl.load(data + pos).to(tl.int64)
            pos += 1
            h = h | ((b & 0x7F) << shift)
            shift += 7
            more = b >> 7
        return h, pos

    @triton.jit
    def _all_ones(data, lp, le, count, BLOCK: tl.constexpr):
        # whether the 1-bit hybrid stream data[lp:le] starts with ``count``
        # levels that are all 1 (RLE runs of 1, bit-packed bytes of ones)
        lanes = tl.arange(0, BLOCK).to(tl.int64)
        need = count
        bad = tl.full((), 0, tl.int32)
        while (need > 0) & (lp < le) & (bad == 0):
            h, lp = _run_header(data, lp, le)
            n = h >> 1
            take = tl.full((), 0, tl.int64)
            if (h & 1) != 0:  # bit-packed: 8 * n levels in n bytes
                take = tl.minimum(n * 8, need)
                full = take // 8
                bad = bad | (lp + (take + 7) // 8 > le).to(tl.int32)
                for j in range(0, full, BLOCK):
                    k = j + lanes
                    m = (k < full) & (lp + k < le)
                    v = tl.load(data + lp + k, mask=m, other=255).to(tl.int32)
                    bad = bad | tl.max((v != 255).to(tl.int32), axis=0)
                rem = take - full * 8
                if rem > 0:
                    last = tl.load(data + lp + full, mask=lp + full < le, other=0).to(tl.int64)
                    ones = (tl.full((), 1, tl.int64) << rem) - 1
                    bad = bad | ((last & ones) != ones).to(tl.int32)
                lp += n
            else:  # RLE: n copies of the byte that follows
                v = tl.load(data + lp, mask=lp < le, other=0).to(tl.int64)
                take = tl.minimum(n, need)
                bad = bad | ((lp >= le) | ((take > 0) & (v != 1))).to(tl.int32)
                lp += 1
            need -= take
        return bad | (need > 0).to(tl.int32)

    @triton.jit
    def _pages_kernel(data, values, table, out, err, BLOCK: tl.constexpr, GATHER: tl.constexpr, ITEM: tl.constexpr):
        # one program per data page: its values, ``count`` of them, written to
        # out[o:o + count]. A PLAIN page (width -1) copies values[base:base +
        # count]; a dictionary-encoded page decodes its index stream (a
        # hybrid stream) and gathers values[base + index], where an index at
        # or past ``limit`` (the dictionary's size) reads nothing and sets
        # err[0], as does a stream that ends short. GATHER false: the
        # indices themselves are written (``values`` and ``limit`` unused).
        # Widths LEVELS_THEN_WIDTH / LEVELS_THEN_PLAIN: the page's levels
        # first (checked: all 1, else err[0]), then as above, a PLAIN page's
        # values read from ``data`` byte by byte (ITEM bytes each), as are
        # PLAIN_BYTES pages'.
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
        bad = tl.full((), 0, tl.int32)
        if (w == -3) | (w == -4):  # a v1 page's definition levels first
            ln = tl.full((), 0, tl.int64)
            for t in range(0, 4):
                ln = ln | (tl.load(data + pos + t, mask=pos + t < end, other=0).to(tl.int64) << (8 * t))
            le = pos + 4 + ln
            bad = bad | ((pos + 4 > end) | (le > end)).to(tl.int32)
            bad = bad | _all_ones(data, pos + 4, tl.minimum(le, end), left, BLOCK)
            pos = le
            if w == -3:  # the index width byte
                width = tl.load(data + pos, mask=pos < end, other=0).to(tl.int64)
                bad = bad | ((pos >= end) | (width > 32)).to(tl.int32)  # (MAX_BIT_WIDTH)
                w = tl.where(width > 32, 0, width)
                pos += 1
            else:
                bad = bad | (pos + left * ITEM > end).to(tl.int32)
        if w == -5:
            bad = bad | (pos + left * ITEM > end).to(tl.int32)
        if bad != 0:
            left = left * 0  # (nothing decoded from bytes that are not the page's)
        if (w == -4) | (w == -5):  # PLAIN after levels: byte by byte
            for j in range(0, left, BLOCK):
                k = j + lanes
                m = k < left
                word = tl.zeros([BLOCK], dtype=tl.int64)
                for t in range(0, ITEM):
                    word = word | (tl.load(data + pos + k * ITEM + t, mask=m, other=0).to(tl.int64) << (8 * t))
                if ITEM == 8:
                    v = word.to(out.dtype.element_ty, bitcast=True)
                else:
                    v = word.to(tl.int32).to(out.dtype.element_ty, bitcast=True)
                tl.store(out + o + k, v, mask=m)
        elif w < 0:  # PLAIN: a straight copy
            for j in range(0, left, BLOCK):
                k = j + lanes
                m = k < left
                tl.store(out + o + k, tl.load(values + base + k, mask=m), mask=m)
        else:
            mask_w = (tl.full((), 1, tl.int64) << w) - 1
            vbytes = (w + 7) // 8
            while (left > 0) & (pos < end):
                h, pos = _run_header(data, pos, end)
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


if HAS_TRITON:

    @triton.jit
    def _levels_kernel(data, buf, lev, dec, src, err, BLOCK: tl.constexpr):
        # one program per page of a chunk that may hold NULLs (glint.kernels
        # .parquet_raw's levels table; other rows are skipped): its 1-bit
        # definition levels (in ``buf`` after their 4-byte length, a v1 page;
        # in ``data``, a v2 page) decoded into src[o + r] for each of its
        # rows r: the row's place in the page kernel's output (o + the
        # values stored before it), -1 for a NULL. The page's row in
        # ``dec`` then says its stored values (count), and of a v1 page where
        # they start (its index width read from the byte there, or
        # PLAIN_BYTES). err[0] set when the levels do not cover the page's
        # rows or are not 0 or 1.
        p = tl.program_id(0)
        row = lev + p * 6
        kind = tl.load(row + 0)
        if kind >= 0:
            lanes = tl.arange(0, BLOCK).to(tl.int64)
            start = tl.load(row + 1)
            end = tl.load(row + 2)
            n = tl.load(row + 3)
            o = tl.load(row + 4)
            plain = tl.load(row + 5)
            in_buf = kind == 0
            bad = tl.full((), 0, tl.int32)
            lp = start
            le = end
            if in_buf:
                ln = tl.full((), 0, tl.int64)
                for t in range(0, 4):
                    ln = ln | (tl.load(buf + start + t, mask=start + t < end, other=0).to(tl.int64) << (8 * t))
                lp = start + 4
                le = lp + ln
                bad = bad | ((lp > end) | (le > end)).to(tl.int32)
                le = tl.minimum(le, end)
            j = tl.full((), 0, tl.int64)  # values stored so far
            r = tl.full((), 0, tl.int64)  # rows so far
            while (r < n) & (lp < le) & (bad == 0):
                h = tl.full((), 0, tl.int64)
                shift = tl.full((), 0, tl.int64)
                more = tl.full((), 1, tl.int64)
                while (more != 0) & (lp < le):
                    b = (tl.load(buf + lp, mask=in_buf, other=0) | tl.load(data + lp, mask=kind == 1, other=0)).to(
                        tl.int64
                    )
                    lp += 1
                    h = h | ((b & 0x7F) << shift)
                    shift += 7
                    more = b >> 7
                cnt = h >> 1
                take = tl.full((), 0, tl.int64)
                if (h & 1) != 0:  # bit-packed: 8 * cnt levels in cnt bytes
                    take = tl.minimum(cnt * 8, n - r)
                    bad = bad | (lp + (take + 7) // 8 > le).to(tl.int32)
                    for b0 in range(0, take, BLOCK):
                        k = b0 + lanes
                        m = k < take
                        at = lp + (k >> 3)
                        here = m & (at < le)
                        kinds = at * 0 + kind  # (the page's kind per lane: a block-shaped mask)
                        byte = tl.load(buf + at, mask=here & (kinds == 0), other=0) | tl.load(
                            data + at, mask=here & (kinds == 1), other=0
                        )
                        bit = ((byte.to(tl.int64) >> (k & 7)) & 1) * m.to(tl.int64)
                        rank = tl.cumsum(bit, 0)
                        tl.store(src + o + r + k, tl.where(bit != 0, o + j + rank - 1, -1), mask=m)
                        j += tl.sum(bit, 0)
                    lp += cnt
                else:  # RLE: cnt copies of the byte that follows
                    v = (
                        tl.load(buf + lp, mask=in_buf & (lp < le), other=0)
                        | tl.load(data + lp, mask=(kind == 1) & (lp < le), other=0)
                    ).to(tl.int64)
                    bad = bad | ((lp >= le) | (v > 1)).to(tl.int32)
                    lp += 1
                    take = tl.minimum(cnt, n - r)
                    for b0 in range(0, take, BLOCK):
                        k = b0 + lanes
                        tl.store(src + o + r + k, tl.where(v == 1, o + j + k, -1), mask=k < take)
                    j += tl.where(v == 1, take, 0)
                r += take
            bad = bad | (r < n).to(tl.int32)
            drow = dec + p * 7
            tl.store(drow + 3, tl.where(bad != 0, 0, j))
            if in_buf:  # the values follow the levels: the index width byte, or PLAIN values
                tl.store(drow + 0, tl.where(plain != 0, le, le + 1))
                tl.store(drow + 2, tl.where(plain != 0, -5, -2))
            tl.store(err, bad, mask=bad != 0)


def decode_levels_triton(
    data: torch.Tensor, buf: torch.Tensor, lev: torch.Tensor, dec: torch.Tensor, src: torch.Tensor, err: torch.Tensor
) -> None:
    """glint.kernels.parquet_raw's levels table ``lev`` (its rows of pages
    that may hold NULLs) decoded into ``src`` (int64, one per output row):
    each row's place in the page kernel's output, -1 for a NULL; ``dec``'s
    rows of those pages rewritten to their stored values. Runs after the
    pages are decompressed into ``buf`` and before the page kernel."""
    n = lev.shape[0]
    if n:
        with torch.cuda.device(data.device) if data.is_cuda else contextlib.nullcontext():
            _levels_kernel[(n,)](data, buf, lev, dec, src, err, BLOCK=BLOCK)


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
            _pages_kernel[(n,)](data, values, table, out, err, BLOCK=BLOCK, GATHER=True, ITEM=out.element_size())
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
            _pages_kernel[(n,)](data, out, table, out, err, BLOCK=BLOCK, GATHER=False, ITEM=out.element_size())
    return out
