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

Only what the scan routes here is handled: flat columns (required, or
optional: their definition levels checked or decoded, see C_LEVELS), PLAIN
and dictionary encodings, snappy or uncompressed (glint.io.raw_chunks.read_raw_chunk checks the
metadata first); anything else found in the bytes is bad data. The pure-torch
reference (and the CPU path) is glint.io.parquet_pages' host parser with
``pa.Codec``: see decode_raw.
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

# column chunk table (int64, one row per chunk)
(
    C_START,
    C_END,
    C_OUT,
    C_DST,
    C_DST_END,
    C_PAGE,
    C_VALUES,
    C_CODEC,
    C_CAP,
    C_DICT_AT,
    C_DICT_N,
    C_DICT_SIZE,
    C_CODES,
    C_LEVELS,
) = range(14)
CHUNK_FIELDS = 14
# C_CODES = 1: the chunk's values are its dictionary indices mapped through
# the dictionary the host made (a string column's codes): a PLAIN data page
# (the writer's fallback once its dictionary grew) is bad data there, not
# values (glint.io.raw_chunks.RawChunk.strings)
# C_LEVELS = 1: an optional column's chunk without NULLs. A v1 data page's
# body starts with its definition levels (a 4-byte length, then a hybrid
# stream): its page kernel row gets width LEVELS_THEN_WIDTH or
# LEVELS_THEN_PLAIN (glint.kernels.hybrid), and the page kernel checks that
# every level is 1 and skips them. A v2 page's levels lie before its
# (compressed) values, uncompressed: the walk checks its header's NULL count
# (0) and the values alone are decompressed.
# C_LEVELS = 2: an optional column's chunk that may hold NULLs. Its pages get
# the same rows as above, and a row of the levels table (``lev``, LEV_FIELDS
# a page): where the page's levels lie (a v1 page's in the decompressed
# buffer, after their 4-byte length; a v2 page's in the chunk's bytes as
# stored), its rows, its first output row and whether its values are PLAIN.
# glint.kernels.hybrid's levels kernel decodes them before the page kernel
# runs: each row's place among the page's values (-1: NULL), and the page's
# rows in the page kernel's table rewritten to its stored values.
LEV_KIND, LEV_START, LEV_END, LEV_ROWS, LEV_OUT, LEV_PLAIN = range(6)
LEV_FIELDS = 6
LEV_NONE, LEV_IN_BUFFER, LEV_IN_DATA = -1, 0, 1
# page table for inflate_pages_triton (int64, one row per page)
P_SRC, P_SIZE, P_DST, P_USIZE, P_CODEC = range(5)
PAGE_FIELDS = 5
# codecs (SNAPPY_BLOCK: a block of a snappy page, no length preamble, copies within the block: split_pages)
COPY, SNAPPY, SNAPPY_BLOCK = 0, 1, 2
INFLATE_BLOCK = 128  # bytes a program copies per step (a snappy copy is at most 64)
SPLIT = 1 << 16  # output bytes of a snappy block (the encoders compress 64 KiB at a time)
SEGMENT = 8192  # stream bytes a lane of the tag scan starts in (even)
SCAN_BLOCK = 128  # lanes a program of the tag scan has
WIDTH_FROM_DATA = -2  # a dec row's width: the byte before the index stream says it

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
    def _walk_kernel(data, chunks, counts, pages, dec, lev, ITEM: tl.constexpr, WRITE: tl.constexpr):
        # one program per column chunk: its page headers walked; counts[c] =
        # its pages (index pages are skipped; rows are written for the first
        # C_CAP of them, from the chunk's first row), -1 when the bytes are
        # not a good chunk. A chunk whose dictionary the host decompressed
        # (C_DICT_AT >= 0: C_DICT_N entries, C_DICT_SIZE bytes, at C_DICT_AT
        # in data) starts with that dictionary as a page to copy; its bytes
        # from C_START on are its data pages. -1 as well when the bytes are
        # not a good chunk (a header that does not parse, a page past the
        # chunk's end, values that do not add up to the chunk's, an encoding
        # or page kind not handled here, a PLAIN data page of a chunk whose
        # C_CODES is set; of a chunk whose C_LEVELS is set, a v1 page whose
        # levels are not RLE or a v2 page with repetition levels, or NULLs
        # where C_LEVELS is 1; of any other chunk, a v2 page with levels).
        c = tl.program_id(0)
        row = chunks + c * 14
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
        codes_only = tl.load(row + 12)
        levels = tl.load(row + 13)
        zero = tl.full((), 0, tl.int64)
        npages = zero
        seen = zero  # values of the data pages so far
        dict_base = zero - 1  # the dictionary's first entry (in ITEMs)
        dict_n = zero
        bad = zero
        if dict_at >= 0:  # the dictionary, decompressed by the host: copied
            dn = tl.load(row + 10)
            dsize = tl.load(row + 11)
            bad = bad | ((dn < 0) | (dsize < dn * ITEM)).to(tl.int64)
            if WRITE & (cap > 0):
                _page_row(
                    pages, dec, p, dict_at, dsize, dst, dsize, zero, zero, zero, zero - 1, zero, out, dst // ITEM, zero
                )
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
            lv = zero  # a v2 page's level bytes (definition and repetition)
            rl = zero  # of those, repetition levels
            nulls = zero  # a v2 page's NULL count
            def_enc = zero + 3  # a v1 page's definition level encoding (RLE unless it says)
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
                    if h == 0:  # end of a struct
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
                        if (t == 1) | (t == 2):  # bool: the type is the value
                            val = (t == 1).to(tl.int64)
                        elif t == 3:  # byte
                            val = tl.load(data + pos, mask=pos < end, other=0).to(tl.int64)
                            pos += 1
                        elif (t >= 4) & (t <= 6):  # i16 / i32 / i64: zigzag varint
                            zz, pos, more = _uvarint(data, pos, end)
                            val = (zz >> 1) ^ (0 - (zz & 1))
                            bad = bad | more
                        elif t == 7:  # double
                            pos += 8
                        elif t == 8:  # binary: length, bytes
                            ln, pos, more = _uvarint(data, pos, end)
                            pos += ln
                            bad = bad | more
                        elif t == 12:  # struct: one level down
                            if depth == 0:
                                s1 = f
                            depth += 1
                            f1 = tl.where(depth == 1, zero, f1)
                            f2 = tl.where(depth == 2, zero, f2)
                            bad = bad | (depth > 2).to(tl.int64)
                        else:  # lists, sets, maps: not in a page header
                            bad = zero + 1
                        if t != 12:
                            if depth == 0:
                                ptype = tl.where(f == 1, val, ptype)
                                usize = tl.where(f == 2, val, usize)
                                csize = tl.where(f == 3, val, csize)
                            if depth == 1:
                                if s1 == 5:  # DataPageHeader
                                    nv = tl.where(f == 1, val, nv)
                                    enc = tl.where(f == 2, val, enc)
                                    def_enc = tl.where(f == 3, val, def_enc)
                                if s1 == 7:  # DictionaryPageHeader
                                    nv = tl.where(f == 1, val, nv)
                                    enc = tl.where(f == 2, val, enc)
                                if s1 == 8:  # DataPageHeaderV2
                                    nv = tl.where(f == 1, val, nv)
                                    nulls = tl.where(f == 2, val, nulls)
                                    enc = tl.where(f == 4, val, enc)
                                    lv = lv + tl.where((f == 5) | (f == 6), val, 0)
                                    rl = rl + tl.where(f == 6, val, 0)
                                    comp = tl.where(f == 7, val, comp)
            if bad == 0:
                # ---- the page's body: pos .. pos + csize
                body = pos
                pos = pos + csize
                bad = bad | ((csize < 0) | (usize < 0) | (pos > end)).to(tl.int64)
                is_dict = ptype == 2
                is_data = (ptype == 0) | (ptype == 3)
                if ptype != 1:  # (index pages: skipped)
                    bad = bad | ((~is_dict) & (~is_data)).to(tl.int64)
                    plain = enc == 0
                    dic = (enc == 2) | (enc == 8)
                    if is_dict:
                        bad = bad | (
                            (dict_base >= 0) | (seen > 0) | ((enc != 0) & (enc != 2)) | (nv < 0) | (usize < nv * ITEM)
                        ).to(tl.int64)
                    else:
                        v1_levels = (levels != 0) & (ptype == 0)
                        bad = bad | (
                            ((lv != 0) & (levels == 0))
                            | ((levels != 0) & ((rl != 0) | (lv < 0) | (lv > csize) | (lv > usize)))
                            | ((levels == 1) & (nulls != 0))
                            | (v1_levels & (def_enc != 3))
                            | (nv < 0)
                            | ((~plain) & (~dic))
                            | (plain & (((levels != 2) & (usize - lv < nv * ITEM)) | (codes_only != 0)))
                            | (dic & (dict_base < 0))
                            | (dic & (levels != 2) & (nv > 0) & (usize - lv < 1))
                        ).to(tl.int64)
                    pcodec = tl.where((ptype == 3) & (comp == 0), 0, codec)
                    if WRITE & (npages < cap):
                        dic_page = is_data & dic
                        # a v1 page with levels: the page kernel reads them
                        # from the body's start (widths -3 / -4); a v2 page's
                        # levels (lv bytes, uncompressed) are not copied
                        lev1 = is_data & (levels != 0) & (ptype == 0)
                        _page_row(
                            pages,
                            dec,
                            p,
                            body + lv,
                            csize - lv,
                            dst,
                            usize - lv,
                            pcodec,
                            tl.where(lev1, dst, tl.where(dic_page, dst + 1, zero)),
                            tl.where(dic_page | lev1, dst + usize - lv, zero),
                            tl.where(
                                lev1, tl.where(dic_page, zero - 3, zero - 4), tl.where(dic_page, zero - 2, zero - 1)
                            ),
                            tl.where(is_data, nv, zero),
                            out + seen,
                            tl.where(dic_page, dict_base, dst // ITEM),
                            tl.where(dic_page, dict_n, zero),
                        )
                        if is_data & (levels == 2):  # the page's levels, for the levels kernel
                            lrow = lev + p * 6
                            tl.store(lrow + 0, tl.where(ptype == 0, zero, zero + 1))
                            tl.store(lrow + 1, tl.where(ptype == 0, dst, body))
                            tl.store(lrow + 2, tl.where(ptype == 0, dst + usize, body + lv))
                            tl.store(lrow + 3, nv)
                            tl.store(lrow + 4, out + seen)
                            tl.store(lrow + 5, plain.to(tl.int64))
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
    def _element(src, pos, end, live):
        # the snappy element at src[pos] (one or a lane each; bytes at or past
        # end read as 0, so an element is always 2 bytes or more): (its bytes
        # in the stream, its bytes of output)
        m = live & (pos < end)
        tag = tl.load(src + pos, mask=m, other=0).to(tl.int64)
        b1 = tl.load(src + pos + 1, mask=m & (pos + 1 < end), other=0).to(tl.int64)
        b2 = tl.load(src + pos + 2, mask=m & (pos + 2 < end), other=0).to(tl.int64)
        b3 = tl.load(src + pos + 3, mask=m & (pos + 3 < end), other=0).to(tl.int64)
        b4 = tl.load(src + pos + 4, mask=m & (pos + 4 < end), other=0).to(tl.int64)
        kind = tag & 3
        ln = tag >> 2
        nb = tl.where((kind == 0) & (ln >= 60), ln - 59, 0)
        ext = b1 | tl.where(nb > 1, b2 << 8, 0) | tl.where(nb > 2, b3 << 16, 0) | tl.where(nb > 3, b4 << 24, 0)
        lit = tl.where(nb > 0, ext, ln) + 1
        size = tl.where(kind == 0, 1 + nb + lit, tl.where(kind == 1, 2, tl.where(kind == 2, 3, 5)))
        out = tl.where(kind == 0, lit, tl.where(kind == 1, (ln & 7) + 4, ln + 1))
        return size, out

    @triton.jit
    def _scan_kernel(src, segs, n, mark, exits, outs, BLOCK: tl.constexpr):
        # a lane per segment (segs[g]: start, end, the stream's end): the
        # elements from its start on, as if one began there, until one starts
        # at or past its end: each start marked (mark[pos >> 1] = 2 * output
        # bytes before it in the segment + pos's low bit + 1), where the last
        # one ended (exits) and the output bytes (outs). Segments start at
        # even positions (the first of a stream excepted), so two segments
        # never share a mark.
        g = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        live = g < n
        a = tl.load(segs + g * 3, mask=live, other=0)
        b = tl.load(segs + g * 3 + 1, mask=live, other=0)
        e = tl.load(segs + g * 3 + 2, mask=live, other=0)
        pos = a
        out = tl.zeros([BLOCK], dtype=tl.int64)
        act = live & (a < b)
        while tl.max(act.to(tl.int32), 0) > 0:
            size, o = _element(src, pos, e, act)
            tl.store(mark + (pos >> 1), (out * 2 + (pos & 1) + 1).to(tl.int32), mask=act)
            pos = tl.where(act, pos + size, pos)
            out = tl.where(act, out + o, out)
            act = act & (pos < b)
        tl.store(exits + g, pos, mask=live)
        tl.store(outs + g, out, mask=live)

    @triton.jit
    def _sync_kernel(src, streams, segs, mark, exits, outs, entry, outat, whole):
        # one program per stream (streams[p]: segments, the first, start,
        # end, output bytes): its segments in order, each entered where the
        # true elements enter it (entry, and the output before it: outat);
        # from there the elements are walked until one starts where the
        # segment's scan marked one: the rest of the segment is the scan's.
        # A stream whose elements do not end at its end with its output
        # bytes is left whole (whole[p] = 1).
        p = tl.program_id(0)
        row = streams + p * 5
        nseg = tl.load(row + 0)
        g0 = tl.load(row + 1)
        pos = tl.load(row + 2)
        e = tl.load(row + 3)
        u = tl.load(row + 4)
        out = tl.full((), 0, tl.int64)
        if nseg > 0:
            for g in range(g0, g0 + nseg):
                b = tl.load(segs + g * 3 + 1)
                tl.store(entry + g, pos)
                tl.store(outat + g, out)
                if pos < b:
                    m = tl.load(mark + (pos >> 1)).to(tl.int64)
                    hit = ((m != 0) & (((m - 1) & 1) == (pos & 1))).to(tl.int64)
                    while (hit == 0) & (pos < b):
                        size, o = _element(src, pos, e, pos < e)
                        pos += size
                        out += o
                        m = tl.load(mark + (pos >> 1), mask=pos < b, other=0).to(tl.int64)
                        hit = ((pos < b) & (m != 0) & (((m - 1) & 1) == (pos & 1))).to(tl.int64)
                    if hit != 0:
                        out += tl.load(outs + g) - ((m - 1) >> 1)
                        pos = tl.load(exits + g)
            if (pos != e) | (out != u):
                tl.store(whole + p, 1)

    @triton.jit
    def _find_kernel(src, walks, n, starts, BLOCK: tl.constexpr):
        # a lane per block (walks[g]: a true element start, the output before
        # it, the block's first output byte, the stream's end): the elements
        # walked until the output reaches the block's first byte; starts[g]
        # the element that begins there, -1 when none does.
        g = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        live = g < n
        pos = tl.load(walks + g * 4, mask=live, other=0)
        out = tl.load(walks + g * 4 + 1, mask=live, other=0)
        t = tl.load(walks + g * 4 + 2, mask=live, other=0)
        e = tl.load(walks + g * 4 + 3, mask=live, other=0)
        act = live & (out < t) & (pos < e)
        while tl.max(act.to(tl.int32), 0) > 0:
            size, o = _element(src, pos, e, act)
            pos = tl.where(act, pos + size, pos)
            out = tl.where(act, out + o, out)
            act = act & (out < t) & (pos < e)
        tl.store(starts + g, tl.where(out == t, pos, -1), mask=live)

    @triton.jit
    def _inflate_kernel(src, dst, pages, err, whole, owner, BLOCK: tl.constexpr, MODE: tl.constexpr):
        # one program per row: its body, src[s:s + n], decompressed (or
        # copied) to dst[d:d + u]; err[0] set when it does not come out at
        # exactly u bytes or is not snappy. MODE 0: every row a page; 1: only
        # the pages p with whole[p] set; 2: rows are blocks (SNAPPY_BLOCK) of
        # the pages owner[row], skipped when whole[page] is set, and a block
        # that does not come out right (a copy reaching back past its start,
        # bytes that do not end where the next block starts) sets it instead
        # of err, for a MODE 1 run to decompress the page whole.
        pid = tl.program_id(0)
        go = True
        page = pid.to(tl.int64)
        if MODE == 2:
            page = tl.load(owner + pid)
        if MODE != 0:
            go = tl.load(whole + page) == 0
            if MODE == 1:
                go = ~go
        if go:
            _inflate_row(src, dst, pages, err, whole, pid, page, BLOCK, MODE)

    @triton.jit
    def _inflate_row(src, dst, pages, err, whole, pid, page, BLOCK: tl.constexpr, MODE: tl.constexpr):
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
            if codec == 1:  # a whole page: its length first
                ulen, ip, more = _uvarint(src, ip, end)
                bad = more | (ulen != u).to(tl.int64)
            else:  # a block of a page (split_pages)
                bad = (codec != 2).to(tl.int64)
            op = zero
            while (ip < end) & (bad == 0):
                tag = tl.load(src + ip).to(tl.int64)
                ip += 1
                kind = tag & 3
                if kind == 0:  # literal
                    ln = tag >> 2
                    if ln >= 60:  # its length in 1-4 more bytes
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
                else:  # copy
                    b0 = tl.load(src + ip, mask=ip < end, other=0).to(tl.int64)
                    b1 = tl.load(src + ip + 1, mask=(kind != 1) & (ip + 1 < end), other=0).to(tl.int64)
                    b23 = tl.load(src + ip + 2, mask=(kind == 3) & (ip + 2 < end), other=0).to(tl.int64) | (
                        tl.load(src + ip + 3, mask=(kind == 3) & (ip + 3 < end), other=0).to(tl.int64) << 8
                    )
                    ln = tl.where(kind == 1, ((tag >> 2) & 7) + 4, (tag >> 2) + 1)
                    off = tl.where(kind == 1, ((tag >> 5) << 8) | b0, b0 | (b1 << 8) | (b23 << 16))
                    ip += tl.where(kind == 1, 1, tl.where(kind == 2, 2, 4))
                    bad = bad | ((ip > end) | (off == 0) | (off > op) | (op + ln > u)).to(tl.int64)
                    if bad == 0:
                        tl.debug_barrier()  # earlier elements' bytes are written
                        m = lanes < ln
                        back = (lanes32 % off.to(tl.int32)).to(tl.int64)
                        v = tl.load(dst + d + op - off + back, mask=m)
                        tl.store(dst + d + op + lanes, v, mask=m)
                        op += ln
            bad = bad | (op != u).to(tl.int64)
        if MODE == 2:
            tl.store(whole + page, 1, mask=bad != 0)
        else:
            tl.store(err, bad.to(tl.int32), mask=bad != 0)


def _on(t: torch.Tensor):
    return torch.cuda.device(t.device) if t.is_cuda else contextlib.nullcontext()


def walk_chunks_triton(
    data: torch.Tensor,
    chunks: torch.Tensor,
    item: int,
    pages: torch.Tensor | None = None,
    dec: torch.Tensor | None = None,
    lev: torch.Tensor | None = None,
) -> torch.Tensor:
    """Walk the page headers of every column chunk of ``chunks`` (int64
    [n, CHUNK_FIELDS]: its bytes in ``data``, its output row, the span of the
    decompression buffer it may use, its first row in the page tables, its
    value count, its codec). Without ``pages`` only counts; with them writes
    each page's row of ``pages`` ([P, PAGE_FIELDS]) and of ``dec`` ([P, 7],
    glint.kernels.hybrid's page table; a dictionary-encoded page's width is
    WIDTH_FROM_DATA: the first byte of its decompressed body), at most
    the chunk's C_CAP rows (C_CODES: see there), and of ``lev`` ([P,
    LEV_FIELDS], filled with LEV_NONE by the caller) for the pages of
    chunks whose C_LEVELS is 2. Returns the pages per chunk (int64 [n]; -1
    for a chunk whose bytes are bad)."""
    n = chunks.shape[0]
    counts = torch.empty(n, dtype=torch.int64, device=data.device)
    if n:
        write = pages is not None
        if not write:
            pages = dec = lev = torch.empty(0, dtype=torch.int64, device=data.device)
        elif lev is None:
            lev = torch.empty(0, dtype=torch.int64, device=data.device)
        with _on(data):
            _walk_kernel[(n,)](data, chunks, counts, pages, dec, lev, ITEM=item, WRITE=write, num_warps=1)
    return counts


def _varints(src: torch.Tensor, at: torch.Tensor):
    """The ULEB128 varints (at most 5 bytes) at src[at]: (value, bytes; 0
    bytes when it runs on past 5)."""
    k = torch.arange(5, device=src.device)
    b = src[(at[:, None] + k).clamp_(0, src.numel() - 1)].to(torch.int64)
    more = b >= 128
    n = torch.cumprod(more, 1).sum(1) + 1
    ok = n <= 5
    value = ((b & 0x7F) << (7 * k)).masked_fill_(k >= n[:, None], 0).sum(1)
    return value, torch.where(ok, n, 0)


def _spread(counts: torch.Tensor, bound: int):
    """Rows laid out by ``counts`` (one count per owner), at most ``bound``
    of them: (the owner of each row, its index within its owner, whether it
    is a row at all, each owner's first row); no wait for the device."""
    ends = torch.cumsum(counts, 0)
    first = ends - counts
    g = torch.arange(bound, device=counts.device)
    owner = torch.searchsorted(ends, g, right=True)
    live = owner < counts.numel()
    owner = owner.clamp_(max=max(counts.numel() - 1, 0))
    return owner, g - first[owner], live, first


def split_pages(src: torch.Tensor, pages: torch.Tensor, total: int, snappy: bool = True):
    """The snappy pages of ``pages`` with more than SPLIT bytes of output
    cut into blocks of SPLIT output bytes, for inflate_pages_triton: (block
    rows, their pages, ``whole``: int32 per page, set for the pages to
    decompress whole). The reference encoders compress 64 KiB of input at a
    time, their copies never reaching back past it, so the blocks
    decompress side by side: a dictionary page of ~200,000 elements is then
    ~14 programs of ~14,000, not one (each element waits for the last).

    Where the blocks start is found without walking a page from its start:
    _scan_kernel walks every SEGMENT bytes of the stream from the segment's
    start, as if an element began there (a lane each, all at once);
    _sync_kernel then goes through a page's segments in order, walking from
    where the true elements enter each one until they meet one the scan
    marked (after a few elements, as a rule), and takes the scan's count
    for the rest; _find_kernel walks from the segment where a block begins
    to its first element. A page where this fails (bad bytes, an encoder
    whose blocks are not at 64 KiB) is left whole; a block that does not
    decompress on its own marks its page whole (the inflate checks every
    element, so a block cut in the wrong place is never taken). ``total``:
    a bound of the pages' output bytes (nothing waits for the device).
    ``snappy`` off: the host knows no page is snappy (the chunks' codecs),
    so only the uncompressed pages' blocks are made, without the scan."""
    dev = pages.device
    n = pages.shape[0]
    at, size, u = pages[:, P_SRC], pages[:, P_SIZE], pages[:, P_USIZE]
    blk_bound = total // SPLIT + n + 1
    if not snappy:
        copy = (pages[:, P_CODEC] == COPY) & (u > SPLIT) & (size == u)
        rows, owner = _copy_blocks(pages, at, u, copy, blk_bound)
        return rows, owner, (~copy).to(torch.int32)
    ulen, vlen = _varints(src, at)
    s0, e = at + vlen, at + size
    split = (pages[:, P_CODEC] == SNAPPY) & (u > SPLIT) & (vlen > 0) & (ulen == u) & (s0 < e)
    # an uncompressed page's body is copied in blocks as well (one program
    # copies 128 bytes a step: a 1 MiB page would be 8,192 steps of one warp;
    # the host tier's pages are all uncompressed, see glint.io.page_tier)
    copy = (pages[:, P_CODEC] == COPY) & (u > SPLIT) & (size == u)
    whole = (~(split | copy)).to(torch.int32)
    # segments: the first at the stream's start, the others at even positions
    base = s0 - (s0 & 1)
    nseg = torch.where(split, (e - base + SEGMENT - 1) // SEGMENT, 0)
    seg_bound = src.numel() // SEGMENT + n + 1
    sp, si, slive, sfirst = _spread(nseg, seg_bound)
    a = torch.where(si == 0, s0[sp], base[sp] + si * SEGMENT)
    b = torch.minimum(base[sp] + (si + 1) * SEGMENT, e[sp])
    segs = torch.stack([a, b, e[sp]], 1).masked_fill_(~slive[:, None], 0).contiguous()
    mark = torch.zeros(src.numel() // 2 + 1, dtype=torch.int32, device=dev)
    exits = torch.empty(seg_bound, dtype=torch.int64, device=dev)
    outs = torch.empty_like(exits)
    entry = torch.zeros_like(exits)
    outat = torch.zeros_like(exits)
    streams = torch.stack([nseg, sfirst, s0, e, u], 1).contiguous()
    with _on(src):
        _scan_kernel[(triton.cdiv(seg_bound, SCAN_BLOCK),)](
            src, segs, seg_bound, mark, exits, outs, BLOCK=SCAN_BLOCK, num_warps=4
        )
        _sync_kernel[(n,)](src, streams, segs, mark, exits, outs, entry, outat, whole, num_warps=1)
    # blocks: each starts in the last segment whose true output before it
    # is at most the block's first byte
    nblk = torch.where(split, (u + SPLIT - 1) // SPLIT, 0)
    bp, bj, blive, _ = _spread(nblk, blk_bound)
    key = torch.where(slive, sp * (1 << 40) + outat, n << 40)
    t = bj * SPLIT
    k = (torch.searchsorted(key, bp * (1 << 40) + t, right=True) - 1).clamp_(0, seg_bound - 1)
    go = blive & (bj > 0) & (whole[bp] == 0)
    walks = torch.stack(
        [torch.where(go, entry[k], s0[bp]), torch.where(go, outat[k], 0), torch.where(go, t, 0), e[bp]], 1
    ).contiguous()
    starts = torch.empty(blk_bound, dtype=torch.int64, device=dev)
    with _on(src):
        _find_kernel[(triton.cdiv(blk_bound, SCAN_BLOCK),)](
            src, walks, blk_bound, starts, BLOCK=SCAN_BLOCK, num_warps=4
        )
    missed = blive & (starts < 0)
    whole.scatter_add_(0, bp, missed.to(torch.int32))
    last = bj == nblk[bp] - 1
    nxt = torch.cat([starts[1:], starts[-1:]])
    stop = torch.where(last, e[bp], nxt)
    ok = blive & (whole[bp] == 0)
    rows = torch.stack(
        [
            starts,
            stop - starts,
            pages[bp, P_DST] + t,
            torch.minimum(u[bp] - t, torch.full_like(t, SPLIT)),
            torch.full_like(t, SNAPPY_BLOCK),
        ],
        1,
    )
    rows = rows.masked_fill_(~ok[:, None], 0)
    rows[:, P_CODEC] = SNAPPY_BLOCK
    crows, cp = _copy_blocks(pages, at, u, copy, blk_bound)
    return torch.cat([rows, crows]).contiguous(), torch.cat([bp, cp]).contiguous(), whole


def _copy_blocks(pages, at, u, copy, bound: int):
    """The uncompressed pages' (``copy``) blocks: SPLIT bytes each, where
    they lie (rows as split_pages makes them, at most ``bound``; the rows
    past the blocks copy nothing), and each block's page."""
    cblk = torch.where(copy, (u + SPLIT - 1) // SPLIT, 0)
    cp, cj, clive, _ = _spread(cblk, bound)
    ct = cj * SPLIT
    clen = torch.minimum(u[cp] - ct, torch.full_like(ct, SPLIT))
    crows = torch.stack([at[cp] + ct, clen, pages[cp, P_DST] + ct, clen, torch.full_like(ct, COPY)], 1)
    return crows.masked_fill_(~clive[:, None], 0).contiguous(), cp.contiguous()


def inflate_pages_triton(
    src: torch.Tensor,
    dst: torch.Tensor,
    pages: torch.Tensor,
    err: torch.Tensor,
    split: bool = True,
    snappy: bool = True,
) -> None:
    """Every page of ``pages`` decompressed (snappy) or copied from ``src`` to
    ``dst`` (uint8); err[0] (int32) set when a page is not what its header
    says (the caller raises). With ``split`` the large snappy pages are cut
    into blocks decompressed side by side (split_pages), the others one
    program a page (``split`` off: every snappy page one program, which
    split_pages is measured against); ``snappy`` off: no page is snappy
    (see split_pages); nothing waits for the device."""
    n = pages.shape[0]
    if not n:
        return
    with _on(src):
        if not split:
            _inflate_kernel[(n,)](src, dst, pages, err, err, err, BLOCK=INFLATE_BLOCK, MODE=0, num_warps=1)
            return
        rows, owner, whole = split_pages(src, pages, dst.numel(), snappy)
        _inflate_kernel[(rows.shape[0],)](src, dst, rows, err, whole, owner, BLOCK=INFLATE_BLOCK, MODE=2, num_warps=1)
        _inflate_kernel[(n,)](src, dst, pages, err, whole, owner, BLOCK=INFLATE_BLOCK, MODE=1, num_warps=1)
