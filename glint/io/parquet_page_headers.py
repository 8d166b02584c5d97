"""Parquet pages as stored: a column chunk's bytes read (one ``pread``), its
page headers parsed (Thrift compact protocol, with the helpers of
:mod:`glint.io.parquet_meta`) and its page bodies decompressed
(``pa.Codec``), on the host. The constants name the Thrift enums' values.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import torch

from glint.errors import GlintIOError, NotSupported
from glint.io.file_reads import read_bytes
from glint.io.parquet_meta import ThriftError, _skip, _varint

# PageType
DATA_PAGE, INDEX_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 1, 2, 3
# Encoding
PLAIN, PLAIN_DICTIONARY, RLE, BIT_PACKED, RLE_DICTIONARY = 0, 2, 3, 4, 8
_ENCODING_NAMES = {
    0: "PLAIN",
    2: "PLAIN_DICTIONARY",
    3: "RLE",
    4: "BIT_PACKED",
    5: "DELTA_BINARY_PACKED",
    6: "DELTA_LENGTH_BYTE_ARRAY",
    7: "DELTA_BYTE_ARRAY",
    8: "RLE_DICTIONARY",
    9: "BYTE_STREAM_SPLIT",
}
# the physical types decoded into tensors, and their torch dtypes
PHYSICAL_DTYPES = {"INT32": torch.int32, "INT64": torch.int64, "FLOAT": torch.float32, "DOUBLE": torch.float64}
# Parquet codec name (the Thrift enum's) -> pa.Codec name
_CODECS = {
    "UNCOMPRESSED": None,
    "SNAPPY": "snappy",
    "GZIP": "gzip",
    "BROTLI": "brotli",
    "ZSTD": "zstd",
    "LZ4_RAW": "lz4_raw",
}
# pyarrow's ColumnChunkMetaData.compression calls Thrift's LZ4_RAW "LZ4" (Arrow's
# Compression::LZ4 is the raw block format); Thrift's LZ4 (Hadoop framing) is "UNKNOWN" there.
_FROM_PYARROW = {"LZ4": "LZ4_RAW"}


def encoding_name(e: int) -> str:
    return _ENCODING_NAMES.get(e, f"encoding {e}")


def parquet_codec(cc) -> str:
    """The Parquet (Thrift) name of a column chunk's codec (``cc``: pyarrow's
    ColumnChunkMetaData), as parse_pages takes it."""
    codec = _FROM_PYARROW.get(cc.compression, cc.compression)
    if codec == "UNKNOWN":
        codec = "UNKNOWN (Hadoop-framed LZ4 or another codec pyarrow does not name)"
    return codec


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


def read_chunk_bytes(path: str, cc, reuse: bool | None = False):
    """The bytes of a column chunk (``cc``: pyarrow's ColumnChunkMetaData), page
    headers included: from the dictionary page when there is one, else from the
    first data page, ``total_compressed_size`` bytes. ``reuse``: read into
    the calling thread's own buffer and return a memoryview of it, valid
    until the thread's next call (no fresh allocation per chunk; this did
    not, as first supposed, make 16 planning threads scale: what holds them
    back is the GIL). ``reuse=None``: into a
    buffer of pyarrow's memory pool, returned as a memoryview."""
    return read_bytes(path, chunk_start(cc), cc.total_compressed_size, reuse)


def chunk_start(cc) -> int:
    """Where a column chunk's bytes start: its dictionary page, if any."""
    if cc.has_dictionary_page and cc.dictionary_page_offset:
        return cc.dictionary_page_offset
    return cc.data_page_offset


# PageHeader's struct fields that are parsed (the data page headers); any
# other struct (statistics, ...) is skipped
_PAGE_STRUCTS = frozenset((5, 7, 8))


def _header_fields(b, i: int, structs=frozenset(), spans: dict | None = None) -> tuple[dict, int]:
    """The integer and bool fields of the Thrift compact struct at i, by field
    id (the fields with ids in ``structs`` parsed as structs the same way,
    everything else skipped), and the position after the struct: a page
    header's few fields without the generic parser's lists (this runs once
    per page, holding the GIL). ``spans``: filled with each integer field's
    varint as (first byte, end), by field id (the host tier rewrites one)."""
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
        if 4 <= t <= 6:  # i16 / i32 / i64: zigzag varint
            if spans is not None:
                at = i
            v = b[i]
            if v < 0x80:
                i += 1
            else:
                v, i = _varint(b, i)
            out[fid] = (v >> 1) ^ -(v & 1)
            if spans is not None:
                spans[fid] = (at, i)
        elif t == 1 or t == 2:  # bool: the value is the type
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
                pages.append(
                    Page(
                        DATA_PAGE,
                        _required(h, 1, "num_values"),
                        _required(h, 2, "encoding"),
                        inflate(raw, usize),
                        def_encoding=h.get(3, RLE),
                    )
                )
            elif kind == DICTIONARY_PAGE:
                h = _required(d, 7, "dictionary_page_header")
                pages.append(
                    Page(
                        DICTIONARY_PAGE, _required(h, 1, "num_values"), _required(h, 2, "encoding"), inflate(raw, usize)
                    )
                )
            elif kind == DATA_PAGE_V2:
                h = _required(d, 8, "data_page_header_v2")
                dl = _required(h, 5, "definition_levels_byte_length")
                rl = _required(h, 6, "repetition_levels_byte_length")
                if dl < 0 or rl < 0 or dl + rl > min(csize, usize):
                    raise ThriftError("levels longer than the page")
                compressed = h.get(7, True)
                rest = raw[dl + rl :]
                body = inflate(rest, usize - dl - rl) if compressed else bytes(rest)
                pages.append(
                    Page(
                        DATA_PAGE_V2,
                        _required(h, 1, "num_values"),
                        _required(h, 4, "encoding"),
                        body,
                        def_bytes=bytes(raw[rl : rl + dl]),
                        num_nulls=_required(h, 2, "num_nulls"),
                    )
                )
            else:
                raise ThriftError(f"unknown page type {kind}")
    except (ThriftError, IndexError, TypeError, AttributeError) as e:
        raise GlintIOError(f"Parquet column {column!r}: bad page: {e}") from None
    except pa.ArrowException as e:
        raise GlintIOError(f"Parquet column {column!r}: page does not decompress: {e}") from None
    return pages
