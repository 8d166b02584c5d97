"""Raw column chunks (glint.io.raw_chunks) decoded on the device: their
bytes laid out in the one buffer copied up (:func:`layout_raw`,
:func:`layout_raw_together`), then on CUDA the page kernels of
glint.kernels.parquet_raw and glint.kernels.hybrid walk the page headers,
decompress the pages and gather the values (:func:`decode_raw`, and
:func:`decode_raw_many` for several columns in one pass); elsewhere the
host's reference decoder (glint.io.parquet_pages) does.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np
import torch

from glint.errors import GlintIOError
from glint.io.file_reads import FileRange, FileRuns
from glint.io.page_tier import TierCopy, copy_runs
from glint.io.parquet_page_headers import DICTIONARY_PAGE, PLAIN, Page, parse_pages
from glint.io.parquet_pages import (
    MAX_BIT_WIDTH,
    decode_inputs,
    decode_plans,
    plan_pages,
    to_device,
)
from glint.io.raw_chunks import (
    LEVELS_NULLS,
    LEVELS_ONES,
    RAW_CODEC_NAMES,
    RAW_PAGES,
    RawChunk,
    RawSet,
    pages_cap_of,
)
from glint.runtime.settings import Settings


@dataclass
class RawLayout:
    """Where raw chunks lie in the one buffer copied to the device: each at
    an 8-byte aligned offset (``at``), after its host-decompressed
    dictionary if it has one (``dict_at``, else -1), 8 zero bytes at the
    end. ``segments``: (offset, buffer or FileRange) pairs to fill it with
    (see fill_layout)."""

    total: int
    at: list
    segments: list
    dict_at: list


def layout_raw(chunks: list[RawChunk]) -> RawLayout:
    at, dict_at, segments, o = [], [], [], 0
    for c in chunks:
        if c.dictionary is not None:
            dict_at.append(o)
            if len(c.dictionary):
                segments.append((o, c.dictionary))
            o += (len(c.dictionary) + 7) // 8 * 8
        else:
            dict_at.append(-1)
        at.append(o)
        if len(c.source):
            segments.append((o, c.source))
        o += (len(c.source) + 7) // 8 * 8
    return RawLayout(o + 8, at, segments, dict_at)


def _layout_runs(placed, idx, fi, st, sz, o: int, gap: int, paths: list, segments: list) -> int:
    """layout_raw_together's file runs for the chunks ``idx`` (their file
    indexes, starts and sizes): their offsets into ``placed``, one FileRuns
    segment at ``o``; returns the offset past it."""
    # one line of positions for all files, each file past the one before
    # by more than ``gap``: a run never spans two
    width = int((st + sz).max()) + gap + 1
    key = st + fi * width
    order = np.argsort(key, kind="stable")
    k, e = key[order], (key + sz)[order]
    reach = np.maximum.accumulate(e)
    first = np.empty(len(k), dtype=bool)
    first[0] = True
    first[1:] = k[1:] > reach[:-1] + gap
    run = np.cumsum(first) - 1
    heads = np.flatnonzero(first)
    r_start = k[heads]
    r_len = np.maximum.reduceat(e, heads) - r_start
    padded = (r_len + 7) // 8 * 8
    r_off = np.zeros(len(heads), dtype=np.int64)
    np.cumsum(padded[:-1], out=r_off[1:])
    placed[idx[order]] = o + r_off[run] + k - r_start[run]
    r_file = r_start // width
    segments.append((o, FileRuns(paths, r_file, r_start - r_file * width, r_off, r_len, int(padded.sum()))))
    return o + int(padded.sum())


def _place_sets(tier, admit: bool, parts: list, sets: list, paths: list, fi, st, sz):
    """The RawSets' chunks among layout_raw_together's ``parts`` placed in
    the tier (the others stay in their files), or None when it holds none
    of them. The chunks found there get their size and codec in the tier
    written into their sets now, the fresh ones when they are filled."""
    lens = [len(p[1]) for p in parts]
    first = np.concatenate([[0], np.cumsum(lens)])
    n = len(st)
    usize, codec = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    set_of, set_pos = np.full(n, -1, dtype=np.int64), np.zeros(n, dtype=np.int64)
    mine = np.zeros(n, dtype=bool)
    for j, (k, rs) in enumerate(sets):
        a, b = first[k], first[k + 1]
        usize[a:b], codec[a:b], set_of[a:b], set_pos[a:b] = rs.usize, rs.codec, j, parts[k][1]
        mine[a:b] = True
    idx = np.flatnonzero(mine)
    sub = tier.place(paths, fi[idx], st[idx], sz[idx], usize[idx], codec[idx], admit)
    if not sub.held().any():
        tier.release(sub)
        return None
    # the placement over all of the chunks (the lists' chunks never in the tier)
    placement = sub
    for name in ("slab", "offset", "size", "room", "tsize", "tcodec", "fresh"):
        full = np.full(n, -1, dtype=np.int64) if name == "slab" else np.zeros(n, dtype=getattr(sub, name).dtype)
        full[idx] = getattr(sub, name)
        setattr(placement, name, full)
    placement.keys = {int(idx[i]): key for i, key in sub.keys.items()}
    placement.sets, placement.set_of, placement.set_pos = [rs for _, rs in sets], set_of, set_pos
    placement.set_sizes(np.flatnonzero(placement.held() & ~placement.fresh).tolist())
    return placement


# a run of chunks in the host tier is cut where its fresh chunks (to be read
# from their files, and their snappy undone by the host, before the copy)
# pass this many bytes: the staging threads fill the pieces side by side (a
# scan chunk's columns often lie in one run: one thread filled them all)
FILL_PIECE_BYTES = 8 << 20


def _fill_pieces(run, heads, fresh, size):
    """copy_runs' runs (``run``: each chunk's, ``heads``: their first
    chunks, in the runs' order) cut into pieces of at most about
    FILL_PIECE_BYTES of fresh chunks (``fresh``, ``size``: as stored)."""
    first = np.zeros(len(run), dtype=bool)
    first[heads] = True
    acc = 0
    for j, (f, n) in enumerate(zip(fresh.tolist(), size.tolist())):
        if first[j]:
            acc = 0
        if f:
            if acc >= FILL_PIECE_BYTES:
                first[j], acc = True, 0
            acc += n
    return np.cumsum(first) - 1, np.flatnonzero(first)


def _layout_tier(placed, placement, sz, o: int, segments: list) -> int:
    """layout_raw_together's chunks held in the host tier: laid out from
    ``o`` as they lie in its slabs, one TierCopy segment per run; returns
    the offset past them."""
    idx = np.flatnonzero(placement.held())
    slab, off, size = placement.slab[idx], placement.offset[idx], placement.room[idx]
    order, run, heads = copy_runs(slab, off, size)
    fresh = placement.fresh[idx[order]]
    if fresh.any():
        run, heads = _fill_pieces(run, heads, fresh, placement.size[idx[order]])
    s_off = off[order]
    ends = s_off + (size[order] + 7) // 8 * 8
    r_first = s_off[heads]
    r_len = np.maximum.reduceat(ends, heads) - r_first
    r_at = np.zeros(len(heads), dtype=np.int64)
    np.cumsum(r_len[:-1], out=r_at[1:])
    placed[idx[order]] = o + r_at[run] + s_off - r_first[run]
    runs_fill: list = [[] for _ in heads]
    for j in np.flatnonzero(fresh).tolist():
        runs_fill[int(run[j])].append(int(idx[order[j]]))
    for r, h in enumerate(heads.tolist()):
        seg = TierCopy(placement, int(slab[order[h]]), int(r_first[r]), int(r_len[r]), runs_fill[r])
        segments.append((o + int(r_at[r]), seg))
    return o + int(r_len.sum())


def layout_raw_together(
    columns: dict, gap: int = Settings.run_gap, tier=None, admit: bool = False
) -> tuple[dict, int, list]:
    """One buffer for several columns' raw chunks ({column: [RawChunk] or a
    RawSet}, a chunk per fragment): (a RawLayout per column, its offsets
    into the whole buffer and ``total`` the whole buffer's; the buffer's
    size; its (offset, bytes or FileRuns) segments). The bytes held in host
    memory (dictionaries) come first, then the bytes still in the files, as
    they lie there: the chunks' ranges, sorted, are cut into runs where more
    than ``gap`` bytes lie between two, and each run is laid out
    whole, the bytes between its chunks too (a row group's columns lie one
    after the other in its file, so the staging reads the columns of a row
    group that a query asks for, and often the next row group's, with one
    system call: one FileRuns segment, see glint.io.transfer). Built
    with numpy for RawSets: no Python per row group and column.

    ``tier``: the connection's host tier of chunks as stored
    (glint.io.page_tier.PageTier). The chunks it holds (or, ``admit``,
    gives room to now) come last, laid out as they lie there, each run of
    them one :class:`TierCopy` segment (copied up straight from the tier's
    pinned memory; the fresh ones read from their files into it first)."""
    o, segments = 0, []
    at: dict = {}
    dict_at: dict = {}
    paths: dict = {}  # path -> its index in the runs
    parts = []  # (column, chunk positions, file index, start, size)
    for c, chunks in columns.items():
        n = len(chunks)
        a = at[c] = np.zeros(n, dtype=np.int64)
        d = dict_at[c] = np.full(n, -1, dtype=np.int64)
        if type(chunks) is RawSet:
            if chunks.remap is not None:  # a string column's codes of its distinct pages, one segment
                if chunks.remap:
                    segments.append((o, chunks.remap))
                d[:] = o + chunks.remap_at[chunks.page_of]
                o += (len(chunks.remap) + 7) // 8 * 8
            ids = np.array([paths.setdefault(p, len(paths)) for p in chunks.paths], dtype=np.int64)
            parts.append((c, np.arange(n), ids[chunks.file], chunks.start, chunks.size))
            continue
        pos, fi, st, sz = [], [], [], []
        for j, ch in enumerate(chunks):
            if ch.dictionary is not None:
                d[j] = o
                if len(ch.dictionary):
                    segments.append((o, ch.dictionary))
                o += (len(ch.dictionary) + 7) // 8 * 8
            src = ch.source
            if type(src) is FileRange:
                pos.append(j)
                fi.append(paths.setdefault(src.path, len(paths)))
                st.append(src.start)
                sz.append(src.size)
            else:
                a[j] = o
                if len(src):
                    segments.append((o, src))
                o += (len(src) + 7) // 8 * 8
        if pos:
            parts.append(
                (
                    c,
                    np.array(pos, dtype=np.int64),
                    np.array(fi, dtype=np.int64),
                    np.array(st, dtype=np.int64),
                    np.array(sz, dtype=np.int64),
                )
            )
    if parts:
        fi = np.concatenate([p[2] for p in parts])
        st = np.concatenate([p[3] for p in parts])
        sz = np.concatenate([p[4] for p in parts])
        placed = np.empty(len(st), dtype=np.int64)
        placement = None
        rest = np.arange(len(st))
        sets = [(k, columns[p[0]]) for k, p in enumerate(parts) if type(columns[p[0]]) is RawSet]
        if tier is not None and sets:
            placement = _place_sets(tier, admit, parts, sets, list(paths), fi, st, sz)
            if placement is not None:
                rest = np.flatnonzero(~placement.held())
        if len(rest):
            o = _layout_runs(placed, rest, fi[rest], st[rest], sz[rest], o, gap, list(paths), segments)
        if placement is not None:
            o = _layout_tier(placed, placement, sz, o, segments)
        i = 0
        for c, pos, _, _, _size in parts:
            at[c][pos] = placed[i : i + len(pos)]
            i += len(pos)
    total = o + 8
    return {c: RawLayout(total, at[c].tolist(), [], dict_at[c].tolist()) for c in columns}, total, segments


def _raw_reference(chunks: list[RawChunk], device, column: str):
    """decode_raw on the host: headers parsed and bodies decompressed by
    parse_pages (``pa.Codec``), values by decode_plans' torch path:
    (values, valid or None)."""
    plans = []
    for c in chunks:
        try:
            pages = parse_pages(c.buf, RAW_CODEC_NAMES[c.codec], column)
            if c.dictionary is not None:
                pages.insert(0, Page(DICTIONARY_PAGE, c.dict_n, PLAIN, bytes(c.dictionary)))
            if c.codes and any(p.kind != DICTIONARY_PAGE and p.encoding == PLAIN for p in pages):
                raise GlintIOError(
                    f"Parquet column {column!r}: a PLAIN data page in a string column chunk decoded as dictionary codes"
                )
            plan = plan_pages(pages, c.dtype, int(c.levels), column)
            if plan.rows != c.rows:
                raise GlintIOError(
                    f"Parquet column {column!r}: pages hold {plan.rows} values, the column chunk {c.rows}"
                )
            if c.levels == LEVELS_ONES and plan.stored != plan.rows:
                raise GlintIOError(
                    f"Parquet column {column!r}: {plan.rows - plan.stored} NULLs in a column chunk "
                    "whose statistics say it has none"
                )
        except GlintIOError as e:
            raise GlintIOError(f"Cannot read {c.where}: {e}" if c.where else str(e)) from None
        plans.append(plan)
    values, valid, _ = decode_plans(plans, device, use_triton=False, column=column, valid_when_no_nulls=False)
    return values, valid


def decode_raw(
    chunks: list[RawChunk],
    device="cpu",
    data: torch.Tensor | None = None,
    layout: RawLayout | None = None,
    use_triton: bool | None = None,
    column: str = "?",
    exact: bool = True,
    split: bool = True,
):
    """The values of several raw column chunks (one dtype) one after the
    other: (values, valid, err), ``valid`` None unless a chunk may hold
    NULLs (RawChunk.levels LEVELS_NULLS). ``data``: the layout's buffer already on the
    device, else copied from pageable memory. ``split``: large snappy pages
    decompressed in blocks side by side (the snappy_split setting; see
    glint.kernels.parquet_raw.inflate_pages_triton).

    With ``use_triton`` (default: on CUDA) everything runs on the device
    (glint.kernels.parquet_raw): one program per chunk walks its page
    headers and writes the page tables; one program per page decompresses
    it into one buffer, 8-byte aligned; glint.kernels.hybrid's page kernel
    gathers the values. ``err`` is then an int32 device flag for
    :func:`check_decoded`. With ``exact`` the walk first counts each
    chunk's pages (one wait for the device, which also finds bad headers and
    names the chunk); without, the tables hold RawChunk.pages_cap pages a
    chunk and nothing waits: ``err`` is also set when a chunk has more pages or bad
    headers, and the caller decodes again with ``exact`` to get the values
    or the error (the scan does). Otherwise the host parses and
    decompresses (the reference): ``err`` is None."""
    if not chunks:
        raise ValueError("decode_raw: no chunks")
    dtype, layout, data, use_triton = decode_inputs(chunks, layout_raw, layout, data, device, use_triton, "chunks")
    device = data.device
    if not use_triton:
        return (*_raw_reference(chunks, device, column), None)
    if not exact:
        (values,), (valid,), err = decode_raw_many([(chunks, layout, 0)], data, split=split)
        return values, valid, err
    from glint.kernels import parquet_raw as K
    from glint.kernels.hybrid import decode_pages_triton

    item = dtype.itemsize
    rows = [c.rows for c in chunks]
    out_at = [0] * len(chunks)
    for i in range(1, len(chunks)):
        out_at[i] = out_at[i - 1] + rows[i - 1]
    table = torch.tensor(
        [
            [
                a,
                a + len(c.source),
                o,
                0,
                1 << 62,
                0,
                c.rows,
                c.codec,
                1 << 62,
                d,
                c.dict_n,
                0 if c.dictionary is None else len(c.dictionary),
                int(c.codes),
                int(c.levels),
            ]
            for a, d, c, o in zip(layout.at, layout.dict_at, chunks, out_at)
        ],
        dtype=torch.int64,
    )
    counts = K.walk_chunks_triton(data, table.to(device), item).cpu().tolist()
    for c, k in zip(chunks, counts):
        if k < 0:
            where = f"Cannot read {c.where}: " if c.where else ""
            raise GlintIOError(
                f"{where}Parquet column {column!r}: bad page headers (a header that does not "
                "parse, a page past the column chunk's end, page values that do not add up "
                "to the chunk's, or a page encoding other than PLAIN or dictionary)"
            )
    dst = page = 0
    for i, (c, k) in enumerate(zip(chunks, counts)):
        span = (c.usize + 7) // 8 * 8 + 8 * k
        table[i, K.C_DST], table[i, K.C_DST_END], table[i, K.C_PAGE] = dst, dst + span, page
        dst += span
        page += k
    table = to_device(table, device)
    err = torch.zeros(1, dtype=torch.int32, device=device)
    pages = torch.empty((page, K.PAGE_FIELDS), dtype=torch.int64, device=device)
    dec = torch.empty((page, 7), dtype=torch.int64, device=device)
    nulls = any(c.levels == LEVELS_NULLS for c in chunks)
    lev = torch.full((page if nulls else 0, K.LEV_FIELDS), K.LEV_NONE, dtype=torch.int64, device=device)
    K.walk_chunks_triton(data, table, item, pages, dec, lev)
    buf = torch.empty(dst + 16, dtype=torch.uint8, device=device)
    K.inflate_pages_triton(data, buf, pages, err, split)
    src = None
    if nulls:
        src = torch.arange(sum(rows), dtype=torch.int64, device=device)
        _levels(data, buf, lev, dec, src, err)
    _index_widths(buf, dec, err)
    values = torch.empty(sum(rows), dtype=dtype, device=device)
    decode_pages_triton(buf, buf[: (buf.numel() // item) * item].view(dtype), dec, values, err)
    values, valid = _placed(values, src)
    return values, valid, err


def _levels(data, buf, lev, dec, src: torch.Tensor, err) -> None:
    """The levels kernel over one column's pages (glint.kernels.hybrid
    .decode_levels_triton): ``src`` (made as arange over the column's output
    rows, so that the rows of chunks without NULLs keep their own place)
    gets each row's place among the page kernel's values, -1 for a NULL."""
    from glint.kernels.hybrid import decode_levels_triton

    decode_levels_triton(data, buf, lev, dec, src, err)


def _placed(values: torch.Tensor, src: torch.Tensor | None):
    """(the page kernel's ``values`` moved to their rows by _levels' ``src``,
    NULLs 0; the validity), or (``values``, None) without NULLs to place."""
    if src is None:
        return values, None
    valid = src >= 0
    out = values[src.clamp_(min=0)]
    return out.masked_fill_(~valid, 0), valid


def _index_widths(buf: torch.Tensor, dec: torch.Tensor, err: torch.Tensor) -> None:
    """A dictionary-encoded page's index width into its dec row: the first
    byte of its decompressed body (more than 32 bits is bad data: flagged,
    and read as width 0)."""
    from glint.kernels import parquet_raw as K

    w = dec[:, 2]
    is_idx = w == K.WIDTH_FROM_DATA
    first = buf[(dec[:, 0] - 1).clamp_(min=0)].to(torch.int64)
    too_wide = is_idx & (first > MAX_BIT_WIDTH)
    err += too_wide.any().to(torch.int32)
    dec[:, 2] = torch.where(is_idx, torch.where(too_wide, 0, first), w)


def _chunk_table(chunks: list, layout, base: int, dst: int, page: int) -> np.ndarray:
    """The page walk's chunk table rows (glint.kernels.parquet_raw's
    CHUNK_FIELDS) of one column's raw chunks: their bytes at ``base`` +
    ``layout.at`` in the buffer, their decompressed bodies from ``dst`` on,
    their pages' rows from ``page`` on, each chunk RawChunk.pages_cap page
    rows (built with numpy: a cold scan chunk has thousands of raw chunks,
    and a row of Python per chunk, under the GIL, held up the query's own
    thread)."""
    from glint.kernels import parquet_raw as K

    n = len(chunks)
    out = np.empty((n, K.CHUNK_FIELDS), dtype=np.int64)
    if not n:
        return out
    if type(chunks) is RawSet:
        fields = np.zeros((n, 8), dtype=np.int64)
        fields[:, 0], fields[:, 1], fields[:, 2], fields[:, 3] = chunks.rows, chunks.usize, chunks.size, chunks.codec
        fields[:, 7] = chunks.levels
        if chunks.remap is not None:  # a string column's codes (RawSet.with_codes)
            entries = np.array([len(p) for p in chunks.pages], dtype=np.int64)[chunks.page_of]
            fields[:, 4], fields[:, 5], fields[:, 6] = entries, 4 * entries, 1
    else:
        fields = np.array(
            [
                (
                    c.rows,
                    c.usize,
                    c.source.size if type(c.source) is FileRange else len(c.source),
                    c.codec,
                    c.dict_n,
                    0 if c.dictionary is None else len(c.dictionary),
                    c.codes,
                    c.levels,
                )
                for c in chunks
            ],
            dtype=np.int64,
        ).reshape(n, 8)
    rows, usize = fields[:, 0], fields[:, 1]
    at = np.asarray(layout.at, dtype=np.int64) + base
    dict_at = np.asarray(layout.dict_at, dtype=np.int64)
    cap = np.maximum(RAW_PAGES, pages_cap_of(rows, usize))  # RawChunk.pages_cap
    span = (usize + 7) // 8 * 8 + 8 * cap
    dst_end = dst + np.cumsum(span)
    page_end = page + np.cumsum(cap)
    out_end = np.cumsum(rows)
    out[:, K.C_START] = at
    out[:, K.C_END] = at + fields[:, 2]
    out[:, K.C_OUT] = out_end - rows
    out[:, K.C_DST] = dst_end - span
    out[:, K.C_DST_END] = dst_end
    out[:, K.C_PAGE] = page_end - cap
    out[:, K.C_VALUES] = rows
    out[:, K.C_CODEC] = fields[:, 3]
    out[:, K.C_CAP] = cap
    out[:, K.C_DICT_AT] = np.where(dict_at >= 0, dict_at + base, -1)
    out[:, K.C_DICT_N] = fields[:, 4]
    out[:, K.C_DICT_SIZE] = fields[:, 5]
    out[:, K.C_CODES] = fields[:, 6]
    out[:, K.C_LEVELS] = fields[:, 7]
    return out


def _dtype_of(chunks) -> torch.dtype:
    """The dtype of raw chunks of one column (a list of RawChunk or a RawSet)."""
    return chunks.dtype if type(chunks) is RawSet else chunks[0].dtype


def decode_raw_many(items: list, data: torch.Tensor, room=None, split: bool = True):
    """decode_raw's way without waiting (``exact`` off) for several columns
    at once, so that their pages go through one pass of the kernels (the
    page walk once per value size, one decompression, then the page kernel
    per column): ``items`` are (raw chunks of one dtype, their RawLayout,
    where that layout's buffer starts in ``data``). Returns ([values per
    item], [validity per item: None where no chunk of it may hold NULLs],
    err): one flag for all of them (see decode_raw). ``room(nbytes)``:
    a context manager held while the decode's device memory (``nbytes``) is
    allocated, and only then (the scan's memory manager makes room; its lock
    held over the kernels' launches too kept a small table's decode waiting
    for a large one's). ``split``: see decode_raw."""
    from glint.kernels import parquet_raw as K
    from glint.kernels.hybrid import decode_pages_triton

    device = data.device
    order = sorted(range(len(items)), key=lambda i: _dtype_of(items[i][0]).itemsize)
    blocks, spans = [], {}
    n_rows = dst = page = 0
    for i in order:
        chunks, layout, base = items[i]
        block = _chunk_table(chunks, layout, base, dst, page)
        blocks.append(block)
        r0, p0 = n_rows, page
        n_rows += len(chunks)
        dst = int(block[-1, K.C_DST_END]) if len(chunks) else dst
        page += int(block[:, K.C_CAP].sum())
        spans[i] = (r0, n_rows, p0, page, int(block[:, K.C_VALUES].sum()))
    # the items with chunks that may hold NULLs (their levels decoded, their values placed)
    nulls = {i for i, b in zip(order, blocks) if (b[:, K.C_LEVELS] == LEVELS_NULLS).any()}
    nbytes = (
        dst
        + 16
        + 8 * (n_rows * K.CHUNK_FIELDS + page * (K.PAGE_FIELDS + 7))
        + sum(spans[i][4] * _dtype_of(items[i][0]).itemsize for i in order)
        + (8 * page * K.LEV_FIELDS if nulls else 0)
        + sum(spans[i][4] * (9 + _dtype_of(items[i][0]).itemsize) for i in nulls)
    )
    with room(nbytes) if room is not None else contextlib.nullcontext():
        rows = np.concatenate(blocks) if blocks else np.zeros((0, K.CHUNK_FIELDS), dtype=np.int64)
        table = to_device(torch.from_numpy(rows), device)
        err = torch.zeros(1, dtype=torch.int32, device=device)
        # rows past a chunk's pages copy nothing and decode nothing
        pages = torch.zeros((page, K.PAGE_FIELDS), dtype=torch.int64, device=device)
        dec = torch.zeros((page, 7), dtype=torch.int64, device=device)
        buf = torch.empty(dst + 16, dtype=torch.uint8, device=device)
        outs = {i: torch.empty(spans[i][4], dtype=_dtype_of(items[i][0]), device=device) for i in range(len(items))}
        lev = torch.full((page if nulls else 0, K.LEV_FIELDS), K.LEV_NONE, dtype=torch.int64, device=device)
        srcs = {i: torch.arange(spans[i][4], dtype=torch.int64, device=device) for i in nulls}
    dec[:, 2] = -1
    walks: dict[int, list] = {}  # value size -> [first row, end row]
    for i in order:
        item = _dtype_of(items[i][0]).itemsize
        r0, r1 = spans[i][:2]
        walks.setdefault(item, [r0, r1])[1] = r1
    for item, (r0, r1) in walks.items():
        t = table[r0:r1]
        got = K.walk_chunks_triton(data, t, item, pages, dec, lev)
        err += ((got < 0) | (got > t[:, K.C_CAP])).any().to(torch.int32)
    # (a chunk's codec is every one of its pages': no snappy chunk, no snappy page)
    snappy = bool((rows[:, K.C_CODEC] == K.SNAPPY).any())
    K.inflate_pages_triton(data, buf, pages, err, split, snappy)
    for i, src in srcs.items():
        _, _, p0, p1, _ = spans[i]
        _levels(data, buf, lev[p0:p1], dec[p0:p1], src, err)
    _index_widths(buf, dec, err)
    out, valids = [], []
    for i, (chunks, _, _) in enumerate(items):
        dtype = _dtype_of(chunks)
        item = dtype.itemsize
        _, _, p0, p1, n = spans[i]
        values = outs.pop(i)
        decode_pages_triton(buf, buf[: (buf.numel() // item) * item].view(dtype), dec[p0:p1], values, err)
        src = srcs.pop(i, None)
        with room(0) if room is not None and src is not None else contextlib.nullcontext():
            values, valid = _placed(values, src)
        out.append(values)
        valids.append(valid)
    return out, valids, err
