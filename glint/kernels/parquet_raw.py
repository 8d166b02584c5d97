"""Parquet column chunks decoded on the GPU from their bytes as stored: page
headers and snappy decompression, so that the host only reads each column
chunk (one ``pread``) and copies it up.

Two Triton kernels come before glint.kernels.hybrid's page kernel:

- :func:`walk_chunks_triton`: one program per column chunk walks its page
  headers (Thrift compact protocol, a small state machine over field headers:
  the page header's integer fields are kept, statistics and anything else
  skipped) and writes a row per page to two tables: where its body lies and
  where it is decompressed to (``pages``, for the next kernel), and the page
  kernel's row (``dec``: a PLAIN page's values or a dictionary-encoded page's
  index stream, its output offset and its dictionary). Run twice: first it
  only counts each chunk's pages (the tables' size), then it writes them.
- :func:`inflate_pages_triton`: one program per page decompresses (snappy) or
  copies its body to an 8-byte aligned place in one buffer, which the page
  kernel then reads as the dictionary values, PLAIN values and index streams.

Snappy (github.com/google/snappy, format_description.txt): a varint of the
uncompressed length, then elements, each a tag byte: low two bits 00 a
literal (length - 1 in the upper six bits, or in the 1-4 bytes that follow
when those say 60-63), 01 a copy of 4-11 bytes with an 11-bit offset, 10 a
copy of 1-64 bytes with a 2-byte offset, 11 the same with a 4-byte offset. A
copy may overlap what it writes (offset < length: a repeated pattern), so it
is done as ``out[op + k] = out[op - offset + k % offset]``, which reads only
bytes written before the element; a barrier makes the earlier elements'
stores (other threads') visible first. Decompression is sequential within a
page, but pages are many (tens of thousands for a TPC-H scan at SF 100): the
GPU runs thousands of them side by side.

Only what the scan routes here is handled: flat columns without definition
levels (``max_definition_level`` 0), PLAIN and dictionary encodings, snappy
or uncompressed (glint.storage.parquet_pages.read_raw_chunk checks the
metadata first); anything else found in the bytes is bad data. The pure-torch
reference (and the CPU path) is glint.storage.parquet_pages' host parser with
``pa.Codec``: see decode_raw.
"""
from __future__ import annotations

import contextlib

import torch

try:
    import triton
    import triton.language as tl
    HAS_TRITON = True
except ImportError:             # pragma: no cover - Triton comes with CUDA builds of torch
    HAS_TRITON = False

# column chunk table (int64, one row per chunk)
C_START, C_END, C_OUT, C_DST, C_DST_END, C_PAGE, C_VALUES, C_CODEC, C_CAP, C_DICT_AT, C_DICT_N, C_DICT_SIZE = \
    range(12)
CHUNK_FIELDS = 12
# page table for inflate_pages_triton (int64, one row per page)
P_SRC, P_SIZE, P_DST, P_USIZE, P_CODEC = range(5)
PAGE_FIELDS = 5
# codecs
COPY, SNAPPY = 0, 1
INFLATE_BLOCK = 128             # bytes a program copies per step (a snappy copy is at most 64)
WIDTH_FROM_DATA = -2            # a dec row's width: the byte before the index stream says it

if HAS_TRITON:
    @triton.jit
    def _uvarint(data, pos, end):
        # a ULEB128 varint at data[pos]: (value, position after it, 1 when it ran past end)
        v = tl.full((), 0, tl.int64)
        shift = tl.full((), 0, tl.int64)
        more = tl.full((), 1, tl.int64)
        while (more != 0) & (pos < end) & (shift < 64):
            b = tl.load(data + pos).to(tl.int64)
            pos += 1
            v = v | ((b & 0x7F) << shift)
            shift += 7
            more = b >> 7
        return v, pos, more

    @triton.jit
    def _page_row(pages, dec, p, src, csize, dst, usize, codec, d0, d1, d2, d3, d4, d5, d6):
        # page p's row of the inflate table (where its body is and goes) and of
        # the page kernel's table (glint.kernels.hybrid: stream, width, values,
        # output row, dictionary)
        prow = pages + p * 5
        tl.store(prow + 0, src)
        tl.store(prow + 1, csize)
        tl.store(prow + 2, dst)
        tl.store(prow + 3, usize)
        tl.store(prow + 4, codec)
        drow = dec + p * 7
        tl.store(drow + 0, d0)
        tl.store(drow + 1, d1)
        tl.store(drow + 2, d2)
        tl.store(drow + 3, d3)
        tl.store(drow + 4, d4)
        tl.store(drow + 5, d5)
        tl.store(drow + 6, d6)

    @triton.jit
    def _walk_kernel(data, chunks, counts, pages, dec, ITEM: tl.constexpr, WRITE: tl.constexpr):
        # one program per column chunk: its page headers walked; counts[c] =
        # its pages (index pages are skipped; rows are written for the first
        # C_CAP of them, from the chunk's first row), -1 when the bytes are
        # not a good chunk. A chunk whose dictionary the host decompressed
        # (C_DICT_AT >= 0: C_DICT_N entries, C_DICT_SIZE bytes, at C_DICT_AT
        # in data) starts with that dictionary as a page to copy; its bytes
        # from C_START on are its data pages. -1 as well when the bytes are
        # not a good chunk (a header that does not parse, a page past the
        # chunk's end, values that do not add up to the chunk's, an encoding
        # or page kind not handled here).
        c = tl.program_id(0)
        row = chunks + c * 12
        pos = tl.load(row + 0)
        end = tl.load(row + 1)
        out = tl.load(row + 2)
        dst = tl.load(row + 3)
        dst_end = tl.load(row + 4)
        p = tl.load(row + 5)
        want = tl.load(row + 6)
        codec = tl.load(row + 7)
        cap = tl.load(row + 8)
        dict_at = tl.load(row + 9)
        zero = tl.full((), 0, tl.int64)
        npages = zero
        seen = zero                             # values of the data pages so far
        dict_base = zero - 1                    # the dictionary's first entry (in ITEMs)
        dict_n = zero
        bad = zero
        if dict_at >= 0:                        # the dictionary, decompressed by the host: copied
            dn = tl.load(row + 10)
            dsize = tl.load(row + 11)
            bad = bad | ((dn < 0) | (dsize < dn * ITEM)).to(tl.int64)
            if WRITE & (cap > 0):
                _page_row(pages, dec, p, dict_at, dsize, dst, dsize, zero,
                          zero, zero, zero - 1, zero, out, dst // ITEM, zero)
            dict_base = dst // ITEM
            dict_n = dn
            p += 1
            npages += 1
            dst += (dsize + 7) // 8 * 8
            bad = bad | (dst > dst_end).to(tl.int64)
        while (pos < end) & (bad == 0):
            # ---- one PageHeader: fields by id, at depth 0 (PageHeader), 1
            # (its data / dictionary / v2 header: s1 says which), 2 (statistics)
            ptype = zero - 1
            usize = zero - 1
            csize = zero - 1
            nv = zero - 1
            enc = zero - 1
            lv = zero
            comp = zero + 1
            depth = zero
            f0 = zero
            f1 = zero
            f2 = zero
            s1 = zero
            done = zero
            while (done == 0) & (bad == 0):
                if pos >= end:
                    bad = zero + 1
                else:
                    h = tl.load(data + pos).to(tl.int64)
                    pos += 1
                    if h == 0:                                  # end of a struct
                        if depth == 0:
                            done = zero + 1
                        else:
                            depth -= 1
                    else:
                        t = h & 15
                        delta = h >> 4
                        cur = tl.where(depth == 0, f0, tl.where(depth == 1, f1, f2))
                        f = cur + delta
                        if delta == 0:
                            zz, pos, more = _uvarint(data, pos, end)
                            f = (zz >> 1) ^ (0 - (zz & 1))
                            bad = bad | more
                        f0 = tl.where(depth == 0, f, f0)
                        f1 = tl.where(depth == 1, f, f1)
                        f2 = tl.where(depth == 2, f, f2)
                        val = zero
                        if (t == 1) | (t == 2):                 # bool: the type is the value
                            val = (t == 1).to(tl.int64)
                        elif t == 3:                            # byte
                            val = tl.load(data + pos, mask=pos < end, other=0).to(tl.int64)
                            pos += 1
                        elif (t >= 4) & (t <= 6):               # i16 / i32 / i64: zigzag varint
                            zz, pos, more = _uvarint(data, pos, end)
                            val = (zz >> 1) ^ (0 - (zz & 1))
                            bad = bad | more
                        elif t == 7:                            # double
                            pos += 8
                        elif t == 8:                            # binary: length, bytes
                            ln, pos, more = _uvarint(data, pos, end)
                            pos += ln
                            bad = bad | more
                        elif t == 12:                           # struct: one level down
                            if depth == 0:
                                s1 = f
                            depth += 1
                            f1 = tl.where(depth == 1, zero, f1)
                            f2 = tl.where(depth == 2, zero, f2)
                            bad = bad | (depth > 2).to(tl.int64)
                        else:                                   # lists, sets, maps: not in a page header
                            bad = zero + 1
                        if t != 12:
                            if depth == 0:
                                ptype = tl.where(f == 1, val, ptype)
                                usize = tl.where(f == 2, val, usize)
                                csize = tl.where(f == 3, val, csize)
                            if depth == 1:
                                if s1 == 5:                     # DataPageHeader
                                    nv = tl.where(f == 1, val, nv)
                                    enc = tl.where(f == 2, val, enc)
                                if s1 == 7:                     # DictionaryPageHeader
                                    nv = tl.where(f == 1, val, nv)
                                    enc = tl.where(f == 2, val, enc)
                                if s1 == 8:                     # DataPageHeaderV2
                                    nv = tl.where(f == 1, val, nv)
                                    enc = tl.where(f == 4, val, enc)
                                    lv = lv + tl.where((f == 5) | (f == 6), val, 0)
                                    comp = tl.where(f == 7, val, comp)
            if bad == 0:
                # ---- the page's body: pos .. pos + csize
                body = pos
                pos = pos + csize
                bad = bad | ((csize < 0) | (usize < 0) | (pos > end)).to(tl.int64)
                is_dict = ptype == 2
                is_data = (ptype == 0) | (ptype == 3)
                if ptype != 1:                                  # (index pages: skipped)
                    bad = bad | ((~is_dict) & (~is_data)).to(tl.int64)
                    plain = enc == 0
                    dic = (enc == 2) | (enc == 8)
                    if is_dict:
                        bad = bad | ((dict_base >= 0) | (seen > 0) | ((enc != 0) & (enc != 2)) |
                                     (nv < 0) | (usize < nv * ITEM)).to(tl.int64)
                    else:
                        bad = bad | ((lv != 0) | (nv < 0) | ((~plain) & (~dic)) |
                                     (plain & (usize < nv * ITEM)) | (dic & (dict_base < 0)) |
                                     (dic & (nv > 0) & (usize < 1))).to(tl.int64)
                    pcodec = tl.where((ptype == 3) & (comp == 0), 0, codec)
                    if WRITE & (npages < cap):
                        dic_page = is_data & dic
                        _page_row(pages, dec, p, body, csize, dst, usize, pcodec,
                                  tl.where(dic_page, dst + 1, zero), tl.where(dic_page, dst + usize, zero),
                                  tl.where(dic_page, zero - 2, zero - 1), tl.where(is_data, nv, zero), out + seen,
                                  tl.where(dic_page, dict_base, dst // ITEM), tl.where(dic_page, dict_n, zero))
                    if is_dict:
                        dict_base = dst // ITEM
                        dict_n = nv
                    else:
                        seen += nv
                    p += 1
                    npages += 1
                    dst += (usize + 7) // 8 * 8
                    bad = bad | (dst > dst_end).to(tl.int64)
        bad = bad | ((seen != want) | (pos != end)).to(tl.int64)
        tl.store(counts + c, tl.where(bad != 0, -1, npages))

    @triton.jit
    def _inflate_kernel(src, dst, pages, err, BLOCK: tl.constexpr):
        # one program per page: its body, src[s:s + n], decompressed (or
        # copied) to dst[d:d + u]; err[0] set when it does not come out at
        # exactly u bytes or is not snappy.
        pid = tl.program_id(0)
        row = pages + pid * 5
        ip = tl.load(row + 0)
        n = tl.load(row + 1)
        d = tl.load(row + 2)
        u = tl.load(row + 3)
        codec = tl.load(row + 4)
        end = ip + n
        lanes = tl.arange(0, BLOCK).to(tl.int64)
        lanes32 = tl.arange(0, BLOCK)
        zero = tl.full((), 0, tl.int64)
        bad = zero
        if codec == 0:
            bad = (n != u).to(tl.int64)
            m_n = tl.minimum(n, u)
            for j in range(0, m_n, BLOCK):
                k = j + lanes
                m = k < m_n
                tl.store(dst + d + k, tl.load(src + ip + k, mask=m), mask=m)
        else:
            ulen, ip, more = _uvarint(src, ip, end)
            bad = more | (ulen != u).to(tl.int64)
            op = zero
            while (ip < end) & (bad == 0):
                tag = tl.load(src + ip).to(tl.int64)
                ip += 1
                kind = tag & 3
                if kind == 0:                                   # literal
                    ln = tag >> 2
                    if ln >= 60:                                # its length in 1-4 more bytes
                        nb = ln - 59
                        ln = tl.load(src + ip, mask=ip < end, other=0).to(tl.int64)
                        ln = ln | (tl.load(src + ip + 1, mask=(nb > 1) & (ip + 1 < end), other=0).to(tl.int64) << 8)
                        ln = ln | (tl.load(src + ip + 2, mask=(nb > 2) & (ip + 2 < end), other=0).to(tl.int64) << 16)
                        ln = ln | (tl.load(src + ip + 3, mask=(nb > 3) & (ip + 3 < end), other=0).to(tl.int64) << 24)
                        ip += nb
                    ln += 1
                    bad = bad | ((ip + ln > end) | (op + ln > u)).to(tl.int64)
                    if bad == 0:
                        for j in range(0, ln, BLOCK):
                            k = j + lanes
                            m = k < ln
                            tl.store(dst + d + op + k, tl.load(src + ip + k, mask=m), mask=m)
                        ip += ln
                        op += ln
                else:                                           # copy
                    b0 = tl.load(src + ip, mask=ip < end, other=0).to(tl.int64)
                    b1 = tl.load(src + ip + 1, mask=(kind != 1) & (ip + 1 < end), other=0).to(tl.int64)
                    b23 = tl.load(src + ip + 2, mask=(kind == 3) & (ip + 2 < end), other=0).to(tl.int64) | \
                        (tl.load(src + ip + 3, mask=(kind == 3) & (ip + 3 < end), other=0).to(tl.int64) << 8)
                    ln = tl.where(kind == 1, ((tag >> 2) & 7) + 4, (tag >> 2) + 1)
                    off = tl.where(kind == 1, ((tag >> 5) << 8) | b0, b0 | (b1 << 8) | (b23 << 16))
                    ip += tl.where(kind == 1, 1, tl.where(kind == 2, 2, 4))
                    bad = bad | ((ip > end) | (off == 0) | (off > op) | (op + ln > u)).to(tl.int64)
                    if bad == 0:
                        tl.debug_barrier()                      # earlier elements' bytes are written
                        m = lanes < ln
                        back = (lanes32 % off.to(tl.int32)).to(tl.int64)
                        v = tl.load(dst + d + op - off + back, mask=m)
                        tl.store(dst + d + op + lanes, v, mask=m)
                        op += ln
            bad = bad | (op != u).to(tl.int64)
        tl.store(err, bad.to(tl.int32), mask=bad != 0)


def _on(t: torch.Tensor):
    return torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()


def walk_chunks_triton(data: torch.Tensor, chunks: torch.Tensor, item: int, pages: torch.Tensor | None = None,
                       dec: torch.Tensor | None = None) -> torch.Tensor:
    """Walk the page headers of every column chunk of ``chunks`` (int64
    [n, CHUNK_FIELDS]: its bytes in ``data``, its output row, the span of the
    decompression buffer it may use, its first row in the page tables, its
    value count, its codec). Without ``pages`` only counts; with them writes
    each page's row of ``pages`` ([P, PAGE_FIELDS]) and of ``dec`` ([P, 7],
    glint.kernels.hybrid's page table; a dictionary-encoded page's width is
    WIDTH_FROM_DATA: the first byte of its decompressed body), at most
    the chunk's C_CAP rows. Returns the pages per chunk (int64 [n]; -1 for a
    chunk whose bytes are bad)."""
    n = chunks.shape[0]
    counts = torch.empty(n, dtype=torch.int64, device=data.device)
    if n:
        write = pages is not None
        if not write:
            pages = dec = torch.empty(0, dtype=torch.int64, device=data.device)
        with _on(data):
            _walk_kernel[(n,)](data, chunks, counts, pages, dec, ITEM=item, WRITE=write, num_warps=1)
    return counts


def inflate_pages_triton(src: torch.Tensor, dst: torch.Tensor, pages: torch.Tensor, err: torch.Tensor) -> None:
    """Every page of ``pages`` decompressed (snappy) or copied from ``src`` to
    ``dst`` (uint8), one program each; err[0] (int32) set when a page is
    not what its header says (the caller raises)."""
    n = pages.shape[0]
    if n:
        with _on(src):
            _inflate_kernel[(n,)](src, dst, pages, err, BLOCK=INFLATE_BLOCK, num_warps=1)
