"""A Parquet footer that makes pyarrow decode columns the way glint stores
them, and page-header reads for choosing how to decode string columns.

pyarrow turns a DECIMAL stored as INT32 / INT64 into 128-bit decimal values
(16 bytes a row, then glint takes their low 8 bytes), and follows the Arrow
schema a writer stored in the file (``ARROW:schema``), which for tpchgen-cli
and DuckDB files asks for ``string_view`` columns that glint then copies into
offsets + bytes. Both cost more than the decoding itself. So the scan reads
with a rewritten footer: the DECIMAL annotation is dropped from INT32 / INT64
columns (pyarrow returns the unscaled integers, which is what glint's DECIMAL
is) and the stored Arrow schema is renamed out of the way (strings come back
as ``string``). Row groups, pages and statistics are untouched: only the
schema elements and one key are rewritten, so the result is exact.

The footer is Thrift's compact protocol. Only what the rewrite needs is
parsed: FileMetaData's first two fields (version, schema), and the fields
after the row groups (key/value metadata and the rest), which are found by
searching for the ``ARROW:schema`` key and checked by parsing forward to the
footer's end.

>>> import pyarrow as pa, pyarrow.parquet as pq, tempfile, decimal
>>> d = tempfile.mkdtemp()
>>> t = pa.table({"p": pa.array([decimal.Decimal("1.25"), None], pa.decimal128(15, 2)), "s": ["x", "y"]})
>>> pq.write_table(t, d + "/t.parquet", store_decimal_as_integer=True)
>>> meta = raw_footer(d + "/t.parquet")
>>> pq.ParquetFile(d + "/t.parquet", metadata=meta.metadata).read().column("p").to_pylist()
[125, None]
>>> sorted(meta.raw_decimals), meta.dropped_arrow_schema
(['p'], True)
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

# compact protocol type ids
_BOOL_TRUE, _BOOL_FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)
_INT32, _INT64 = 1, 2  # parquet physical types
_CONVERTED_DECIMAL = 5
_LOGICAL_DECIMAL = 5  # LogicalType union member for DECIMAL
_ARROW_KEY = b"ARROW:schema"
_RENAMED_KEY = b"glint:ignore"  # the same length: nothing else in the footer moves


class ThriftError(ValueError):
    pass


def _varint(b, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        if i >= len(b):
            raise ThriftError("truncated varint")
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def _zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _unzigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def _encode_varint(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7


def _skip(b, i: int, t: int) -> int:
    """The position after a value of compact type t starting at i."""
    if t in (_BOOL_TRUE, _BOOL_FALSE):
        return i
    if t == _BYTE:
        return i + 1
    if t in (_I16, _I32, _I64):
        return _varint(b, i)[1]
    if t == _DOUBLE:
        return i + 8
    if t == _BINARY:
        n, i = _varint(b, i)
        return i + n
    if t in (_LIST, _SET):
        h = b[i]
        i += 1
        n, et = h >> 4, h & 15
        if n == 15:
            n, i = _varint(b, i)
        for _ in range(n):
            i = _skip(b, i, et)
        return i
    if t == _MAP:
        n, i = _varint(b, i)
        if n:
            kv = b[i]
            i += 1
            for _ in range(n):
                i = _skip(b, _skip(b, i, kv >> 4), kv & 15)
        return i
    if t == _STRUCT:
        return _fields(b, i)[1]
    raise ThriftError(f"unknown compact type {t}")


def _fields(b, i: int, stop_after: int | None = None, fid: int = 0):
    """The fields of the struct at i: ([(field id, type, header start, value
    start, value end)], position after the struct). ``stop_after``: stop once
    that field id has been read (the rest of the struct is not parsed; the
    position returned is then that of the next field header). ``fid``: the
    id of the field before i, when parsing starts inside a struct."""
    out = []
    while True:
        if i >= len(b):
            raise ThriftError("truncated struct")
        start = i
        h = b[i]
        i += 1
        if h == 0:
            return out, i
        t, delta = h & 15, h >> 4
        if delta:
            fid += delta
        else:
            v, i = _varint(b, i)
            fid = _zigzag(v)
        vs = i
        i = _skip(b, i, t)
        out.append((fid, t, start, vs, i))
        if stop_after is not None and fid >= stop_after:
            return out, i


def _field_header(prev: int, fid: int, t: int) -> bytes:
    d = fid - prev
    if 0 < d <= 15:
        return bytes([(d << 4) | t])
    return bytes([t]) + _encode_varint(_unzigzag(fid))


def _int_value(b, f) -> int:
    return _zigzag(_varint(b, f[3])[0])


def _patch_schema(b, vs: int, ve: int) -> tuple[bytes, list[int]]:
    """The schema list (bytes vs..ve of the footer) with the DECIMAL annotation
    dropped from INT32 / INT64 leaves; also the indexes of those elements."""
    h = b[vs]
    n, et = h >> 4, h & 15
    i = vs + 1
    if n == 15:
        n, i = _varint(b, i)
    if et != _STRUCT:
        raise ThriftError("schema is not a list of structs")
    out = bytearray(b[vs:i])
    changed = []
    for k in range(n):
        fl, j = _fields(b, i)
        d = {f[0]: f for f in fl}
        physical = _int_value(b, d[1]) if 1 in d else None
        converted = _int_value(b, d[6]) if 6 in d else None
        logical_decimal = False
        if 10 in d:  # LogicalType: a union, one member set
            members, _ = _fields(b, d[10][3])
            logical_decimal = bool(members) and members[0][0] == _LOGICAL_DECIMAL
        if physical in (_INT32, _INT64) and (converted == _CONVERTED_DECIMAL or logical_decimal):
            prev = 0
            for fid, t, _, fvs, fve in fl:
                if fid in (6, 7, 8, 10):  # converted type, scale, precision, logical type
                    continue
                out += _field_header(prev, fid, t) + b[fvs:fve]
                prev = fid
            out.append(0)
            changed.append(k)
        else:
            out += b[i:j]
        i = j
    if i != ve:
        raise ThriftError("schema list does not end where its field does")
    return bytes(out), changed


def _drop_arrow_schema(b: bytes) -> bytes | None:
    """The footer with its ARROW:schema key renamed, or None when it has none.
    The key/value list is FileMetaData's field 5, right after the row groups:
    found by searching for the key, then checked by parsing from there to the
    end of the footer."""
    needle = bytes([(1 << 4) | _BINARY, len(_ARROW_KEY)]) + _ARROW_KEY
    at = b.rfind(needle)
    while at >= 0:
        # field 5 header (delta 1 after field 4, a list), the list header, then this KeyValue
        start = _list_start(b, at)
        if start is not None:
            try:
                fl, end = _fields(b, start, fid=4)  # the tail of FileMetaData: field 5 onwards
            except (ThriftError, IndexError):
                end = -1
            if end == len(b) and fl and fl[0][0] == 5:
                return b[: at + 2] + _RENAMED_KEY + b[at + 2 + len(_ARROW_KEY) :]
        at = b.rfind(needle, 0, at)
    return None


def _list_start(b: bytes, at: int) -> int | None:
    """Where field 5's header begins when the KeyValue at ``at`` is the first
    element of its list (a short or a long list header before it)."""
    for start in range(at - 1, max(-1, at - 8), -1):
        if b[start] != (1 << 4) | _LIST:
            continue
        h = b[start + 1]
        if h & 15 != _STRUCT:
            continue
        if h >> 4 != 15 and start + 2 == at:
            return start
        if h >> 4 == 15:
            try:
                _, j = _varint(b, start + 2)
            except ThriftError:
                continue
            if j == at:
                return start
    return None


@dataclass(frozen=True)
class RawFooter:
    """A rewritten footer (``metadata`` for ``pq.ParquetFile``), the columns
    that come back as unscaled integers, and whether the stored Arrow schema
    was put aside."""

    metadata: pq.FileMetaData
    raw_decimals: frozenset
    dropped_arrow_schema: bool


def read_footer_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        if size < 12:
            raise ThriftError("not a Parquet file")
        f.seek(size - 8)
        tail = f.read(8)
        if tail[4:] != b"PAR1":
            raise ThriftError("no plain Parquet footer (encrypted or not Parquet)")
        n = int.from_bytes(tail[:4], "little")
        if n <= 0 or n > size - 12:
            raise ThriftError("bad footer length")
        f.seek(size - 8 - n)
        return f.read(n)


def raw_footer(path: str, footer: bytes | None = None) -> RawFooter | None:
    """The rewritten footer of a Parquet file, or None when nothing needs
    rewriting (no INT32 / INT64 DECIMAL, no stored Arrow schema) or the footer
    is not one this module understands (the scan then reads as pyarrow does)."""
    from pyarrow._parquet import _reconstruct_filemetadata

    try:
        b = footer if footer is not None else read_footer_bytes(path)
        top, _ = _fields(b, 0, stop_after=2)
        schema = next((f for f in top if f[0] == 2), None)
        if schema is None or schema[1] != _LIST:
            return None
        new_schema, changed = _patch_schema(b, schema[3], schema[4])
        dropped = _drop_arrow_schema(b)
        if not changed and dropped is None:
            return None
        body = dropped if dropped is not None else b
        body = body[: schema[3]] + new_schema + body[schema[4] :]
        meta = _reconstruct_filemetadata(pa.py_buffer(body))
    except (ThriftError, IndexError, pa.ArrowException, OSError, ValueError):
        return None
    flat = _element_names(b, schema[3])
    return RawFooter(meta, frozenset(flat[k] for k in changed if k < len(flat)), dropped is not None)


def _element_names(b: bytes, vs: int) -> list[str]:
    """The name of every schema element (field 4), in order."""
    h = b[vs]
    n = h >> 4
    i = vs + 1
    if n == 15:
        n, i = _varint(b, i)
    out = []
    for _ in range(n):
        fl, i = _fields(b, i)
        name = next((f for f in fl if f[0] == 4), None)
        if name is None:
            out.append("")
            continue
        ln, s = _varint(b, name[3])
        out.append(bytes(b[s : s + ln]).decode("utf-8", "replace"))
    return out


# ------------------------------------------------------------------ page headers
def dictionary_entries(path: str, offset: int) -> int | None:
    """The number of entries of the dictionary page at ``offset`` (a column
    chunk's dictionary_page_offset), or None when there is no readable one.

    >>> import pyarrow as pa, pyarrow.parquet as pq, tempfile
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"s": ["a", "b", "a", "c"] * 10}), d + "/t.parquet")
    >>> cc = pq.read_metadata(d + "/t.parquet").row_group(0).column(0)
    >>> dictionary_entries(d + "/t.parquet", cc.dictionary_page_offset)
    3
    """
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            b = f.read(256)
        fl, _ = _fields(b, 0)
        d = {x[0]: x for x in fl}
        if 1 not in d or _int_value(b, d[1]) != 2 or 7 not in d:  # PageType DICTIONARY_PAGE = 2
            return None
        header, _ = _fields(b, d[7][3])  # DictionaryPageHeader
        nv = next((x for x in header if x[0] == 1), None)
        return None if nv is None else _int_value(b, nv)
    except (ThriftError, IndexError, OSError):
        return None
