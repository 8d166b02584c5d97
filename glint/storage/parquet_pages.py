"""Parquet column chunks of fixed-width types decoded into torch tensors: the
pure-torch reference of a device Parquet decoder.

The host does what is sequential and small: it reads a column chunk's bytes
(one ``pread``), parses the page headers (Thrift compact protocol, with the
helpers of :mod:`glint.storage.parquet_meta`), decompresses the pages
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

import os
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from ..errors import GlintIOError, NotSupported
from .parquet_meta import ThriftError, _fields, _int_value, _varint

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


def read_chunk_bytes(path: str, cc) -> bytes:
    """The bytes of a column chunk (``cc``: pyarrow's ColumnChunkMetaData), page
    headers included: from the dictionary page when there is one, else from the
    first data page, ``total_compressed_size`` bytes."""
    start = cc.data_page_offset
    if cc.has_dictionary_page and cc.dictionary_page_offset:
        start = cc.dictionary_page_offset
    n = cc.total_compressed_size
    fd = os.open(path, os.O_RDONLY)
    try:
        parts, got = [], 0
        while got < n:
            b = os.pread(fd, n - got, start + got)
            if not b:
                break
            parts.append(b)
            got += len(b)
    finally:
        os.close(fd)
    if got != n:
        raise GlintIOError(f"{path}: column chunk at {start} runs past the end of the file")
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _struct(b, f) -> dict:
    """The fields of the struct value of field f, by field id."""
    return {x[0]: x for x in _fields(b, f[3])[0]}


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
        if dec is None:
            out = bytes(raw)
        elif size == 0:
            out = b""
        else:
            out = dec.decompress(raw, decompressed_size=size, asbytes=True)
        if len(out) != size:
            raise ThriftError(f"page body is {len(out)} bytes, its header says {size}")
        return out

    mv = memoryview(buf)
    pages = []
    i = 0
    try:
        while i < len(buf):
            fl, j = _fields(buf, i)
            d = {f[0]: f for f in fl}
            kind = _int_value(buf, _required(d, 1, "type"))
            usize = _int_value(buf, _required(d, 2, "uncompressed_page_size"))
            csize = _int_value(buf, _required(d, 3, "compressed_page_size"))
            i = j + csize
            if csize < 0 or usize < 0 or i > len(buf):
                raise ThriftError("page runs past the end of the column chunk")
            raw = mv[j:i]
            if kind == INDEX_PAGE:
                continue
            if kind == DATA_PAGE:
                h = _struct(buf, _required(d, 5, "data_page_header"))
                pages.append(Page(
                    DATA_PAGE, _int_value(buf, _required(h, 1, "num_values")),
                    _int_value(buf, _required(h, 2, "encoding")), inflate(raw, usize),
                    def_encoding=_int_value(buf, h[3]) if 3 in h else RLE))
            elif kind == DICTIONARY_PAGE:
                h = _struct(buf, _required(d, 7, "dictionary_page_header"))
                pages.append(Page(
                    DICTIONARY_PAGE, _int_value(buf, _required(h, 1, "num_values")),
                    _int_value(buf, _required(h, 2, "encoding")), inflate(raw, usize)))
            elif kind == DATA_PAGE_V2:
                h = _struct(buf, _required(d, 8, "data_page_header_v2"))
                dl = _int_value(buf, _required(h, 5, "definition_levels_byte_length"))
                rl = _int_value(buf, _required(h, 6, "repetition_levels_byte_length"))
                if dl < 0 or rl < 0 or dl + rl > min(csize, usize):
                    raise ThriftError("levels longer than the page")
                compressed = h[7][1] == 1 if 7 in h else True     # bool: the value is the type
                rest = raw[dl + rl:]
                body = inflate(rest, usize - dl - rl) if compressed else bytes(rest)
                pages.append(Page(
                    DATA_PAGE_V2, _int_value(buf, _required(h, 1, "num_values")),
                    _int_value(buf, _required(h, 4, "encoding")), body,
                    def_bytes=bytes(raw[rl:rl + dl]),
                    num_nulls=_int_value(buf, _required(h, 2, "num_nulls"))))
            else:
                raise ThriftError(f"unknown page type {kind}")
    except (ThriftError, IndexError) as e:
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
        for row, v in zip(self.rows, (length, base, step, bit, width, limit)):
            row.append(v)
        self.total += length
        self.max_width = max(self.max_width, width)
        self.stepped |= step != 0
        self.checked |= limit > 0 and (1 << width) > limit

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


def _parse_hybrid(b, i: int, end: int, width: int, count: int, runs: _Runs, limit: int = 0) -> int | None:
    """Parse the run headers of the RLE / bit-packed hybrid stream in b[i:end]
    (``count`` values of ``width`` bits) into ``runs``; bit offsets are
    positions in b. Returns the number of ones when width is 1 (definition
    levels of a column with max level 1: the non-NULL count), else None."""
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
                runs.add(take, bit=i * 8, width=width, limit=limit)
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
                runs.add(take, base=v)
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
        from ..kernels.hybrid import decode_streams_triton
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
def decode_column_chunk(path: str, rg: int, column: int, device="cpu",
                        metadata: pq.FileMetaData | None = None,
                        use_triton: bool | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Column ``column`` (leaf index) of row group ``rg`` of a Parquet file:
    (values, valid). values: int32 / int64 / float32 / float64 on ``device``,
    0 where NULL; valid: a bool tensor, or None when the column cannot hold
    NULLs (max definition level 0). ``metadata``: the file's, when already read.
    ``use_triton`` (default: on CUDA): the dictionary indices of the chunk's
    pages are decoded by one Triton program per page (glint.kernels.hybrid)
    instead of from run headers parsed on the host.

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
    col = meta.schema.column(column)
    name = col.path
    dtype = _DTYPES.get(col.physical_type)
    if dtype is None:
        raise NotSupported(f"Parquet column {name!r}: physical type {col.physical_type} "
                           "(only INT32, INT64, FLOAT and DOUBLE are decoded)")
    if col.max_repetition_level or col.max_definition_level > 1:
        raise NotSupported(f"Parquet column {name!r}: nested column (max repetition level "
                           f"{col.max_repetition_level}, max definition level {col.max_definition_level})")
    cc = meta.row_group(rg).column(column)
    codec = _FROM_PYARROW.get(cc.compression, cc.compression)
    if codec == "UNKNOWN":
        codec = "UNKNOWN (Hadoop-framed LZ4 or another codec pyarrow does not name)"
    pages = parse_pages(read_chunk_bytes(path, cc), codec, column=name)
    device = torch.device(device)
    if use_triton is None:
        use_triton = device.type == "cuda"
    values, valid = _decode_pages(pages, dtype, col.max_definition_level, device, name, use_triton)
    if values.numel() != cc.num_values:
        raise GlintIOError(f"Parquet column {name!r}: pages hold {values.numel()} values, "
                           f"the column chunk {cc.num_values}")
    return values, valid


def _decode_pages(pages: list[Page], dtype: torch.dtype, max_def: int, device: torch.device,
                  column: str, use_triton: bool = False) -> tuple[torch.Tensor, torch.Tensor | None]:
    size = dtype.itemsize
    hyb = bytearray()           # hybrid streams (levels, indices): bit offsets point here
    vals = bytearray()          # dictionary entries, then the values of PLAIN pages
    levels, index = _Runs(), _Runs()
    dict_n = None
    total = stored = 0
    # each page's indices into the values, in page order: a dictionary page's
    # hybrid stream (start, end, width, count), a PLAIN page's (None, base, 0, count)
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
                vals += memoryview(p.body)[:p.num_values * size]
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
                at = len(hyb)
                hyb += lv
                k = _parse_hybrid(hyb, at, len(hyb), 1, n, levels, limit=max_def + 1)
                if p.num_nulls is not None and p.num_nulls != n - k:
                    raise ValueError(f"page says {p.num_nulls} NULLs, its levels {n - k}")
            if p.encoding == PLAIN:
                if len(body) < k * size:
                    raise ValueError("PLAIN page shorter than its values")
                streams.append((None, len(vals) // size, 0, k))       # indices base, base + 1, ...
                vals += body[:k * size]
            elif p.encoding in (PLAIN_DICTIONARY, RLE_DICTIONARY):
                if dict_n is None:
                    raise ValueError("a dictionary-encoded page without a dictionary page")
                if k:
                    if not len(body) or body[0] > _MAX_WIDTH:
                        raise ValueError("bad dictionary index bit width")
                    at = len(hyb)
                    hyb += body[1:]
                    streams.append((at, len(hyb), body[0], k))
            else:
                raise NotSupported(f"Parquet column {column!r}: value encoding {_encoding_name(p.encoding)}")
            total += n
            stored += k

        pad = -len(hyb) % 8                                 # values start 8-byte aligned
        start = len(hyb) + pad
        blob = hyb + bytes(pad) + vals + bytes(8)           # + zero bytes the bit gathers may touch
        data = torch.frombuffer(blob, dtype=torch.uint8).to(device, copy=True)
        source = data[start:start + len(vals)].view(dtype)
        if dict_n is None:
            values = source
        elif use_triton and all(st[0] is not None for st in streams):     # every page dictionary-encoded
            idx = decode_streams(data, *zip(*streams), use_triton=True) if streams else \
                torch.zeros(0, dtype=torch.int32, device=device)
            # (one sync: an index past the dictionary would be a device-side assert in the gather)
            if idx.numel() and bool(((idx < 0) | (idx >= dict_n)).any()):
                raise ValueError("a dictionary index past the dictionary")
            values = source[idx]
        else:
            for at, end, width, k in streams:           # run headers parsed on the host
                if at is None:
                    index.add(k, base=end, step=1)
                else:
                    _parse_hybrid(hyb, at, end, width, k, index, limit=dict_n)
            values = source[index.expand(data)]
        if not max_def:
            return values, None
        valid = levels.expand(data) == 1
        return torch.zeros(total, dtype=dtype, device=device).masked_scatter_(valid, values), valid
    except (ValueError, ThriftError, IndexError) as e:
        raise GlintIOError(f"Parquet column {column!r}: bad page data: {e}") from None
