"""Parquet column chunks of fixed-width types decoded into torch tensors: the
pure-torch reference of a device Parquet decoder.

The host does what is sequential and small: it reads a column chunk's bytes
(one ``pread``), parses the page headers (Thrift compact protocol, with the
helpers of :mod:`glint.io.parquet_meta`), decompresses the pages
(``pa.Codec``) and parses the run headers of the RLE / bit-packed hybrid
streams (definition levels, dictionary indices): a Python loop over pages and
runs, never over values. Everything per value is a handful of vectorised torch
operations over the whole chunk at once, on whatever device the bytes were
moved to: run expansion (``repeat_interleave``), bit unpacking (gather the
bytes under each value's bit position, shift, mask), dictionary gather, and
NULL scatter (``masked_scatter_``).

The trick that keeps it to one pass: the chunk's bytes are laid out as one
buffer, ``[hybrid streams][dictionary values][PLAIN values of every PLAIN
page]``, so "the values" are one array (dictionary entries, then PLAIN values)
and every page, dictionary-encoded or PLAIN, becomes runs of indices into it:
a dictionary page's runs are its hybrid runs, a PLAIN page is one run
``base, base + 1, ...``. A chunk that falls back from dictionary to PLAIN pages
mid-chunk (writers do when the dictionary grows too big) needs nothing extra.

Scope: INT32, INT64, FLOAT, DOUBLE; flat columns (max repetition level 0, max
definition level 0 or 1); DATA_PAGE, DATA_PAGE_V2, DICTIONARY_PAGE (INDEX_PAGE
skipped); encodings PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY; the codecs
``pa.Codec`` handles. Anything else raises :class:`glint.errors.NotSupported`
naming the column; malformed bytes raise :class:`glint.errors.GlintIOError`.

>>> import pyarrow as pa, pyarrow.parquet as pq, tempfile
>>> d = tempfile.mkdtemp()
>>> pq.write_table(pa.table({"x": pa.array([7, None, 7, 9], pa.int32())}), d + "/t.parquet")
>>> values, valid = decode_column_chunk(d + "/t.parquet", 0, 0)
>>> values.tolist(), valid.tolist()
([7, 0, 7, 9], [True, False, True, True])
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.parquet as pq
import torch

from glint.errors import GlintIOError, NotSupported
from glint.io.file_reads import FileRange
from glint.io.parquet_meta import ThriftError, _varint
from glint.io.parquet_page_headers import (
    DATA_PAGE,
    DICTIONARY_PAGE,
    PHYSICAL_DTYPES,
    PLAIN,
    PLAIN_DICTIONARY,
    RLE,
    RLE_DICTIONARY,
    Page,
    encoding_name,
    parquet_codec,
    parse_pages,
    read_chunk_bytes,
)

MAX_BIT_WIDTH = 32  # widest hybrid value decoded (indices, levels)


# ------------------------------------------------------------------ hybrid runs
class _Runs:
    """Runs of values, parsed on the host and expanded on the device. Run r
    gives ``length`` values, the k-th being ``base + step * k + field(bit + k *
    width)``, field(p) the ``width``-bit little-endian field at bit p of the
    data (an RLE run: width 0; a bit-packed run: base 0; a PLAIN page's
    indices: step 1). ``limit`` > 0: every value must be below it (checked on
    the device, for bit-packed runs only: other runs are checked on the host)."""

    def __init__(self):
        self.rows = ([], [], [], [], [], [])  # length, base, step, bit, width, limit
        self.total = 0
        self.max_width = 0
        self.stepped = False
        self.checked = False

    def add(self, length: int, base: int = 0, step: int = 0, bit: int = 0, width: int = 0, limit: int = 0):
        """``limit`` > 0: the run's values (base included) must be below it;
        checked when the field's width allows values at or past ``limit -
        base``."""
        for row, v in zip(self.rows, (length, base, step, bit, width, limit)):
            row.append(v)
        self.total += length
        self.max_width = max(self.max_width, width)
        self.stepped |= step != 0
        self.checked |= limit > 0 and base + (1 << width) > limit

    def extend(self, other: _Runs, bit_shift: int = 0) -> None:
        """Append other's runs, their bit offsets moved by ``bit_shift``."""
        for mine, theirs in zip(self.rows, other.rows):
            mine.extend(theirs)
        if bit_shift:
            bits = self.rows[3]
            for j in range(len(bits) - len(other.rows[3]), len(bits)):
                bits[j] += bit_shift
        self.total += other.total
        self.max_width = max(self.max_width, other.max_width)
        self.stepped |= other.stepped
        self.checked |= other.checked

    def expand(self, data: torch.Tensor) -> torch.Tensor:
        """The values of all runs, in order (int64 on data's device). ``data``:
        the uint8 bytes the bit offsets point into, followed by at least 8 zero
        bytes."""
        dev = data.device
        if not self.total:
            return torch.zeros(0, dtype=torch.int64, device=dev)
        t = torch.tensor(self.rows, dtype=torch.int64).to(dev)
        length, base, step, bit, width, limit = t.unbind(0)
        run = torch.repeat_interleave(torch.arange(len(self.rows[0]), device=dev), length, output_size=self.total)
        out = base[run]
        if self.stepped or self.max_width:
            start = torch.cumsum(length, 0) - length
            k = torch.arange(self.total, device=dev) - start[run]
            if self.stepped:
                out = out + step[run] * k
            if self.max_width:
                w = width[run]
                pos = bit[run] + k * w
                byte = pos >> 3
                word = data[byte].to(torch.int64)
                for j in range(1, (self.max_width + 14) // 8):  # bytes under 7 + width bits
                    word |= data[byte + j].to(torch.int64) << (8 * j)
                mask = torch.bitwise_left_shift(torch.ones_like(w), w) - 1
                out = out + ((word >> (pos & 7)) & mask)
        if self.checked:
            lim = limit[run]
            if bool(((lim > 0) & (out >= lim)).any()):
                raise ValueError("a value is out of range (a dictionary index past the dictionary?)")
        return out


def _parse_hybrid(
    b, i: int, end: int, width: int, count: int, runs: _Runs, limit: int = 0, offset: int = 0
) -> int | None:
    """Parse the run headers of the RLE / bit-packed hybrid stream in b[i:end]
    (``count`` values of ``width`` bits) into ``runs``, each value plus
    ``offset``; bit offsets are positions in b; ``limit`` > 0: every value
    (before the offset) must be below it. Returns the number of ones when
    width is 1 (definition levels of a column with max level 1: the non-NULL
    count), else None."""
    vbytes = (width + 7) // 8
    ones = 0
    left = count
    while left > 0:
        if i >= end:
            raise ValueError(f"hybrid stream ends {left} values short")
        h, i = _varint(b, i)
        n = h >> 1
        if h & 1:  # bit-packed: n groups of 8 values
            take = min(n * 8, left)
            need = (take * width + 7) // 8
            if i + need > end:
                raise ValueError("bit-packed run runs past its stream")
            if take:
                runs.add(take, base=offset, bit=i * 8, width=width, limit=limit and offset + limit)
                if width == 1:
                    ones += (int.from_bytes(b[i : i + need], "little") & ((1 << take) - 1)).bit_count()
            i += n * width
        else:  # RLE: n copies of one value
            if i + vbytes > end:
                raise ValueError("RLE run runs past its stream")
            v = int.from_bytes(b[i : i + vbytes], "little")
            i += vbytes
            take = min(n, left)
            if limit and v >= limit:
                raise ValueError(f"RLE value {v} out of range (limit {limit})")
            if take:
                runs.add(take, base=v + offset)
                ones += v * take
        left -= take
    return ones if width == 1 else None


def decode_hybrid(data, bit_width: int, count: int) -> torch.Tensor:
    """The first ``count`` values of an RLE / bit-packed hybrid stream (bytes,
    or a uint8 tensor: the result is on its device) of ``bit_width``-bit
    values, as int32.

    >>> decode_hybrid(bytes([0x06, 0x05]), 3, 3).tolist()                 # RLE: 3 x 5
    [5, 5, 5]
    >>> decode_hybrid(bytes([0x03, 0b10001000, 0b11000110, 0b11111010]), 3, 8).tolist()
    [0, 1, 2, 3, 4, 5, 6, 7]
    """
    if not 0 <= bit_width <= MAX_BIT_WIDTH:
        raise ValueError(f"bit width {bit_width} (0 to {MAX_BIT_WIDTH})")
    dev = data.device if isinstance(data, torch.Tensor) else torch.device("cpu")
    b = bytes(data.cpu().numpy()) if isinstance(data, torch.Tensor) else bytes(data)
    runs = _Runs()
    _parse_hybrid(b, 0, len(b), bit_width, count, runs)
    padded = torch.frombuffer(bytearray(b + bytes(8)), dtype=torch.uint8).to(dev)
    return runs.expand(padded).to(torch.int32)


def decode_streams(data: torch.Tensor, starts, ends, widths, counts, use_triton: bool | None = None) -> torch.Tensor:
    """Several hybrid streams of one buffer at once: stream s is
    ``data[starts[s]:ends[s]]`` (``data`` a uint8 tensor ending in at least 8
    zero bytes), ``counts[s]`` values of ``widths[s]`` bits; their values one
    after the other, as int32 on data's device. On CUDA (or with
    ``use_triton``) one Triton program per stream walks the run headers
    (glint.kernels.hybrid); otherwise the headers are parsed on the host and
    the runs expanded with torch, the reference the kernel is tested against.

    >>> data = torch.tensor([0x06, 0x05, 0x03, 0b10001000, 0b11000110, 0b11111010] + [0] * 8, dtype=torch.uint8)
    >>> decode_streams(data, [0, 2], [2, 6], [3, 3], [3, 8]).tolist()
    [5, 5, 5, 0, 1, 2, 3, 4, 5, 6, 7]
    """
    dev = data.device
    meta = [torch.as_tensor(x, dtype=torch.int64) for x in (starts, ends, widths, counts)]
    if any(int(w) < 0 or int(w) > MAX_BIT_WIDTH for w in meta[2].tolist()):
        raise ValueError(f"bit width outside 0..{MAX_BIT_WIDTH}")
    total = int(meta[3].sum())
    if use_triton is None:
        use_triton = dev.type == "cuda"
    if use_triton:
        from glint.kernels.hybrid import decode_streams_triton

        starts_t, ends_t, widths_t, counts_t = (m.to(dev) for m in meta)
        offsets = torch.cumsum(counts_t, 0) - counts_t
        out = torch.zeros(total, dtype=torch.int32, device=dev)
        return decode_streams_triton(data, starts_t, ends_t, widths_t, counts_t, offsets, out)
    b = bytes(data.cpu().numpy())
    runs = _Runs()
    for s, e, w, c in zip(*(m.tolist() for m in meta)):
        _parse_hybrid(b, s, e, w, c, runs)
    return runs.expand(data).to(torch.int32)


# ------------------------------------------------------------------ column chunks
@dataclass
class ChunkPlan:
    """A column chunk's pages with the host's part of the decoding done:
    headers parsed, bodies decompressed, definition level runs parsed; the
    values are decoded by :func:`decode_plans`, for many chunks at once.

    ``hyb``: the chunk's hybrid streams (definition levels, dictionary
    indices), buffers taken one after the other; ``vals``: the dictionary's entries, then
    every PLAIN page's values (buffers, ``vals_bytes`` in all; ``vals_n``
    values); ``streams``: each data page's indices into the values in page
    order, ``(start, end, width, count)`` of a dictionary-encoded page's
    stream in ``hyb``, ``(None, first, 0, count)`` for a PLAIN page (indices
    first, first + 1, ...); ``levels``: the definition level runs (bit
    offsets into ``hyb``), None for a required column."""

    dtype: torch.dtype
    rows: int
    stored: int
    dict_n: int | None
    hyb: list
    vals: list
    vals_bytes: int
    streams: list
    levels: _Runs | None

    @property
    def vals_n(self) -> int:
        return self.vals_bytes // self.dtype.itemsize

    @property
    def hyb_bytes(self) -> int:
        return sum(len(x) for x in self.hyb)

    @property
    def nbytes(self) -> int:
        """Bytes copied to the device for this chunk."""
        return self.hyb_bytes + self.vals_bytes


def _check_column(meta, column: int):
    col = meta.schema.column(column)
    name = col.path
    dtype = PHYSICAL_DTYPES.get(col.physical_type)
    if dtype is None:
        raise NotSupported(
            f"Parquet column {name!r}: physical type {col.physical_type} "
            "(only INT32, INT64, FLOAT and DOUBLE are decoded)"
        )
    if col.max_repetition_level or col.max_definition_level > 1:
        raise NotSupported(
            f"Parquet column {name!r}: nested column (max repetition level "
            f"{col.max_repetition_level}, max definition level {col.max_definition_level})"
        )
    return name, dtype, col.max_definition_level


def plan_column_chunk(path: str, rg: int, column: int, metadata: pq.FileMetaData | None = None) -> ChunkPlan:
    """The host's part of decoding column ``column`` (leaf index) of row
    group ``rg``: read, page headers, decompression (see ChunkPlan)."""
    meta = metadata if metadata is not None else pq.read_metadata(path)
    name, dtype, max_def = _check_column(meta, column)
    cc = meta.row_group(rg).column(column)
    plan = plan_pages(
        parse_pages(read_chunk_bytes(path, cc, reuse=True), parquet_codec(cc), column=name), dtype, max_def, name
    )
    if plan.rows != cc.num_values:
        raise GlintIOError(f"Parquet column {name!r}: pages hold {plan.rows} values, the column chunk {cc.num_values}")
    return plan


def decode_column_chunk(
    path: str,
    rg: int,
    column: int,
    device="cpu",
    metadata: pq.FileMetaData | None = None,
    use_triton: bool | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Column ``column`` (leaf index) of row group ``rg`` of a Parquet file:
    (values, valid). values: int32 / int64 / float32 / float64 on ``device``,
    0 where NULL; valid: a bool tensor, or None when the column cannot hold
    NULLs (max definition level 0). ``metadata``: the file's, when already read.
    ``use_triton`` (default: on CUDA): the pages are decoded by one Triton
    program per page (glint.kernels.hybrid) instead of from run headers
    parsed on the host.

    >>> import pyarrow as pa, pyarrow.parquet as pq, tempfile
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"f": [1.5, float("nan")], "s": ["a", "b"]}), d + "/t.parquet")
    >>> decode_column_chunk(d + "/t.parquet", 0, 0)[0].tolist()
    [1.5, nan]
    >>> decode_column_chunk(d + "/t.parquet", 0, 1)
    Traceback (most recent call last):
    ...
    glint.errors.NotSupported: Not supported: Parquet column 's': physical type BYTE_ARRAY (only INT32, INT64, FLOAT and DOUBLE are decoded)
    """
    meta = metadata if metadata is not None else pq.read_metadata(path)
    plan = plan_column_chunk(path, rg, column, meta)
    name = meta.schema.column(column).path
    values, valid, err = decode_plans([plan], device, use_triton=use_triton, column=name)
    check_decoded(err, name)
    return values, valid


def plan_pages(pages: list[Page], dtype: torch.dtype, max_def: int, column: str) -> ChunkPlan:
    """A column chunk's parsed pages as a ChunkPlan; malformed pages raise
    GlintIOError, encodings not handled NotSupported (naming ``column``)."""
    size = dtype.itemsize
    hyb = []  # hybrid streams (levels, indices): positions count from the first
    hyb_len = 0
    vals = []  # dictionary entries, then the values of PLAIN pages
    vals_bytes = 0
    levels = _Runs() if max_def else None
    dict_n = None
    total = stored = 0
    streams: list[tuple] = []
    try:
        for p in pages:
            if p.kind == DICTIONARY_PAGE:
                if dict_n is not None or total:
                    raise ValueError("a dictionary page that is not the chunk's first page")
                if p.encoding not in (PLAIN, PLAIN_DICTIONARY):
                    raise NotSupported(
                        f"Parquet column {column!r}: dictionary page encoding {encoding_name(p.encoding)}"
                    )
                if p.num_values < 0 or len(p.body) < p.num_values * size:
                    raise ValueError("dictionary page shorter than its entries")
                vals.append(memoryview(p.body)[: p.num_values * size])
                vals_bytes += p.num_values * size
                dict_n = p.num_values
                continue
            n = p.num_values
            body = memoryview(p.body)
            k = n  # stored (non-NULL) values
            if max_def:
                if p.kind == DATA_PAGE:
                    if p.def_encoding != RLE:
                        raise NotSupported(
                            f"Parquet column {column!r}: definition level encoding {encoding_name(p.def_encoding)}"
                        )
                    if len(body) < 4:
                        raise ValueError("page too short for its definition levels")
                    ln = int.from_bytes(body[:4], "little")
                    if 4 + ln > len(body):
                        raise ValueError("definition levels longer than the page")
                    lv = body[4 : 4 + ln]
                    body = body[4 + ln :]
                else:
                    lv = p.def_bytes
                page_levels = _Runs()
                k = _parse_hybrid(lv, 0, len(lv), 1, n, page_levels, limit=max_def + 1)
                levels.extend(page_levels, bit_shift=8 * hyb_len)
                hyb.append(lv)
                hyb_len += len(lv)
                if p.num_nulls is not None and p.num_nulls != n - k:
                    raise ValueError(f"page says {p.num_nulls} NULLs, its levels {n - k}")
            if p.encoding == PLAIN:
                if len(body) < k * size:
                    raise ValueError("PLAIN page shorter than its values")
                streams.append((None, vals_bytes // size, 0, k))  # indices first, first + 1, ...
                vals.append(body[: k * size])
                vals_bytes += k * size
            elif p.encoding in (PLAIN_DICTIONARY, RLE_DICTIONARY):
                if dict_n is None:
                    raise ValueError("a dictionary-encoded page without a dictionary page")
                if k:
                    if not len(body) or body[0] > MAX_BIT_WIDTH:
                        raise ValueError("bad dictionary index bit width")
                    hyb.append(body[1:])
                    streams.append((hyb_len, hyb_len + len(body) - 1, body[0], k))
                    hyb_len += len(body) - 1
            else:
                raise NotSupported(f"Parquet column {column!r}: value encoding {encoding_name(p.encoding)}")
            total += n
            stored += k
    except (ValueError, ThriftError, IndexError) as e:
        raise GlintIOError(f"Parquet column {column!r}: bad page data: {e}") from None
    return ChunkPlan(dtype, total, stored, dict_n, hyb, vals, vals_bytes, streams, levels)


@dataclass
class PlanLayout:
    """Where the plans of one decode_plans call lie in the one buffer copied
    to the device: ``[every plan's hyb][pad to 8][every plan's vals][8 zero
    bytes]``. ``segments``: (offset, buffer) pairs to fill it with; ``table``:
    the page table of glint.kernels.hybrid.decode_pages_triton (int64)."""

    total: int
    vals_at: int
    segments: list
    table: torch.Tensor
    hyb_at: list
    vals_base: list
    out_at: list
    rows: int
    stored: int


def layout_plans(plans: list[ChunkPlan]) -> PlanLayout:
    """The layout of the plans' bytes in one buffer (see PlanLayout)."""
    size = plans[0].dtype.itemsize
    segments, hyb_at, vals_base, out_at = [], [], [], []
    at = 0
    for p in plans:
        hyb_at.append(at)
        for x in p.hyb:
            if len(x):
                segments.append((at, x))
            at += len(x)
    vals_at = (at + 7) // 8 * 8
    at = vals_at
    for p in plans:
        vals_base.append((at - vals_at) // size)
        for v in p.vals:
            if len(v):
                segments.append((at, v))
            at += len(v)
    rows = []
    out = 0
    for p, h, vb in zip(plans, hyb_at, vals_base):
        out_at.append(out)
        o = out
        for st, end, width, k in p.streams:
            if st is None:  # PLAIN
                rows.append((0, 0, -1, k, o, vb + end, 0))
            else:
                rows.append((h + st, h + end, width, k, o, vb, p.dict_n))
            o += k
        out += p.stored
    table = torch.tensor(rows, dtype=torch.int64).reshape(-1, 7)
    return PlanLayout(at + 8, vals_at, segments, table, hyb_at, vals_base, out_at, sum(p.rows for p in plans), out)


def fill_layout(layout: PlanLayout) -> torch.Tensor:
    """The layout's buffer on the host (uint8)."""
    buf = bytearray(layout.total)
    mv = memoryview(buf)
    for at, seg in layout.segments:
        if isinstance(seg, FileRange):
            seg.read_into(mv[at : at + len(seg)])
        else:
            mv[at : at + len(seg)] = seg
    return torch.frombuffer(buf, dtype=torch.uint8) if layout.total else torch.zeros(0, dtype=torch.uint8)


def decode_inputs(items, make_layout, layout, data, device, use_triton, what: str):
    """decode_plans' and decode_raw's common start: (the items' one dtype,
    their layout, its buffer on the device, whether Triton decodes)."""
    dtype = items[0].dtype
    if any(x.dtype != dtype for x in items):
        raise ValueError(f"decode: {what} of different dtypes")
    if layout is None:
        layout = make_layout(items)
    if data is None:
        data = fill_layout(layout).to(torch.device(device))
    if use_triton is None:
        use_triton = data.device.type == "cuda"
    return dtype, layout, data, use_triton


def to_device(t: torch.Tensor, device) -> torch.Tensor:
    """A small host tensor (a page table) on ``device`` without waiting for
    the device: a copy from pageable memory first waits for everything
    queued on the stream (CUDA synchronizes the stream for it), which kept
    the scan's reader from running ahead of the query's kernels. It goes
    through pinned memory instead (torch's caching host allocator keeps the
    block until the copy is done)."""
    device = torch.device(device)
    if device.type != "cuda" or t.is_cuda:
        return t.to(device)
    return t.pin_memory().to(device, non_blocking=True)


def decode_plans(
    plans: list[ChunkPlan],
    device="cpu",
    use_triton: bool | None = None,
    data: torch.Tensor | None = None,
    layout: PlanLayout | None = None,
    column: str = "?",
    valid_when_no_nulls: bool = True,
):
    """The values of several column chunks (plans of one dtype) one after
    the other: (values, valid, err). ``data``: the layout's buffer already
    on the device (the scan copies it up through pinned memory), else it is
    copied from pageable memory. ``use_triton`` (default: on CUDA): one
    Triton program per page decodes and gathers the values; otherwise the
    run headers are parsed on the host and expanded with torch (the
    reference, and the CPU path). ``err``: None when the pages were checked
    already (the torch path), else an int32 device tensor that is nonzero
    when a page's data was bad: see :func:`check_decoded` (checking it
    waits for the device, so the caller picks when). ``valid``: None for
    required columns, and with ``valid_when_no_nulls=False`` also when no
    value is NULL."""
    dtype, layout, data, use_triton = decode_inputs(plans, layout_plans, layout, data, device, use_triton, "plans")
    device = data.device
    source = (
        data[layout.vals_at : layout.total - 8].view(dtype)
        if layout.total
        else torch.zeros(0, dtype=dtype, device=device)
    )
    err = None
    try:
        if use_triton:
            from glint.kernels.hybrid import decode_pages_triton

            values = torch.empty(layout.stored, dtype=dtype, device=device)
            err = torch.zeros(1, dtype=torch.int32, device=device)
            decode_pages_triton(data, source, to_device(layout.table, device), values, err)
        else:
            index = _Runs()
            for p, h, vb in zip(plans, layout.hyb_at, layout.vals_base):
                local = _Runs()  # bit offsets into p.hyb, then into the buffer
                hyb = b"".join(p.hyb)
                for st, end, width, k in p.streams:
                    if st is None:
                        local.add(k, base=vb + end, step=1)
                    else:
                        _parse_hybrid(hyb, st, end, width, k, local, limit=p.dict_n, offset=vb)
                index.extend(local, bit_shift=8 * h)
            values = source[index.expand(data)] if index.total else torch.zeros(0, dtype=dtype, device=device)
        if all(p.levels is None for p in plans):
            return values, None, err
        if layout.stored == layout.rows and not valid_when_no_nulls:
            return values, None, err
        levels = _Runs()
        for p, h in zip(plans, layout.hyb_at):
            if p.levels is None:
                levels.add(p.rows, base=1)
            else:
                levels.extend(p.levels, bit_shift=8 * h)
        valid = levels.expand(data) == 1
        return torch.zeros(layout.rows, dtype=dtype, device=device).masked_scatter_(valid, values), valid, err
    except (ValueError, ThriftError, IndexError) as e:
        raise GlintIOError(f"Parquet column {column!r}: bad page data: {e}") from None


def check_decoded(err: torch.Tensor | None, column: str = "?") -> None:
    """Raise GlintIOError if decode_plans' kernel found bad page data (waits
    for the device)."""
    if err is not None and int(err.item()):
        raise GlintIOError(
            f"Parquet column {column!r}: bad page data: a dictionary index past the "
            "dictionary, or an index stream shorter than its page"
        )
