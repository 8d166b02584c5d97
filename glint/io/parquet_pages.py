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

import contextlib
import itertools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from glint.errors import GlintIOError, NotSupported
from glint.runtime.settings import env_int
from glint.io.parquet_meta import ThriftError, _skip, _varint

# PageType
DATA_PAGE, INDEX_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 1, 2, 3
# Encoding
PLAIN, PLAIN_DICTIONARY, RLE, BIT_PACKED, RLE_DICTIONARY = 0, 2, 3, 4, 8
_ENCODING_NAMES = {0: "PLAIN", 2: "PLAIN_DICTIONARY", 3: "RLE", 4: "BIT_PACKED",
                   5: "DELTA_BINARY_PACKED", 6: "DELTA_LENGTH_BYTE_ARRAY",
                   7: "DELTA_BYTE_ARRAY", 8: "RLE_DICTIONARY", 9: "BYTE_STREAM_SPLIT"}
_DTYPES = {"INT32": torch.int32, "INT64": torch.int64, "FLOAT": torch.float32, "DOUBLE": torch.float64}
# Parquet codec name (the Thrift enum's) -> pa.Codec name
_CODECS = {"UNCOMPRESSED": None, "SNAPPY": "snappy", "GZIP": "gzip", "BROTLI": "brotli",
           "ZSTD": "zstd", "LZ4_RAW": "lz4_raw"}
# pyarrow's ColumnChunkMetaData.compression calls Thrift's LZ4_RAW "LZ4" (Arrow's
# Compression::LZ4 is the raw block format); Thrift's LZ4 (Hadoop framing) is "UNKNOWN" there.
_FROM_PYARROW = {"LZ4": "LZ4_RAW"}
_MAX_WIDTH = 32                          # widest hybrid value decoded (indices, levels)


def _encoding_name(e: int) -> str:
    return _ENCODING_NAMES.get(e, f"encoding {e}")


@dataclass(frozen=True)
class Page:
    """One page of a column chunk, header parsed and body decompressed.

    ``kind``: DATA_PAGE, DICTIONARY_PAGE or DATA_PAGE_V2. ``num_values``: a
    data page's values, NULLs included; a dictionary page's entries.
    ``encoding``: the value encoding. ``body``: the decompressed body; of a v1
    page everything (definition levels with their 4-byte length, then the
    values), of a v2 page only what follows the levels. ``def_bytes``: a v2
    page's definition levels (a hybrid stream without length prefix).
    ``def_encoding``: a v1 page's definition level encoding. ``num_nulls``: a
    v2 page's NULL count (None for other pages)."""
    kind: int
    num_values: int
    encoding: int
    body: bytes
    def_bytes: bytes = b""
    def_encoding: int = RLE
    num_nulls: int | None = None


class BufferPool:
    """Host buffers for column chunks read as stored, kept for reuse once
    released (a scan releases a chunk's after copying it up), so that
    reading does not page-fault fresh memory in for every chunk: buffers
    of power-of-two sizes from 64 KiB, at most ``limit`` bytes kept."""

    def __init__(self, limit: int = 4 << 30):
        self.limit = limit
        self.kept = 0
        self._free: dict[int, list] = {}
        self._lock = threading.Lock()

    def get(self, n: int) -> bytearray:
        size = max(1 << 16, 1 << (max(n, 1) - 1).bit_length())
        with self._lock:
            got = self._free.get(size)
            if got:
                self.kept -= size
                return got.pop()
        return bytearray(size)

    def put(self, buf) -> None:
        size = len(buf)
        if size & (size - 1) or size < 1 << 16:
            return
        with self._lock:
            if self.kept + size <= self.limit:
                self._free.setdefault(size, []).append(buf)
                self.kept += size


RAW_BUFFERS = BufferPool()
_READ_BUFFERS = threading.local()
_REUSE_MAX = 64 << 20           # a thread keeps a read buffer of at most this size


def read_chunk_bytes(path: str, cc, reuse: bool | None = False):
    """The bytes of a column chunk (``cc``: pyarrow's ColumnChunkMetaData), page
    headers included: from the dictionary page when there is one, else from the
    first data page, ``total_compressed_size`` bytes. ``reuse``: read into
    the calling thread's own buffer and return a memoryview of it, valid
    until the thread's next call (no fresh allocation per chunk; this did
    not, as first supposed, make 16 planning threads scale: what holds them
    back is the GIL, see bench/results/streaming-6). ``reuse=None``: into a
    buffer of pyarrow's memory pool, returned as a memoryview."""
    return read_bytes(path, _chunk_start(cc), cc.total_compressed_size, reuse)


def _chunk_start(cc) -> int:
    """Where a column chunk's bytes start: its dictionary page, if any."""
    if cc.has_dictionary_page and cc.dictionary_page_offset:
        return cc.dictionary_page_offset
    return cc.data_page_offset


def read_bytes(path: str, start: int, n: int, reuse: bool | None = False, files: "FileHandles | None" = None):
    """``n`` bytes of a file from ``start`` (see read_chunk_bytes;
    ``files``: see FileHandles)."""
    if reuse and n <= _REUSE_MAX:
        buf = getattr(_READ_BUFFERS, "buf", None)
        if buf is None or len(buf) < n:
            buf = _READ_BUFFERS.buf = bytearray(max(n, 1 << 20))
    elif reuse is None:
        # a buffer of the pool below (fresh memory per chunk page-faults in:
        # on the device host 16 threads reading into fresh buffers moved
        # 0.8 GB/s, into pyarrow's pool 1.7 GB/s)
        buf = RAW_BUFFERS.get(n)
    else:
        buf = bytearray(n)
    mv = memoryview(buf)
    _pread_into(path, start, mv[:n], files)
    if reuse is None:
        return mv[:n]
    return mv[:n] if reuse else bytes(buf)


# PageHeader's struct fields that are parsed (the data page headers); any
# other struct (statistics, ...) is skipped
_PAGE_STRUCTS = frozenset((5, 7, 8))


def _header_fields(b, i: int, structs=frozenset()) -> tuple[dict, int]:
    """The integer and bool fields of the Thrift compact struct at i, by field
    id (the fields with ids in ``structs`` parsed as structs the same way,
    everything else skipped), and the position after the struct: a page
    header's few fields without the generic parser's lists (this runs once
    per page, holding the GIL)."""
    out = {}
    fid = 0
    while True:
        h = b[i]
        i += 1
        if h == 0:
            return out, i
        t = h & 15
        if h >> 4:
            fid += h >> 4
        else:
            v, i = _varint(b, i)
            fid = (v >> 1) ^ -(v & 1)
        if 4 <= t <= 6:                             # i16 / i32 / i64: zigzag varint
            v = b[i]
            if v < 0x80:
                i += 1
            else:
                v, i = _varint(b, i)
            out[fid] = (v >> 1) ^ -(v & 1)
        elif t == 1 or t == 2:                      # bool: the value is the type
            out[fid] = t == 1
        elif t == 12 and fid in structs:
            out[fid], i = _header_fields(b, i)
        else:
            i = _skip(b, i, t)


def _required(d: dict, fid: int, what: str):
    if fid not in d:
        raise ThriftError(f"page header without {what}")
    return d[fid]


def parse_pages(buf: bytes, codec: str, column: str = "?") -> list[Page]:
    """The pages of a column chunk's bytes (see read_chunk_bytes), headers
    parsed and bodies decompressed; INDEX_PAGEs are left out. ``codec``: the
    Parquet name of the chunk's compression (UNCOMPRESSED, SNAPPY, GZIP,
    BROTLI, ZSTD, LZ4_RAW); ``column`` names the column in errors.

    >>> import pyarrow as pa, pyarrow.parquet as pq, tempfile
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"x": [5, 5, 6]}), d + "/t.parquet", compression="zstd")
    >>> cc = pq.read_metadata(d + "/t.parquet").row_group(0).column(0)
    >>> [(p.kind, p.num_values, p.encoding) for p in parse_pages(read_chunk_bytes(d + "/t.parquet", cc), "ZSTD")]
    [(2, 2, 0), (0, 3, 8)]
    """
    name = codec.upper()
    if name not in _CODECS:
        why = " (Hadoop-framed LZ4)" if name == "LZ4" else ""
        raise NotSupported(f"Parquet column {column!r}: compression codec {codec}{why}")
    dec = pa.Codec(_CODECS[name]) if _CODECS[name] else None

    def inflate(raw, size: int) -> bytes:
        # (into pyarrow's memory pool, which keeps its memory, not into a
        # fresh bytes object: see read_chunk_bytes)
        if dec is None:
            out = bytes(raw)
        elif size == 0:
            out = b""
        else:
            out = memoryview(dec.decompress(raw, decompressed_size=size)).cast("B")
        if len(out) != size:
            raise ThriftError(f"page body is {len(out)} bytes, its header says {size}")
        return out

    mv = memoryview(buf)
    pages = []
    i = 0
    try:
        while i < len(buf):
            d, j = _header_fields(buf, i, _PAGE_STRUCTS)
            kind = _required(d, 1, "type")
            usize = _required(d, 2, "uncompressed_page_size")
            csize = _required(d, 3, "compressed_page_size")
            i = j + csize
            if csize < 0 or usize < 0 or i > len(buf):
                raise ThriftError("page runs past the end of the column chunk")
            raw = mv[j:i]
            if kind == INDEX_PAGE:
                continue
            if kind == DATA_PAGE:
                h = _required(d, 5, "data_page_header")
                pages.append(Page(
                    DATA_PAGE, _required(h, 1, "num_values"), _required(h, 2, "encoding"), inflate(raw, usize),
                    def_encoding=h.get(3, RLE)))
            elif kind == DICTIONARY_PAGE:
                h = _required(d, 7, "dictionary_page_header")
                pages.append(Page(
                    DICTIONARY_PAGE, _required(h, 1, "num_values"), _required(h, 2, "encoding"),
                    inflate(raw, usize)))
            elif kind == DATA_PAGE_V2:
                h = _required(d, 8, "data_page_header_v2")
                dl = _required(h, 5, "definition_levels_byte_length")
                rl = _required(h, 6, "repetition_levels_byte_length")
                if dl < 0 or rl < 0 or dl + rl > min(csize, usize):
                    raise ThriftError("levels longer than the page")
                compressed = h.get(7, True)
                rest = raw[dl + rl:]
                body = inflate(rest, usize - dl - rl) if compressed else bytes(rest)
                pages.append(Page(
                    DATA_PAGE_V2, _required(h, 1, "num_values"), _required(h, 4, "encoding"), body,
                    def_bytes=bytes(raw[rl:rl + dl]), num_nulls=_required(h, 2, "num_nulls")))
            else:
                raise ThriftError(f"unknown page type {kind}")
    except (ThriftError, IndexError, TypeError, AttributeError) as e:
        raise GlintIOError(f"Parquet column {column!r}: bad page: {e}") from None
    except pa.ArrowException as e:
        raise GlintIOError(f"Parquet column {column!r}: page does not decompress: {e}") from None
    return pages


# ------------------------------------------------------------------ hybrid runs
class _Runs:
    """Runs of values, parsed on the host and expanded on the device. Run r
    gives ``length`` values, the k-th being ``base + step * k + field(bit + k *
    width)``, field(p) the ``width``-bit little-endian field at bit p of the
    data (an RLE run: width 0; a bit-packed run: base 0; a PLAIN page's
    indices: step 1). ``limit`` > 0: every value must be below it (checked on
    the device, for bit-packed runs only: other runs are checked on the host)."""

    def __init__(self):
        self.rows = ([], [], [], [], [], [])    # length, base, step, bit, width, limit
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

    def extend(self, other: "_Runs", bit_shift: int = 0) -> None:
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
        run = torch.repeat_interleave(torch.arange(len(self.rows[0]), device=dev), length,
                                      output_size=self.total)
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
                for j in range(1, (self.max_width + 14) // 8):      # bytes under 7 + width bits
                    word |= data[byte + j].to(torch.int64) << (8 * j)
                mask = torch.bitwise_left_shift(torch.ones_like(w), w) - 1
                out = out + ((word >> (pos & 7)) & mask)
        if self.checked:
            lim = limit[run]
            if bool(((lim > 0) & (out >= lim)).any()):
                raise ValueError("a value is out of range (a dictionary index past the dictionary?)")
        return out


def _parse_hybrid(b, i: int, end: int, width: int, count: int, runs: _Runs, limit: int = 0,
                  offset: int = 0) -> int | None:
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
        if h & 1:                                   # bit-packed: n groups of 8 values
            take = min(n * 8, left)
            need = (take * width + 7) // 8
            if i + need > end:
                raise ValueError("bit-packed run runs past its stream")
            if take:
                runs.add(take, base=offset, bit=i * 8, width=width, limit=limit and offset + limit)
                if width == 1:
                    ones += (int.from_bytes(b[i:i + need], "little") & ((1 << take) - 1)).bit_count()
            i += n * width
        else:                                       # RLE: n copies of one value
            if i + vbytes > end:
                raise ValueError("RLE run runs past its stream")
            v = int.from_bytes(b[i:i + vbytes], "little")
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
    if not 0 <= bit_width <= _MAX_WIDTH:
        raise ValueError(f"bit width {bit_width} (0 to {_MAX_WIDTH})")
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
    if any(int(w) < 0 or int(w) > _MAX_WIDTH for w in meta[2].tolist()):
        raise ValueError(f"bit width outside 0..{_MAX_WIDTH}")
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
    dtype = _DTYPES.get(col.physical_type)
    if dtype is None:
        raise NotSupported(f"Parquet column {name!r}: physical type {col.physical_type} "
                           "(only INT32, INT64, FLOAT and DOUBLE are decoded)")
    if col.max_repetition_level or col.max_definition_level > 1:
        raise NotSupported(f"Parquet column {name!r}: nested column (max repetition level "
                           f"{col.max_repetition_level}, max definition level {col.max_definition_level})")
    return name, dtype, col.max_definition_level


def plan_column_chunk(path: str, rg: int, column: int, metadata: pq.FileMetaData | None = None) -> ChunkPlan:
    """The host's part of decoding column ``column`` (leaf index) of row
    group ``rg``: read, page headers, decompression (see ChunkPlan)."""
    meta = metadata if metadata is not None else pq.read_metadata(path)
    name, dtype, max_def = _check_column(meta, column)
    cc = meta.row_group(rg).column(column)
    codec = _FROM_PYARROW.get(cc.compression, cc.compression)
    if codec == "UNKNOWN":
        codec = "UNKNOWN (Hadoop-framed LZ4 or another codec pyarrow does not name)"
    plan = plan_pages(parse_pages(read_chunk_bytes(path, cc, reuse=True), codec, column=name), dtype, max_def, name)
    if plan.rows != cc.num_values:
        raise GlintIOError(f"Parquet column {name!r}: pages hold {plan.rows} values, "
                           f"the column chunk {cc.num_values}")
    return plan


def decode_column_chunk(path: str, rg: int, column: int, device="cpu",
                        metadata: pq.FileMetaData | None = None,
                        use_triton: bool | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
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
    hyb = []                    # hybrid streams (levels, indices): positions count from the first
    hyb_len = 0
    vals = []                   # dictionary entries, then the values of PLAIN pages
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
                    raise NotSupported(f"Parquet column {column!r}: dictionary page encoding "
                                       f"{_encoding_name(p.encoding)}")
                if p.num_values < 0 or len(p.body) < p.num_values * size:
                    raise ValueError("dictionary page shorter than its entries")
                vals.append(memoryview(p.body)[:p.num_values * size])
                vals_bytes += p.num_values * size
                dict_n = p.num_values
                continue
            n = p.num_values
            body = memoryview(p.body)
            k = n                                           # stored (non-NULL) values
            if max_def:
                if p.kind == DATA_PAGE:
                    if p.def_encoding != RLE:
                        raise NotSupported(f"Parquet column {column!r}: definition level encoding "
                                           f"{_encoding_name(p.def_encoding)}")
                    if len(body) < 4:
                        raise ValueError("page too short for its definition levels")
                    ln = int.from_bytes(body[:4], "little")
                    if 4 + ln > len(body):
                        raise ValueError("definition levels longer than the page")
                    lv = body[4:4 + ln]
                    body = body[4 + ln:]
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
                streams.append((None, vals_bytes // size, 0, k))     # indices first, first + 1, ...
                vals.append(body[:k * size])
                vals_bytes += k * size
            elif p.encoding in (PLAIN_DICTIONARY, RLE_DICTIONARY):
                if dict_n is None:
                    raise ValueError("a dictionary-encoded page without a dictionary page")
                if k:
                    if not len(body) or body[0] > _MAX_WIDTH:
                        raise ValueError("bad dictionary index bit width")
                    hyb.append(body[1:])
                    streams.append((hyb_len, hyb_len + len(body) - 1, body[0], k))
                    hyb_len += len(body) - 1
            else:
                raise NotSupported(f"Parquet column {column!r}: value encoding {_encoding_name(p.encoding)}")
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
            if st is None:          # PLAIN
                rows.append((0, 0, -1, k, o, vb + end, 0))
            else:
                rows.append((h + st, h + end, width, k, o, vb, p.dict_n))
            o += k
        out += p.stored
    table = torch.tensor(rows, dtype=torch.int64).reshape(-1, 7)
    return PlanLayout(at + 8, vals_at, segments, table, hyb_at, vals_base, out_at,
                      sum(p.rows for p in plans), out)


def fill_layout(layout: PlanLayout) -> torch.Tensor:
    """The layout's buffer on the host (uint8)."""
    buf = bytearray(layout.total)
    mv = memoryview(buf)
    for at, seg in layout.segments:
        if isinstance(seg, FileRange):
            seg.read_into(mv[at:at + len(seg)])
        else:
            mv[at:at + len(seg)] = seg
    return torch.frombuffer(buf, dtype=torch.uint8) if layout.total else torch.zeros(0, dtype=torch.uint8)


def _on_device(items, make_layout, layout, data, device, use_triton, what: str):
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


def decode_plans(plans: list[ChunkPlan], device="cpu", use_triton: bool | None = None,
                 data: torch.Tensor | None = None, layout: PlanLayout | None = None, column: str = "?",
                 valid_when_no_nulls: bool = True):
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
    dtype, layout, data, use_triton = _on_device(plans, layout_plans, layout, data, device, use_triton, "plans")
    device = data.device
    source = data[layout.vals_at:layout.total - 8].view(dtype) if layout.total else \
        torch.zeros(0, dtype=dtype, device=device)
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
                local = _Runs()                 # bit offsets into p.hyb, then into the buffer
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
        raise GlintIOError(f"Parquet column {column!r}: bad page data: a dictionary index past the "
                           "dictionary, or an index stream shorter than its page")


# ------------------------------------------------------------------ column chunks as stored
# what the GPU walks from the bytes as stored (glint.kernels.parquet_raw):
# codecs, and the encodings a chunk's metadata may list (RLE / BIT_PACKED:
# levels, which a column without definition levels has none of)
RAW_CODECS = {"UNCOMPRESSED": 0, "SNAPPY": 1}
_RAW_CODEC_NAMES = {0: "UNCOMPRESSED", 1: "SNAPPY"}
RAW_ENCODINGS = frozenset(("PLAIN", "PLAIN_DICTIONARY", "RLE_DICTIONARY", "RLE", "BIT_PACKED"))


class FileRange:
    """Bytes of a file not read yet: ``size`` bytes from ``start``. The
    scan's staging reads them straight into its pinned buffers
    (glint.io.transfer: no host copy in between); :meth:`read` reads
    them into host memory (the reference path, the tests). (A plain class
    with slots: a cold scan makes one per row group and column, under the
    GIL, and a frozen dataclass's constructor cost several times more.)"""
    __slots__ = ("path", "start", "size")

    def __init__(self, path: str, start: int, size: int):
        self.path, self.start, self.size = path, start, size

    def __repr__(self) -> str:
        return f"FileRange({self.path!r}, {self.start}, {self.size})"

    def __eq__(self, other) -> bool:
        return isinstance(other, FileRange) and (self.path, self.start, self.size) == \
            (other.path, other.start, other.size)

    __hash__ = None

    def __len__(self) -> int:
        return self.size

    def read(self) -> bytes:
        return read_bytes(self.path, self.start, self.size)

    def read_into(self, out, at: int = 0, files: "FileHandles | None" = None) -> None:
        """Bytes [at, at + len(out)) of the range into ``out`` (a writable
        contiguous buffer: a numpy view of a pinned buffer)."""
        read_file_into(self.path, self.start + at, out, files)


def read_file_into(path: str, start: int, out, files: "FileHandles | None" = None) -> None:
    """``len(out)`` bytes of a file from ``start`` into the writable buffer
    ``out`` (``preadv``: the GIL is released while the kernel copies); or,
    ``out`` a list of such buffers, into them one after the other (one
    system call); errors name the file."""
    try:
        bufs = [_byte_view(b) for b in out] if isinstance(out, list) else [_byte_view(out)]
        _preadv(path, start, bufs, files)
    except FileNotFoundError:
        raise GlintIOError(f"No such file: {path!r} (it was there when the table was registered)") from None


def _byte_view(b) -> memoryview:
    """A writable buffer as a memoryview of bytes (no new view when it is one)."""
    if type(b) is memoryview and b.format == "B":
        return b
    return memoryview(b).cast("B")


def _pread_into(path: str, start: int, mv: memoryview, files: "FileHandles | None" = None) -> None:
    """Fills ``mv`` with the file's bytes from ``start`` (``preadv`` until
    done; ``files``: through its open file, else opened for this read); a
    file shorter than that is a GlintIOError naming it."""
    _preadv(path, start, [mv], files)


def _preadv(path: str, start: int, bufs: list, files: "FileHandles | None" = None) -> None:
    """Fills the buffers (memoryviews of bytes), one after the other, with
    the file's bytes from ``start``: one ``preadv`` for them all (more when
    the kernel returns less)."""
    n = sum(len(b) for b in bufs)
    if files is None:
        fd = os.open(path, os.O_RDONLY)
        try:
            got = _preadv_fd(fd, start, bufs, n)
        finally:
            os.close(fd)
    else:
        fd, token = files.acquire(path)
        try:
            got = _preadv_fd(fd, start, bufs, n)
        finally:
            files.release(fd, token)
    if got != n:
        raise GlintIOError(f"{path}: the bytes at {start}..{start + n} run past the end of the file "
                           "(it changed after it was registered)")


_IOV_MAX = 1024


def _preadv_fd(fd: int, start: int, bufs: list, n: int) -> int:
    got = 0
    while got < n:
        k = os.preadv(fd, bufs[:_IOV_MAX], start + got)
        if not k:
            break
        got += k
        while bufs and k >= len(bufs[0]):           # the buffers filled
            k -= len(bufs[0])
            bufs = bufs[1:]
        if k:
            bufs = [bufs[0][k:]] + bufs[1:]
    return got


class FileHandles:
    """Files kept open for the reads of one scan (its staging's preads,
    its dictionary pages): a read costs one system call, not three (open,
    pread, close). Each system call gives up the GIL, and taking it back
    waits for the thread that holds it, up to the interpreter's switch
    interval (5 ms) when that thread runs Python: with the decoding threads
    busy, the staging of TPC-H Q1 at SF 100 (2,000 column chunks a scan
    chunk) moved 0.33 GB/s a thread (bench/results/streaming-12).
    :meth:`close` closes them once no read is using them (a read after it
    opens its own)."""

    def __init__(self):
        self._fds: dict[str, int] = {}
        self._active: set = set()           # the reads using an fd now (a token each)
        self._tokens = itertools.count()
        self._closed = False
        self._lock = threading.Lock()       # (opening a file, closing them all)

    @contextlib.contextmanager
    def fd(self, path: str):
        fd, token = self.acquire(path)
        try:
            yield fd
        finally:
            self.release(fd, token)

    def acquire(self, path: str) -> tuple[int, object]:
        """(an open fd of the file, a token for release()): the scan's, or a
        fresh one of this read's own once the handles are closed."""
        # No lock on the way of a read (a dozen staging and decoding threads
        # read through one scan's handles; a lock whose holder lost the GIL
        # inside it held them all up): the token goes into the set before
        # ``_closed`` is read, and close() sets ``_closed`` before it looks
        # at the set, so a read that sees the handles open is seen by close()
        # (set.add / discard and next() on a count are single steps under the GIL).
        token = next(self._tokens)
        self._active.add(token)
        try:
            if not self._closed:
                fd = self._fds.get(path)
                if fd is None:
                    with self._lock:
                        fd = self._fds.get(path)
                        if fd is None:
                            fd = self._fds[path] = os.open(path, os.O_RDONLY)
                return fd, token
        except BaseException:
            self._done(token)
            raise
        self._done(token)
        return os.open(path, os.O_RDONLY), None

    def release(self, fd: int, token) -> None:
        if token is None:
            os.close(fd)
        else:
            self._done(token)

    def _done(self, token) -> None:
        self._active.discard(token)
        if self._closed and not self._active:
            self._close_all()

    def close(self) -> None:
        self._closed = True
        if not self._active:
            self._close_all()

    def __del__(self):          # a scan dropped without closing: its files are not left open
        try:
            self.close()
        except Exception:       # noqa: BLE001 - interpreter shutdown
            pass

    def _close_all(self) -> None:
        with self._lock:
            fds, self._fds = list(self._fds.values()), {}
        for fd in fds:
            os.close(fd)


@dataclass
class RawChunk:
    """A column chunk's bytes as stored (page headers, compressed bodies),
    which :func:`decode_raw` decodes (on CUDA: headers, decompression and
    values all on the GPU). ``rows``: its values; ``usize``: the metadata's
    total_uncompressed_size (a bound of its bodies decompressed);
    ``where``: the file and row group, for errors. ``source``: the bytes,
    or a :class:`FileRange` where they are still in the file (the scan's
    chunks: read straight into the pinned buffers they are copied up from)."""
    dtype: torch.dtype
    rows: int
    codec: int
    usize: int
    source: object
    where: str = ""
    # the first dict_span bytes of source are a dictionary page (0: none)
    dict_span: int = 0
    # the dictionary page's values, decompressed on the host (with_host_dictionary):
    # source then holds only the data pages
    dictionary: object = None
    dict_n: int = 0
    # a string column's chunk (BYTE_ARRAY, every data page dictionary-encoded):
    # its values are the codes of its dictionary's strings; ``strings``: the
    # dictionary page's entries once read (with_strings), and ``dictionary``
    # then the int32 codes they map to in the scan chunk's own dictionary
    # (string_codes), which the decoder gathers the indices through
    codes: bool = False
    strings: list | None = None

    @property
    def nbytes(self) -> int:
        """Bytes copied to the device for this chunk."""
        return len(self.source) + (0 if self.dictionary is None else len(self.dictionary))

    def _dictionary_page(self, files: "FileHandles | None" = None):
        """(the dictionary page parsed and decompressed on the host, the
        chunk's data pages as they are stored: bytes or a FileRange)."""
        head, rest = self._dictionary_bytes(files)
        return self._parse_dictionary(head), rest

    def _dictionary_bytes(self, files: "FileHandles | None" = None):
        """(the dictionary page as stored, the data pages: bytes or a FileRange)."""
        src = self.source
        if isinstance(src, FileRange):
            head = read_bytes(src.path, src.start, self.dict_span, reuse=True, files=files)
            rest = FileRange(src.path, src.start + self.dict_span, src.size - self.dict_span)
        else:
            head, rest = src[:self.dict_span], src[self.dict_span:]
        return head, rest

    def _parse_dictionary(self, head) -> Page:
        return _dictionary_page(head, _RAW_CODEC_NAMES[self.codec], self.where)

    def with_strings(self, files: "FileHandles | None" = None, seen: dict | None = None) -> "RawChunk":
        """A string column's chunk (``codes``) with its dictionary page's
        entries read here (``strings``: a list of bytes, a few per chunk of
        the low-cardinality columns routed here) and its data pages left as
        stored: the GPU decodes only their indices (see string_codes).
        ``seen``: dictionary pages already parsed, by their bytes as stored
        (row groups of a low-cardinality column often store the same page)."""
        if not self.codes or self.strings is not None:
            return self
        if not self.dict_span:
            where = f"Cannot read {self.where}: " if self.where else ""
            raise GlintIOError(f"{where}a string column chunk without a dictionary page")
        head, rest = self._dictionary_bytes(files)
        key = bytes(head) if seen is not None else None
        strings = None if key is None else seen.get(key)
        if strings is None:
            strings = _dictionary_strings(head, _RAW_CODEC_NAMES[self.codec], self.where)
            if key is not None:
                seen[key] = strings
        return RawChunk(self.dtype, self.rows, self.codec, self.usize, rest, self.where, 0, None, len(strings),
                        True, strings)

    def with_host_dictionary(self) -> "RawChunk":
        """The chunk with its dictionary page decompressed here (pa.Codec)
        and its data pages left as stored. Snappy decodes on the GPU one
        element at a time, and a dictionary of ~100,000 int64 values
        (TPC-H's prices and keys: five zero bytes each, a copy element per
        value) took one GPU program 60-70 ms: the long pole of every chunk's
        decoding. One host thread does such a page in 2-3 ms (0.33 GB/s out
        on the device's hosts), more while other threads run Python: the
        call waits for the GIL on its way in and out (bench/results/streaming-10).
        The page is read into the thread's own buffer and its values are
        copied out of pa.Codec's result into a RAW_BUFFERS buffer (given
        back by release()), so that pa.Codec's memory is freed at once and
        reused, not page-faulted in fresh for every chunk."""
        if not self.dict_span or self.dictionary is not None or self.codes:
            return self
        page, rest = self._dictionary_page()
        body, entries = page.body, page.num_values
        n = len(body)
        kept = RAW_BUFFERS.get(n)
        np.frombuffer(kept, dtype=np.uint8, count=n)[:] = np.frombuffer(body, dtype=np.uint8)
        del page, body
        return RawChunk(self.dtype, self.rows, self.codec, self.usize, rest, self.where, 0,
                        memoryview(kept)[:n], entries)

    @property
    def buf(self):
        """The bytes (read from the file if they are still there)."""
        if isinstance(self.source, FileRange):
            self.source = self.source.read()
        return self.source

    def pages_cap(self) -> int:
        """How many pages the device's page tables hold for this chunk
        without counting them first: RAW_PAGES, or more for a large chunk
        (writers cut pages at about 1 MiB or 20,000 values; a chunk with
        more pages than this is decoded again, exactly: see decode_raw)."""
        return max(RAW_PAGES, _pages_cap(self.rows, self.usize))

    def release(self) -> None:
        """Give the bytes' buffer back to RAW_BUFFERS (the chunk is not read
        again: its bytes are on the device)."""
        bufs = (self.source, self.dictionary)
        self.source, self.dictionary = b"", None
        for buf in bufs:
            if isinstance(buf, memoryview) and isinstance(buf.obj, bytearray):
                obj = buf.obj
                buf.release()
                RAW_BUFFERS.put(obj)


def _pages_cap(rows, usize):
    """RawChunk.pages_cap before its floor of RAW_PAGES (ints or numpy arrays)."""
    return rows // 5000 + usize // 65536 + 8


def raw_readable(meta: pq.FileMetaData, rg: int, column: int) -> bool:
    """Whether the GPU can decode this column chunk from its bytes as stored:
    a flat column without definition levels (max definition level 0: NULLs
    cannot occur), snappy or uncompressed; INT32 / INT64 / FLOAT / DOUBLE
    with PLAIN or dictionary-encoded pages, or BYTE_ARRAY (strings, as
    codes) with a dictionary page (by the chunk's metadata: a string chunk's
    PLAIN data pages, which the metadata cannot rule out, are found by the
    GPU's page walk and flagged)."""
    dtype, codes = _raw_kind(meta, column)
    return dtype is not None and _raw_entry(meta.row_group(rg).column(column), dtype, codes) is not None


def _raw_kind(meta: pq.FileMetaData, column: int):
    """(the torch dtype a column the GPU may decode as stored is decoded to,
    whether that is a string column's codes), or (None, False)."""
    col = meta.schema.column(column)
    if col.max_repetition_level or col.max_definition_level:
        return None, False
    if col.physical_type == "BYTE_ARRAY":
        return torch.int32, True
    return _DTYPES.get(col.physical_type), False


def _raw_entry(cc, dtype, codes: bool = False) -> tuple | None:
    """What read_raw needs of a column chunk (pyarrow's ColumnChunkMetaData),
    or None when its codec or encodings are not the GPU's (or, of a string
    column, when it has no dictionary page). (Each of pyarrow's properties
    costs ~0.4 us and ``encodings`` 1 us, under the GIL, for every row group
    and column a cold scan reads: each is asked once.)"""
    codec = RAW_CODECS.get(cc.compression)
    if codec is None:
        return None
    enc = cc.encodings
    ok = _ENCODINGS_OK.get(enc)
    if ok is None:
        ok = _ENCODINGS_OK[enc] = set(enc) <= RAW_ENCODINGS
    if not ok:
        return None
    data_at = cc.data_page_offset
    has_dict = cc.has_dictionary_page
    dict_at = cc.dictionary_page_offset if has_dict else None
    start = dict_at if dict_at else data_at                 # (_chunk_start)
    size = cc.total_compressed_size
    dict_span = max(0, data_at - start)
    if codes and not (has_dict and 0 < dict_span <= min(STRING_DICTIONARY_BYTES, size - 1)):
        return None
    return (dtype, start, size, cc.num_values, codec, cc.total_uncompressed_size, dict_span, codes)


_ENCODINGS_OK: dict = {}                # a chunk's encodings (pyarrow's tuple) -> all of them RAW_ENCODINGS


# a string column chunk is decoded as codes only when its dictionary page
# (as stored) is at most this big: its strings are read, and mapped into the
# scan chunk's dictionary, by Python on the host (a few to a few hundred per
# row group in TPC-H's columns routed here; a column of 100,000 clerks is not)
STRING_DICTIONARY_BYTES = 64 << 10


def plain_strings(body, n: int) -> list[bytes]:
    """The ``n`` entries of a PLAIN BYTE_ARRAY stream (each a 4-byte
    little-endian length, then its bytes): a dictionary page's strings.
    ValueError when the bytes do not hold them.

    >>> plain_strings(b"\\x01\\x00\\x00\\x00A\\x02\\x00\\x00\\x00BC", 2)
    [b'A', b'BC']
    """
    mv = memoryview(body)
    out, i, end = [], 0, len(mv)
    for _ in range(n):
        if i + 4 > end:
            raise ValueError(f"{n} strings say the page, its bytes end after {len(out)}")
        k = int.from_bytes(mv[i:i + 4], "little")
        i += 4
        if i + k > end:
            raise ValueError(f"string {len(out)} of {k} bytes runs past the page")
        out.append(bytes(mv[i:i + k]))
        i += k
    return out


def string_codes(chunks: list[RawChunk]):
    """A scan chunk's dictionary for string column chunks read with_strings:
    (the strings of all of them, each once, sorted by bytes (so that codes
    compare as the strings do), as a host Dictionary; the chunks, each with
    ``dictionary`` the int32 code of each of its entries in it). A chunk
    shared by two scan chunks gets its codes twice, one copy each."""
    ordered = sorted({s for c in chunks for s in c.strings})
    code = {s: i for i, s in enumerate(ordered)}
    out = []
    for c in chunks:
        remap = np.fromiter((code[s] for s in c.strings), dtype=np.int32, count=len(c.strings)).tobytes()
        out.append(RawChunk(c.dtype, c.rows, c.codec, c.usize, c.source, c.where, 0, remap, len(c.strings),
                            True, c.strings))
    return _sorted_dictionary(ordered), out


def _sorted_dictionary(ordered: list):
    """A host Dictionary of sorted distinct strings (bytes)."""
    from glint.columnar.column import Dictionary
    lengths = np.fromiter((len(s) for s in ordered), dtype=np.int64, count=len(ordered))
    offsets = np.zeros(len(ordered) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    data = np.frombuffer(b"".join(ordered), dtype=np.uint8).copy()
    return Dictionary(torch.from_numpy(offsets), torch.from_numpy(data), sorted_unique=True)


def _dictionary_page(head, codec: str, where: str = "") -> Page:
    """A column chunk's dictionary page as stored (``head``: its header and
    body) parsed and decompressed; errors name ``where``."""
    prefix = f"Cannot read {where}: " if where else ""
    try:
        pages = parse_pages(head, codec)
    except GlintIOError as e:
        raise GlintIOError(f"{prefix}{e}") from None
    if len(pages) != 1 or pages[0].kind != DICTIONARY_PAGE or pages[0].encoding not in (PLAIN, PLAIN_DICTIONARY):
        raise GlintIOError(f"{prefix}the column chunk's dictionary page is not one PLAIN dictionary page")
    return pages[0]


def _dictionary_strings(head, codec: str, where: str = "") -> list[bytes]:
    """The strings of a string column chunk's dictionary page as stored."""
    page = _dictionary_page(head, codec, where)
    try:
        return plain_strings(page.body, page.num_values)
    except ValueError as e:
        raise GlintIOError(f"Cannot read {where}: bad dictionary page: {e}" if where else
                           f"bad dictionary page: {e}") from None


def read_raw_chunk(path: str, rg: int, column: int, metadata: pq.FileMetaData | None = None,
                   where: str = "") -> RawChunk | None:
    """Column ``column`` (leaf index) of row group ``rg`` as stored (one
    ``pread``), or None when :func:`raw_readable` says no."""
    meta = metadata if metadata is not None else pq.read_metadata(path)
    dtype, codes = _raw_kind(meta, column)
    entry = None if dtype is None else _raw_entry(meta.row_group(rg).column(column), dtype, codes)
    return None if entry is None else read_raw(path, entry, where)


class RawIndex(Sequence):
    """For each row group of a file, what :func:`read_raw` needs to read one
    column as stored (a :func:`_raw_entry` tuple), or None where the GPU
    cannot. Entries are made on first use, RAW_INDEX_BLOCK row groups at a
    time: pyarrow's metadata objects cost a few microseconds an access, under
    the GIL, so the whole file's (TPC-H SF 100's lineitem: 5,232 row groups,
    ~0.15 s for Q1's seven columns) was on the critical path of a cold scan's
    first chunk; now that chunk waits for its own row groups' only. The same
    entries are kept as numpy arrays too (:meth:`arrays`: a scan chunk's
    hundreds of row groups as one :class:`RawSet`)."""

    __slots__ = ("_meta", "_column", "dtype", "codes", "_entries", "_done", "_ok", "_fields")

    def __init__(self, meta: pq.FileMetaData, column: int, dtype, codes: bool):
        self._meta, self._column, self.dtype, self.codes = meta, column, dtype, codes
        n = meta.num_row_groups
        self._entries: list = [None] * n
        self._done = bytearray(-(-n // RAW_INDEX_BLOCK))
        self._ok = np.zeros(n, dtype=bool)
        # start, size, rows, codec, usize, dict_span of each row group's entry
        self._fields = np.zeros((6, n), dtype=np.int64)

    def __len__(self) -> int:
        return len(self._entries)

    def _block(self, b: int) -> None:
        # (two threads may make a block at once: the same entries)
        lo, hi = b * RAW_INDEX_BLOCK, min(len(self._entries), (b + 1) * RAW_INDEX_BLOCK)
        meta, col, dt, codes = self._meta, self._column, self.dtype, self.codes
        got = [_raw_entry(meta.row_group(i).column(col), dt, codes) for i in range(lo, hi)]
        zeros = (0,) * 6
        self._fields[:, lo:hi] = np.array([e[1:7] if e is not None else zeros for e in got],
                                          dtype=np.int64).reshape(hi - lo, 6).T
        self._ok[lo:hi] = [e is not None for e in got]
        self._entries[lo:hi] = got
        self._done[b] = 1

    def __getitem__(self, g):
        if isinstance(g, slice):
            return [self[i] for i in range(*g.indices(len(self)))]
        if g < 0:
            g += len(self._entries)
        b = g // RAW_INDEX_BLOCK
        if not self._done[b]:
            self._block(b)
        return self._entries[g]

    def arrays(self, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(whether each of these row groups has an entry, their entries'
        fields: start, size, rows, codec, usize, dict_span, one row each)."""
        done = self._done
        for b in np.unique(groups // RAW_INDEX_BLOCK).tolist():
            if not done[b]:
                self._block(b)
        return self._ok[groups], self._fields[:, groups]


RAW_INDEX_BLOCK = env_int("GLINT_RAW_INDEX_BLOCK", 64, 1)           # (env: experiments)


def raw_index(meta: pq.FileMetaData, column: int) -> RawIndex | None:
    """A file's :class:`RawIndex` for column ``column`` (leaf index), or
    None for a column the GPU never decodes as stored (its type). Made once
    per file and column by the table's source."""
    dtype, codes = _raw_kind(meta, column)
    if dtype is None:
        return None
    return RawIndex(meta, column, dtype, codes)


def read_raw(path: str, entry: tuple, where: str = "", lazy: bool = False) -> RawChunk:
    """A column chunk as stored, from its raw_index entry (``lazy``: its
    bytes left in the file, a :class:`FileRange`)."""
    dtype, start, size, rows, codec, usize, dict_span, codes = entry
    src = FileRange(path, start, size) if lazy else read_bytes(path, start, size, reuse=None)
    return RawChunk(dtype, rows, codec, usize, src, where, dict_span if dict_span < size else 0, codes=codes)


class RawSet:
    """A scan chunk's column chunks of one column (one dtype), all with their
    bytes still in their files: numpy arrays, one entry per chunk, where a
    list of :class:`RawChunk` costs a Python object (and a dozen more Python
    steps on the scan's threads, under the GIL) per row group and column:
    TPC-H Q1 at SF 100 has 36,000. The layout (:func:`layout_raw_together`),
    the staging (:class:`FileRuns`) and the page walk's chunk table
    (:func:`_chunk_table`) take it whole. It is also a sequence of RawChunk,
    made on demand (the exact re-decode, the CPU's reference decoder,
    errors).

    A string column's (``codes``) goes through :meth:`with_strings` (each
    chunk's dictionary page read on the host: ``pages``, the distinct pages'
    strings, and ``page_of``, each chunk's page; the ranges then cover the
    data pages only) and :meth:`with_codes` (the scan chunk's dictionary, and
    ``remap``: each distinct page's int32 codes in it, at ``remap_at``)."""

    __slots__ = ("dtype", "paths", "file", "start", "size", "rows", "codec", "usize", "dict_span", "where",
                 "groups", "codes", "pages", "page_of", "remap", "remap_at")

    def __init__(self, dtype, paths: list, file, start, size, rows, codec, usize, dict_span, where: list, groups,
                 codes: bool = False):
        self.dtype, self.paths, self.file, self.where, self.groups = dtype, paths, file, where, groups
        self.start, self.size, self.rows, self.codec, self.usize, self.dict_span = \
            start, size, rows, codec, usize, dict_span
        self.codes = codes
        self.pages = self.page_of = self.remap = self.remap_at = None

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        f, size, span = int(self.file[i]), int(self.size[i]), int(self.dict_span[i])
        src = FileRange(self.paths[f], int(self.start[i]), size)
        where = f"{self.where[f]}{int(self.groups[i])}"
        if self.page_of is None:
            return RawChunk(self.dtype, int(self.rows[i]), int(self.codec[i]), int(self.usize[i]), src, where,
                            span if span < size else 0, codes=self.codes)
        k = int(self.page_of[i])
        strings = self.pages[k]
        remap = None
        if self.remap is not None:
            at = int(self.remap_at[k])
            remap = self.remap[at:at + 4 * len(strings)]
        return RawChunk(self.dtype, int(self.rows[i]), int(self.codec[i]), int(self.usize[i]), src, where, 0,
                        remap, len(strings), True, strings)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def nbytes(self) -> int:
        return int(self.size.sum())

    def _like(self, start, size, dict_span) -> "RawSet":
        out = RawSet(self.dtype, self.paths, self.file, start, size, self.rows, self.codec, self.usize, dict_span,
                     self.where, self.groups, self.codes)
        out.pages, out.page_of, out.remap, out.remap_at = self.pages, self.page_of, self.remap, self.remap_at
        return out

    def with_strings(self, files: "FileHandles | None" = None, seen: dict | None = None) -> "RawSet":
        """A string column's set with each chunk's dictionary page read here
        (RawChunk.with_strings, one small read per chunk: ``seen``, pages
        already parsed by their bytes as stored, and the set's own distinct
        pages are parsed once) and its ranges cut to the data pages."""
        if not self.codes or self.page_of is not None:
            return self
        pages: list = []
        index: dict = {}
        page_of = np.empty(len(self), dtype=np.int64)
        paths, where, codec_names = self.paths, self.where, _RAW_CODEC_NAMES
        for i, (f, s, span, size, codec) in enumerate(zip(self.file.tolist(), self.start.tolist(),
                                                          self.dict_span.tolist(), self.size.tolist(),
                                                          self.codec.tolist())):
            if not 0 < span < size:
                raise GlintIOError(f"Cannot read {where[f]}{int(self.groups[i])}: a string column chunk without "
                                   "a dictionary page")
            key = bytes(read_bytes(paths[f], s, span, reuse=True, files=files))
            k = index.get(key)
            if k is None:
                strings = None if seen is None else seen.get(key)
                if strings is None:
                    strings = _dictionary_strings(key, codec_names[codec], f"{where[f]}{int(self.groups[i])}")
                    if seen is not None:
                        seen[key] = strings
                k = index[key] = len(pages)
                pages.append(strings)
            page_of[i] = k
        out = self._like(self.start + self.dict_span, self.size - self.dict_span, np.zeros_like(self.dict_span))
        out.pages, out.page_of = pages, page_of
        return out

    def with_codes(self):
        """(the scan chunk's dictionary: the strings of all its chunks' pages,
        each once, sorted, as a host Dictionary; the set with ``remap``, each
        distinct page's entries' int32 codes in it) (string_codes' way, once
        per distinct page, not per chunk)."""
        ordered = sorted({s for p in self.pages for s in p})
        code = {s: i for i, s in enumerate(ordered)}
        lengths = np.array([len(p) for p in self.pages], dtype=np.int64)
        out = self._like(self.start, self.size, self.dict_span)
        out.remap_at = np.zeros(len(lengths), dtype=np.int64)
        np.cumsum(4 * lengths[:-1], out=out.remap_at[1:])
        out.remap = np.fromiter((code[s] for p in self.pages for s in p), dtype=np.int32,
                                count=int(lengths.sum())).tobytes()
        return _sorted_dictionary(ordered), out


class FileRuns:
    """Byte ranges of files (``paths[file[i]]`` from ``start[i]``,
    ``length[i]`` bytes) at offsets ``off[i]`` of a buffer of ``size``
    bytes (what lies between them is left as it was). The staging reads a
    window of it at a time (:meth:`read_into`: one ``pread`` per range in the
    window), where a write per column chunk cost Python per row group and
    column under the GIL."""

    __slots__ = ("paths", "file", "start", "off", "length", "size", "_ends")

    def __init__(self, paths: list, file, start, off, length, size: int):
        self.paths, self.file, self.start, self.off, self.length, self.size = \
            paths, file, start, off, length, size
        self._ends = off + length

    def __len__(self) -> int:
        return self.size

    def read_into(self, out, at: int = 0, files: "FileHandles | None" = None) -> None:
        """Bytes [at, at + len(out)) of the buffer into ``out`` (the ranges'
        bytes there; the rest of ``out`` is left as it was)."""
        mv = _byte_view(out)
        lo, hi = at, at + len(mv)
        i0 = int(np.searchsorted(self._ends, lo, side="right"))
        i1 = int(np.searchsorted(self.off, hi, side="left"))
        if i1 <= i0:
            return
        paths = self.paths
        for f, s, a, e in zip(self.file[i0:i1].tolist(), self.start[i0:i1].tolist(),
                              self.off[i0:i1].tolist(), self._ends[i0:i1].tolist()):
            a0, e0 = max(a, lo), min(e, hi)
            if e0 > a0:
                read_file_into(paths[f], s + a0 - a, mv[a0 - lo:e0 - lo], files)

    def read(self) -> bytes:
        out = bytearray(self.size)
        self.read_into(memoryview(out))
        return bytes(out)


# file bytes between two ranges a scan chunk reads (its columns of one row
# group, or the next row group's) up to which they are read in one run, the
# bytes between staged and copied up with them (a gap costs a system call and
# a range; its bytes, PCIe bandwidth and device memory)
RUN_GAP = env_int("GLINT_RUN_GAP", 256 << 10, 0)


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


def layout_raw_together(columns: dict, gap: int | None = None) -> tuple[dict, int, list]:
    """One buffer for several columns' raw chunks ({column: [RawChunk] or a
    RawSet}, a chunk per fragment): (a RawLayout per column, its offsets
    into the whole buffer and ``total`` the whole buffer's; the buffer's
    size; its (offset, bytes or FileRuns) segments). The bytes held in host
    memory (dictionaries) come first, then the bytes still in the files, as
    they lie there: the chunks' ranges, sorted, are cut into runs where more
    than ``gap`` (RUN_GAP) bytes lie between two, and each run is laid out
    whole, the bytes between its chunks too (a row group's columns lie one
    after the other in its file, so the staging reads the columns of a row
    group that a query asks for, and often the next row group's, with one
    system call: one FileRuns segment, see glint.io.transfer). Built
    with numpy for RawSets: no Python per row group and column."""
    gap = RUN_GAP if gap is None else gap
    o, segments = 0, []
    at: dict = {}
    dict_at: dict = {}
    paths: dict = {}                        # path -> its index in the runs
    parts = []                              # (column, chunk positions, file index, start, size)
    for c, chunks in columns.items():
        n = len(chunks)
        a = at[c] = np.zeros(n, dtype=np.int64)
        d = dict_at[c] = np.full(n, -1, dtype=np.int64)
        if type(chunks) is RawSet:
            if chunks.remap is not None:            # a string column's codes of its distinct pages, one segment
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
            parts.append((c, np.array(pos, dtype=np.int64), np.array(fi, dtype=np.int64),
                          np.array(st, dtype=np.int64), np.array(sz, dtype=np.int64)))
    if parts:
        fi = np.concatenate([p[2] for p in parts])
        st = np.concatenate([p[3] for p in parts])
        sz = np.concatenate([p[4] for p in parts])
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
        placed = np.empty(len(k), dtype=np.int64)
        placed[order] = o + r_off[run] + k - r_start[run]
        i = 0
        for c, pos, _, _, size in parts:
            at[c][pos] = placed[i:i + len(pos)]
            i += len(pos)
        r_file = r_start // width
        segments.append((o, FileRuns(list(paths), r_file, r_start - r_file * width, r_off, r_len,
                                     int(padded.sum()))))
        o += int(padded.sum())
    total = o + 8
    return {c: RawLayout(total, at[c].tolist(), [], dict_at[c].tolist()) for c in columns}, total, segments


def _raw_reference(chunks: list[RawChunk], device, column: str) -> torch.Tensor:
    """decode_raw on the host: headers parsed and bodies decompressed by
    parse_pages (``pa.Codec``), values by decode_plans' torch path."""
    plans = []
    for c in chunks:
        try:
            pages = parse_pages(c.buf, _RAW_CODEC_NAMES[c.codec], column)
            if c.dictionary is not None:
                pages.insert(0, Page(DICTIONARY_PAGE, c.dict_n, PLAIN, bytes(c.dictionary)))
            if c.codes and any(p.kind != DICTIONARY_PAGE and p.encoding == PLAIN for p in pages):
                raise GlintIOError(f"Parquet column {column!r}: a PLAIN data page in a string column chunk "
                                   "decoded as dictionary codes")
            plan = plan_pages(pages, c.dtype, 0, column)
            if plan.rows != c.rows:
                raise GlintIOError(f"Parquet column {column!r}: pages hold {plan.rows} values, "
                                   f"the column chunk {c.rows}")
        except GlintIOError as e:
            raise GlintIOError(f"Cannot read {c.where}: {e}" if c.where else str(e)) from None
        plans.append(plan)
    values, _, _ = decode_plans(plans, device, use_triton=False, column=column)
    return values


RAW_PAGES = 64      # pages per column chunk the device's tables hold without counting them first


def decode_raw(chunks: list[RawChunk], device="cpu", data: torch.Tensor | None = None,
               layout: RawLayout | None = None, use_triton: bool | None = None, column: str = "?",
               exact: bool = True):
    """The values of several raw column chunks (one dtype) one after the
    other: (values, err). ``data``: the layout's buffer already on the
    device, else copied from pageable memory.

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
    dtype, layout, data, use_triton = _on_device(chunks, layout_raw, layout, data, device, use_triton, "chunks")
    device = data.device
    if not use_triton:
        return _raw_reference(chunks, device, column), None
    if not exact:
        (values,), err = decode_raw_many([(chunks, layout, 0)], data)
        return values, err
    from glint.kernels import parquet_raw as K
    from glint.kernels.hybrid import decode_pages_triton
    item = dtype.itemsize
    rows = [c.rows for c in chunks]
    out_at = [0] * len(chunks)
    for i in range(1, len(chunks)):
        out_at[i] = out_at[i - 1] + rows[i - 1]
    table = torch.tensor([[a, a + len(c.source), o, 0, 1 << 62, 0, c.rows, c.codec, 1 << 62, d, c.dict_n,
                           0 if c.dictionary is None else len(c.dictionary), int(c.codes)]
                          for a, d, c, o in zip(layout.at, layout.dict_at, chunks, out_at)], dtype=torch.int64)
    counts = K.walk_chunks_triton(data, table.to(device), item).cpu().tolist()
    for c, k in zip(chunks, counts):
        if k < 0:
            where = f"Cannot read {c.where}: " if c.where else ""
            raise GlintIOError(f"{where}Parquet column {column!r}: bad page headers (a header that does not "
                               "parse, a page past the column chunk's end, page values that do not add up "
                               "to the chunk's, or a page encoding other than PLAIN or dictionary)")
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
    K.walk_chunks_triton(data, table, item, pages, dec)
    buf = torch.empty(dst + 16, dtype=torch.uint8, device=device)
    K.inflate_pages_triton(data, buf, pages, err)
    _index_widths(buf, dec, err)
    values = torch.empty(sum(rows), dtype=dtype, device=device)
    decode_pages_triton(buf, buf[:(buf.numel() // item) * item].view(dtype), dec, values, err)
    return values, err


def _index_widths(buf: torch.Tensor, dec: torch.Tensor, err: torch.Tensor) -> None:
    """A dictionary-encoded page's index width into its dec row: the first
    byte of its decompressed body (more than 32 bits is bad data: flagged,
    and read as width 0)."""
    from glint.kernels import parquet_raw as K
    w = dec[:, 2]
    is_idx = w == K.WIDTH_FROM_DATA
    first = buf[(dec[:, 0] - 1).clamp_(min=0)].to(torch.int64)
    too_wide = is_idx & (first > _MAX_WIDTH)
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
        fields = np.zeros((n, 7), dtype=np.int64)
        fields[:, 0], fields[:, 1], fields[:, 2], fields[:, 3] = chunks.rows, chunks.usize, chunks.size, chunks.codec
        if chunks.remap is not None:                        # a string column's codes (RawSet.with_codes)
            entries = np.array([len(p) for p in chunks.pages], dtype=np.int64)[chunks.page_of]
            fields[:, 4], fields[:, 5], fields[:, 6] = entries, 4 * entries, 1
    else:
        fields = np.array([(c.rows, c.usize, c.source.size if type(c.source) is FileRange else len(c.source),
                            c.codec, c.dict_n, 0 if c.dictionary is None else len(c.dictionary), c.codes)
                           for c in chunks], dtype=np.int64).reshape(n, 7)
    rows, usize = fields[:, 0], fields[:, 1]
    at = np.asarray(layout.at, dtype=np.int64) + base
    dict_at = np.asarray(layout.dict_at, dtype=np.int64)
    cap = np.maximum(RAW_PAGES, _pages_cap(rows, usize))                   # RawChunk.pages_cap
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
    return out


def _dtype_of(chunks) -> torch.dtype:
    """The dtype of raw chunks of one column (a list of RawChunk or a RawSet)."""
    return chunks.dtype if type(chunks) is RawSet else chunks[0].dtype


def decode_raw_many(items: list, data: torch.Tensor, room=None):
    """decode_raw's way without waiting (``exact`` off) for several columns
    at once, so that their pages go through one pass of the kernels (the
    page walk once per value size, one decompression, then the page kernel
    per column): ``items`` are (raw chunks of one dtype, their RawLayout,
    where that layout's buffer starts in ``data``). Returns ([values per
    item], err): one flag for all of them (see decode_raw). ``room(nbytes)``:
    a context manager held while the decode's device memory (``nbytes``) is
    allocated, and only then (the scan's memory manager makes room; its lock
    held over the kernels' launches too kept a small table's decode waiting
    for a large one's)."""
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
    nbytes = dst + 16 + 8 * (n_rows * K.CHUNK_FIELDS + page * (K.PAGE_FIELDS + 7)) + \
        sum(spans[i][4] * _dtype_of(items[i][0]).itemsize for i in order)
    with room(nbytes) if room is not None else contextlib.nullcontext():
        rows = np.concatenate(blocks) if blocks else np.zeros((0, K.CHUNK_FIELDS), dtype=np.int64)
        table = to_device(torch.from_numpy(rows), device)
        err = torch.zeros(1, dtype=torch.int32, device=device)
        # rows past a chunk's pages copy nothing and decode nothing
        pages = torch.zeros((page, K.PAGE_FIELDS), dtype=torch.int64, device=device)
        dec = torch.zeros((page, 7), dtype=torch.int64, device=device)
        buf = torch.empty(dst + 16, dtype=torch.uint8, device=device)
        outs = {i: torch.empty(spans[i][4], dtype=_dtype_of(items[i][0]), device=device) for i in range(len(items))}
    dec[:, 2] = -1
    walks: dict[int, list] = {}                 # value size -> [first row, end row]
    for i in order:
        item = _dtype_of(items[i][0]).itemsize
        r0, r1 = spans[i][:2]
        walks.setdefault(item, [r0, r1])[1] = r1
    for item, (r0, r1) in walks.items():
        t = table[r0:r1]
        got = K.walk_chunks_triton(data, t, item, pages, dec)
        err += ((got < 0) | (got > t[:, K.C_CAP])).any().to(torch.int32)
    K.inflate_pages_triton(data, buf, pages, err)
    _index_widths(buf, dec, err)
    out = []
    for i, (chunks, _, _) in enumerate(items):
        dtype = _dtype_of(chunks)
        item = dtype.itemsize
        _, _, p0, p1, n = spans[i]
        values = outs.pop(i)
        decode_pages_triton(buf, buf[:(buf.numel() // item) * item].view(dtype), dec[p0:p1], values, err)
        out.append(values)
    return out, err
