"""Column chunks as stored (page headers, compressed bodies), for the
device to decode (glint.io.raw_decode; on CUDA: headers, decompression
and values all on the GPU): which chunks it can take, one chunk
(:class:`RawChunk`), a file's index of them (:class:`RawIndex`) and a scan
chunk's chunks of one column as numpy arrays (:class:`RawSet`). A string
column's chunks are decoded as codes into a dictionary the host makes of
their dictionary pages' strings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pyarrow.parquet as pq
import torch

from glint.columnar.column import Dictionary
from glint.errors import GlintIOError
from glint.io.file_reads import RAW_BUFFERS, FileHandles, FileRange, read_bytes
from glint.io.parquet_page_headers import (
    DICTIONARY_PAGE,
    PHYSICAL_DTYPES,
    PLAIN,
    PLAIN_DICTIONARY,
    Page,
    parse_pages,
)
from glint.runtime.settings import Settings

# what the GPU walks from the bytes as stored (glint.kernels.parquet_raw):
# codecs, and the encodings a chunk's metadata may list (RLE / BIT_PACKED:
# levels; an optional column's definition levels must be RLE, see _raw_entry)

# a column chunk's definition levels (RawChunk.levels)
LEVELS_NONE, LEVELS_ONES, LEVELS_NULLS = 0, 1, 2
RAW_CODECS = {"UNCOMPRESSED": 0, "SNAPPY": 1}
RAW_CODEC_NAMES = {0: "UNCOMPRESSED", 1: "SNAPPY"}
RAW_ENCODINGS = frozenset(("PLAIN", "PLAIN_DICTIONARY", "RLE_DICTIONARY", "RLE", "BIT_PACKED"))


@dataclass
class RawChunk:
    """A column chunk's bytes as stored (page headers, compressed bodies),
    which glint.io.raw_decode.decode_raw decodes (on CUDA: headers,
    decompression and values all on the GPU). ``rows``: its values; ``usize``: the metadata's
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
    # its data pages' definition levels (LEVELS_NONE: a required column's
    # have none; LEVELS_ONES: an optional column's chunk whose statistics
    # count no NULLs, its levels all 1, checked and skipped; LEVELS_NULLS:
    # one that may hold NULLs, its levels decoded into the values' validity)
    levels: int = 0

    @property
    def nbytes(self) -> int:
        """Bytes copied to the device for this chunk."""
        return len(self.source) + (0 if self.dictionary is None else len(self.dictionary))

    def _dictionary_page(self, files: FileHandles | None = None):
        """(the dictionary page parsed and decompressed on the host, the
        chunk's data pages as they are stored: bytes or a FileRange)."""
        head, rest = self._dictionary_bytes(files)
        return self._parse_dictionary(head), rest

    def _dictionary_bytes(self, files: FileHandles | None = None):
        """(the dictionary page as stored, the data pages: bytes or a FileRange)."""
        src = self.source
        if isinstance(src, FileRange):
            head = read_bytes(src.path, src.start, self.dict_span, reuse=True, files=files)
            rest = FileRange(src.path, src.start + self.dict_span, src.size - self.dict_span)
        else:
            head, rest = src[: self.dict_span], src[self.dict_span :]
        return head, rest

    def _parse_dictionary(self, head) -> Page:
        return _dictionary_page(head, RAW_CODEC_NAMES[self.codec], self.where)

    def with_strings(self, files: FileHandles | None = None, seen: dict | None = None) -> RawChunk:
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
            strings = _dictionary_strings(head, RAW_CODEC_NAMES[self.codec], self.where)
            if key is not None:
                seen[key] = strings
        return replace(self, source=rest, dict_span=0, dictionary=None, dict_n=len(strings), strings=strings)

    def with_host_dictionary(self) -> RawChunk:
        """The chunk with its dictionary page decompressed here (pa.Codec)
        and its data pages left as stored. Snappy decodes on the GPU one
        element at a time, and a dictionary of ~100,000 int64 values
        (TPC-H's prices and keys: five zero bytes each, a copy element per
        value) took one GPU program 60-70 ms: the long pole of every chunk's
        decoding. One host thread does such a page in 2-3 ms (0.33 GB/s out
        on the device's hosts), more while other threads run Python: the
        call waits for the GIL on its way in and out.
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
        return replace(self, source=rest, dict_span=0, dictionary=memoryview(kept)[:n], dict_n=entries)

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
        return max(RAW_PAGES, pages_cap_of(self.rows, self.usize))

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


RAW_PAGES = 64  # pages per column chunk the device's tables hold without counting them first


def pages_cap_of(rows, usize):
    """RawChunk.pages_cap before its floor of RAW_PAGES (ints or numpy arrays)."""
    return rows // 5000 + usize // 65536 + 8


def raw_readable(meta: pq.FileMetaData, rg: int, column: int) -> bool:
    """Whether the GPU can decode this column chunk from its bytes as stored:
    a flat column (required, or optional with RLE definition levels),
    snappy or uncompressed; INT32 / INT64 / FLOAT / DOUBLE with
    PLAIN or dictionary-encoded pages, or BYTE_ARRAY (strings, as codes) with
    a dictionary page (by the chunk's metadata: a string chunk's PLAIN data
    pages, which the metadata cannot rule out, are found by the GPU's page
    walk and flagged)."""
    dtype, codes, levels = _raw_kind(meta, column)
    return dtype is not None and _raw_entry(meta.row_group(rg).column(column), dtype, codes, levels) is not None


def _raw_kind(meta: pq.FileMetaData, column: int):
    """(the torch dtype a column the GPU may decode as stored is decoded to,
    whether that is a string column's codes, whether its pages carry
    definition levels: an optional column), or (None, False, False)."""
    col = meta.schema.column(column)
    if col.max_repetition_level or col.max_definition_level > 1:
        return None, False, False
    levels = col.max_definition_level == 1
    if col.physical_type == "BYTE_ARRAY":
        return torch.int32, True, levels
    return PHYSICAL_DTYPES.get(col.physical_type), False, levels


def _raw_entry(cc, dtype, codes: bool = False, levels: bool = False) -> tuple | None:
    """What read_raw needs of a column chunk (pyarrow's ColumnChunkMetaData),
    or None when its codec or encodings are not the GPU's (or, of a string
    column, when it has no dictionary page; or, of an optional column
    (``levels``), when its levels may be BIT_PACKED: the host plans those).
    Its last field is the chunk's RawChunk.levels: LEVELS_ONES where the
    statistics count no NULLs, else LEVELS_NULLS. (Each of pyarrow's
    properties costs ~0.4 us and ``encodings`` 1 us, under the GIL, for
    every row group and column a cold scan reads: each is asked once.)"""
    codec = RAW_CODECS.get(cc.compression)
    if codec is None:
        return None
    enc = cc.encodings
    ok = _ENCODINGS_OK.get(enc)
    if ok is None:
        ok = _ENCODINGS_OK[enc] = set(enc) <= RAW_ENCODINGS
    if not ok:
        return None
    mode = LEVELS_NONE
    if levels:
        if "BIT_PACKED" in enc:
            return None
        stats = cc.statistics
        none = stats is not None and stats.has_null_count and stats.null_count == 0
        mode = LEVELS_ONES if none else LEVELS_NULLS
    data_at = cc.data_page_offset
    has_dict = cc.has_dictionary_page
    dict_at = cc.dictionary_page_offset if has_dict else None
    start = dict_at if dict_at else data_at  # (chunk_start)
    size = cc.total_compressed_size
    dict_span = max(0, data_at - start)
    if codes and not (has_dict and 0 < dict_span <= min(STRING_DICTIONARY_BYTES, size - 1)):
        return None
    return (dtype, start, size, cc.num_values, codec, cc.total_uncompressed_size, dict_span, codes, mode)


_ENCODINGS_OK: dict = {}  # a chunk's encodings (pyarrow's tuple) -> all of them RAW_ENCODINGS


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
        k = int.from_bytes(mv[i : i + 4], "little")
        i += 4
        if i + k > end:
            raise ValueError(f"string {len(out)} of {k} bytes runs past the page")
        out.append(bytes(mv[i : i + k]))
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
        out.append(
            RawChunk(c.dtype, c.rows, c.codec, c.usize, c.source, c.where, 0, remap, len(c.strings), True, c.strings)
        )
    return _sorted_dictionary(ordered), out


def _sorted_dictionary(ordered: list):
    """A host Dictionary of sorted distinct strings (bytes)."""
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
        raise GlintIOError(
            f"Cannot read {where}: bad dictionary page: {e}" if where else f"bad dictionary page: {e}"
        ) from None


def read_raw_chunk(
    path: str, rg: int, column: int, metadata: pq.FileMetaData | None = None, where: str = ""
) -> RawChunk | None:
    """Column ``column`` (leaf index) of row group ``rg`` as stored (one
    ``pread``), or None when :func:`raw_readable` says no."""
    meta = metadata if metadata is not None else pq.read_metadata(path)
    dtype, codes, levels = _raw_kind(meta, column)
    entry = None if dtype is None else _raw_entry(meta.row_group(rg).column(column), dtype, codes, levels)
    return None if entry is None else read_raw(path, entry, where)


class RawIndex(Sequence):
    """For each row group of a file, what :func:`read_raw` needs to read one
    column as stored (a :func:`_raw_entry` tuple), or None where the GPU
    cannot. Entries are made on first use, ``block`` row groups at a
    time: pyarrow's metadata objects cost a few microseconds an access, under
    the GIL, so the whole file's (TPC-H SF 100's lineitem: 5,232 row groups,
    ~0.15 s for Q1's seven columns) was on the critical path of a cold scan's
    first chunk; now that chunk waits for its own row groups' only. The same
    entries are kept as numpy arrays too (:meth:`arrays`: a scan chunk's
    hundreds of row groups as one :class:`RawSet`). ``block``: the
    raw_index_block setting."""

    __slots__ = ("_meta", "_column", "dtype", "codes", "levels", "_entries", "_done", "_ok", "_fields", "_block_rows")

    def __init__(
        self,
        meta: pq.FileMetaData,
        column: int,
        dtype,
        codes: bool,
        block: int = Settings.raw_index_block,
        levels: bool = False,
    ):
        self._meta, self._column, self.dtype, self.codes, self.levels = meta, column, dtype, codes, levels
        self._block_rows = block
        n = meta.num_row_groups
        self._entries: list = [None] * n
        self._done = bytearray(-(-n // block))
        self._ok = np.zeros(n, dtype=bool)
        # start, size, rows, codec, usize, dict_span, levels of each row group's entry
        self._fields = np.zeros((7, n), dtype=np.int64)

    def __len__(self) -> int:
        return len(self._entries)

    def _block(self, b: int) -> None:
        # (two threads may make a block at once: the same entries)
        k = self._block_rows
        lo, hi = b * k, min(len(self._entries), (b + 1) * k)
        meta, col, dt, codes, levels = self._meta, self._column, self.dtype, self.codes, self.levels
        got = [_raw_entry(meta.row_group(i).column(col), dt, codes, levels) for i in range(lo, hi)]
        zeros = (0,) * 7
        self._fields[:, lo:hi] = (
            np.array([(*e[1:7], e[8]) if e is not None else zeros for e in got], dtype=np.int64).reshape(hi - lo, 7).T
        )
        self._ok[lo:hi] = [e is not None for e in got]
        self._entries[lo:hi] = got
        self._done[b] = 1

    def __getitem__(self, g):
        if isinstance(g, slice):
            return [self[i] for i in range(*g.indices(len(self)))]
        if g < 0:
            g += len(self._entries)
        b = g // self._block_rows
        if not self._done[b]:
            self._block(b)
        return self._entries[g]

    def arrays(self, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(whether each of these row groups has an entry, their entries'
        fields: start, size, rows, codec, usize, dict_span, levels, one row
        each)."""
        done = self._done
        for b in np.unique(groups // self._block_rows).tolist():
            if not done[b]:
                self._block(b)
        return self._ok[groups], self._fields[:, groups]


def raw_index(meta: pq.FileMetaData, column: int, block: int = Settings.raw_index_block) -> RawIndex | None:
    """A file's :class:`RawIndex` for column ``column`` (leaf index), its
    entries made ``block`` row groups at a time, or None for a column the
    GPU never decodes as stored (its type). Made once per file and column
    by the table's source."""
    dtype, codes, levels = _raw_kind(meta, column)
    if dtype is None:
        return None
    return RawIndex(meta, column, dtype, codes, block, levels)


def read_raw(path: str, entry: tuple, where: str = "", lazy: bool = False) -> RawChunk:
    """A column chunk as stored, from its raw_index entry (``lazy``: its
    bytes left in the file, a :class:`FileRange`)."""
    dtype, start, size, rows, codec, usize, dict_span, codes, levels = entry
    src = FileRange(path, start, size) if lazy else read_bytes(path, start, size, reuse=None)
    return RawChunk(
        dtype, rows, codec, usize, src, where, dict_span if dict_span < size else 0, codes=codes, levels=levels
    )


class RawSet:
    """A scan chunk's column chunks of one column (one dtype), all with their
    bytes still in their files: numpy arrays, one entry per chunk, where a
    list of :class:`RawChunk` costs a Python object (and a dozen more Python
    steps on the scan's threads, under the GIL) per row group and column:
    TPC-H Q1 at SF 100 has 36,000. The layout
    (glint.io.raw_decode.layout_raw_together), the staging
    (glint.io.file_reads.FileRuns) and the page walk's chunk table
    (glint.io.raw_decode) take it whole. It is also a sequence of
    RawChunk, made on demand (the exact re-decode, the CPU's reference
    decoder, errors).

    A string column's (``codes``) goes through :meth:`with_strings` (each
    chunk's dictionary page read on the host: ``pages``, the distinct pages'
    strings, and ``page_of``, each chunk's page; the ranges then cover the
    data pages only) and :meth:`with_codes` (the scan chunk's dictionary, and
    ``remap``: each distinct page's int32 codes in it, at ``remap_at``)."""

    __slots__ = (
        "dtype",
        "paths",
        "file",
        "start",
        "size",
        "rows",
        "codec",
        "usize",
        "dict_span",
        "where",
        "groups",
        "codes",
        "levels",
        "pages",
        "page_of",
        "remap",
        "remap_at",
    )

    def __init__(
        self,
        dtype,
        paths: list,
        file,
        start,
        size,
        rows,
        codec,
        usize,
        dict_span,
        where: list,
        groups,
        codes: bool = False,
        levels=None,
    ):
        self.dtype, self.paths, self.file, self.where, self.groups = dtype, paths, file, where, groups
        self.start, self.size, self.rows, self.codec, self.usize, self.dict_span = (
            start,
            size,
            rows,
            codec,
            usize,
            dict_span,
        )
        self.codes = codes
        # each chunk's RawChunk.levels (an array)
        self.levels = np.zeros(len(rows), dtype=np.int64) if levels is None else levels
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
            return RawChunk(
                self.dtype,
                int(self.rows[i]),
                int(self.codec[i]),
                int(self.usize[i]),
                src,
                where,
                span if span < size else 0,
                codes=self.codes,
                levels=int(self.levels[i]),
            )
        k = int(self.page_of[i])
        strings = self.pages[k]
        remap = None
        if self.remap is not None:
            at = int(self.remap_at[k])
            remap = self.remap[at : at + 4 * len(strings)]
        return RawChunk(
            self.dtype,
            int(self.rows[i]),
            int(self.codec[i]),
            int(self.usize[i]),
            src,
            where,
            0,
            remap,
            len(strings),
            True,
            strings,
            int(self.levels[i]),
        )

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    @property
    def nbytes(self) -> int:
        return int(self.size.sum())

    def _like(self, start, size, dict_span) -> RawSet:
        out = RawSet(
            self.dtype,
            self.paths,
            self.file,
            start,
            size,
            self.rows,
            self.codec,
            self.usize,
            dict_span,
            self.where,
            self.groups,
            self.codes,
            self.levels,
        )
        out.pages, out.page_of, out.remap, out.remap_at = self.pages, self.page_of, self.remap, self.remap_at
        return out

    def with_strings(self, files: FileHandles | None = None, seen: dict | None = None) -> RawSet:
        """A string column's set with each chunk's dictionary page read here
        (RawChunk.with_strings, one small read per chunk: ``seen``, pages
        already parsed by their bytes as stored, and the set's own distinct
        pages are parsed once) and its ranges cut to the data pages."""
        if not self.codes or self.page_of is not None:
            return self
        pages: list = []
        index: dict = {}
        page_of = np.empty(len(self), dtype=np.int64)
        paths, where, codec_names = self.paths, self.where, RAW_CODEC_NAMES
        for i, (f, s, span, size, codec) in enumerate(
            zip(
                self.file.tolist(),
                self.start.tolist(),
                self.dict_span.tolist(),
                self.size.tolist(),
                self.codec.tolist(),
            )
        ):
            if not 0 < span < size:
                raise GlintIOError(
                    f"Cannot read {where[f]}{int(self.groups[i])}: a string column chunk without a dictionary page"
                )
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
        out.remap = np.fromiter(
            (code[s] for p in self.pages for s in p), dtype=np.int32, count=int(lengths.sum())
        ).tobytes()
        return _sorted_dictionary(ordered), out
