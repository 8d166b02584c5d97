"""String functions that build or measure strings, on the device: lpad /
rpad, left / right, repeat, reverse, concat_ws, chr, ascii / unicode (ord),
strlen, bit_length; md5 on the host (hashlib, once per distinct string).

Counts and positions are code points, as in DuckDB; their integer
arguments may be constants or columns. A constant argument makes the work
once per dictionary entry (codes unchanged); a column makes it once per
row.

>>> c = Column.from_arrow(pa.array(["héllo", "ab", None]))
>>> pad(c, 4, "xy", left=True).to_arrow().to_pylist(), pad(c, 7, "é", left=False).to_arrow().to_pylist()
(['héll', 'xyab', None], ['hélloéé', 'abééééé', None])
>>> left(c, -2).to_arrow().to_pylist(), right(c, 3).to_arrow().to_pylist(), repeat(c, 2).to_arrow().to_pylist()
(['hél', '', None], ['llo', 'ab', None], ['héllohéllo', 'abab', None])
"""

from __future__ import annotations

import hashlib

import pyarrow as pa
import torch

from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary
from glint.errors import ExecutionError
from glint.functions.strings.core import check_substring_range, join_pieces, slice_chars, work_set
from glint.functions.strings.host import and_valid, map_dictionary, require_varchar, to_varchar
from glint.kernels.strings import graphemes
from glint.kernels.strings.codepoints import char_to_byte
from glint.kernels.strings.counting import count_chars
from glint.kernels.strings.gather import gather
from glint.kernels.strings.pieces import Pieces, expand

_MAX_STRING = (1 << 32) - 1  # DuckDB's largest string, in bytes


# ------------------------------------------------------------------ plumbing
def _entries_or_rows(col: Column, *args) -> tuple[Pieces, torch.Tensor | None, list, torch.Tensor | None]:
    """(pieces to work on, the code of each row into the result, the integer
    arguments as one value per piece, validity). Constant arguments: the
    dictionary's entries (or the used ones); column arguments: the rows."""
    if all(not isinstance(a, Column) for a in args):
        p, index = work_set(col)
        vals = [torch.full((len(p),), int(a), dtype=torch.int64, device=col.device) for a in args]
        return p, index, vals, col.valid
    valid = col.valid
    vals = []
    for a in args:
        if isinstance(a, Column):
            vals.append(a.data.long())
            valid = and_valid(valid, a.valid)
        else:
            vals.append(torch.full((len(col),), int(a), dtype=torch.int64, device=col.device))
    p = col.dictionary.pieces(col.data)
    if valid is not None:  # NULL rows build nothing
        p = Pieces(p.data, p.starts, torch.where(valid, p.lengths, 0))
    return p, None, vals, valid


def _result(col: Column, d: Dictionary, index: torch.Tensor | None, valid) -> Column:
    codes = torch.arange(len(col), dtype=torch.int32, device=col.device) if index is None else index.to(torch.int32)
    return Column(T.VARCHAR, codes, valid, d)


def _dictionary(p: Pieces) -> Dictionary:
    offsets, data = gather(p)
    return Dictionary(offsets, data)


def _used(index: torch.Tensor | None, valid, n: int, device) -> torch.Tensor:
    """Which pieces some non-NULL row uses (errors count only for them)."""
    if index is None:
        return valid if valid is not None else torch.ones(n, dtype=torch.bool, device=device)
    used = torch.zeros(n, dtype=torch.bool, device=device)
    used[index if valid is None else index[valid]] = True
    return used


def _cycled(p: Pieces, nbytes: torch.Tensor) -> Pieces:
    """Each piece's bytes repeated to ``nbytes`` bytes (pieces with bytes to
    make are not empty), in a new buffer."""
    piece, local, _ = expand(Pieces(p.data, p.starts, nbytes))
    if local.numel() == 0:
        return Pieces(torch.zeros(0, dtype=torch.uint8, device=p.device), torch.zeros_like(nbytes), nbytes)
    src = p.starts[piece] + local % p.lengths[piece].clamp(min=1)
    offs = torch.cumsum(nbytes, 0) - nbytes
    return Pieces(p.data[src], offs, nbytes)


# ------------------------------------------------------------------ padding
def pad(col: Column, n: int | Column, fill: str | Column, left: bool) -> Column:
    """lpad / rpad to ``n`` code points: longer strings are cut to their
    first n, shorter ones padded with ``fill`` repeated; n <= 0 gives ''."""
    name = "LPAD" if left else "RPAD"
    col = require_varchar(col, name.lower())
    if isinstance(fill, Column):
        fill = require_varchar(fill, name.lower())
        p, index, (target,), valid = _entries_or_rows(
            col, n if isinstance(n, Column) else Column(T.BIGINT, torch.full((len(col),), int(n), device=col.device))
        )
        valid = and_valid(valid, fill.valid)
        f = fill.dictionary.pieces(fill.data)
    else:
        p, index, (target,), valid = _entries_or_rows(col, n)
        f = Dictionary.from_pylist([fill], col.device).pieces(torch.zeros(len(p), dtype=torch.int64, device=col.device))
    chars = count_chars(p)
    target = target.clamp(min=0, max=_MAX_STRING)
    keep = torch.minimum(chars, target)
    need = target - keep
    fchars = count_chars(f)
    short = (need > 0) & (fchars == 0) & _used(index, valid, len(p), col.device)
    if bool(short.any()):
        raise ExecutionError(f"Invalid Input Error: Insufficient padding in {name}.")
    fchars = fchars.clamp(min=1)
    whole, rest = need // fchars, need % fchars
    padding = _cycled(f, torch.where(need > 0, whole * f.lengths + char_to_byte(f, rest), 0))
    body = slice_chars(p, torch.zeros_like(keep), keep, chars)
    d = join_pieces([padding, body] if left else [body, padding])
    return _result(col, d, index, valid)


# --------------------------------------------------------------- left, right
def left(col: Column, n: int | Column) -> Column:
    """The first n code points; n < 0: all but the last -n."""
    col = require_varchar(col, "left")
    p, index, (k,), valid = _entries_or_rows(col, n)
    check_substring_range(torch.zeros_like(k), k, _used(index, valid, len(p), col.device))
    chars = count_chars(p)
    hi = torch.where(k >= 0, torch.minimum(k, chars), (chars + k.clamp(min=-(1 << 62))).clamp(min=0))
    return _result(col, _dictionary(slice_chars(p, torch.zeros_like(hi), hi, chars)), index, valid)


def right(col: Column, n: int | Column) -> Column:
    """The last n code points; n < 0: all but the first -n."""
    col = require_varchar(col, "right")
    p, index, (k,), valid = _entries_or_rows(col, n)
    chars = count_chars(p)
    lo = torch.where(k >= 0, chars - torch.minimum(k, chars), torch.minimum(-(k.clamp(min=-(1 << 62))), chars))
    return _result(col, _dictionary(slice_chars(p, lo, chars, chars)), index, valid)


# ------------------------------------------------------------------- repeat
def repeat(col: Column, n: int | Column) -> Column:
    """The string n times (n <= 0: '')."""
    col = require_varchar(col, "repeat")
    p, index, (k,), valid = _entries_or_rows(col, n)
    k = k.clamp(min=0, max=1 << 33)  # beyond any string's size already
    size = p.lengths * k
    over = (size > _MAX_STRING) & _used(index, valid, len(p), col.device)
    if bool(over.any()):
        big = int(size[over][0])
        raise ExecutionError(
            f"Out of Range Error: Cannot create a string of size: '{big}', "
            f"the maximum supported string size is: '{_MAX_STRING}'"
        )
    cyc = _cycled(p, torch.where(p.lengths > 0, size, 0))
    offsets = torch.cat(
        [
            cyc.starts,
            (cyc.starts[-1:] + cyc.lengths[-1:]) if len(cyc) else torch.zeros(1, dtype=torch.int64, device=col.device),
        ]
    )
    return _result(col, Dictionary(offsets, cyc.data), index, valid)


# ---------------------------------------------------------------- concat_ws
def concat_ws(sep: Column, values: list[Column]) -> Column:
    """concat_ws(sep, a, b, ...): the non-NULL values joined by sep (NULL when
    sep is); values of other types are cast to VARCHAR first.

    >>> s = Column.from_arrow(pa.array([",", "-", None]))
    >>> a, b = Column.from_arrow(pa.array(["x", None, "z"])), Column.from_arrow(pa.array([1, 2, None]))
    >>> concat_ws(s, [a, b]).to_arrow().to_pylist()
    ['x,1', '2', None]
    """
    sep = require_varchar(sep, "concat_ws")
    strs = [to_varchar(v) if v.dtype.kind != "NULL" else None for v in values]
    n, dev = len(sep), sep.device
    seen = torch.zeros(n, dtype=torch.bool, device=dev)
    sp = row_pieces_of(sep)
    parts = []
    for c in strs:  # over the arguments, not rows
        if c is None:
            continue
        present = c.validity()
        p = row_pieces_of(c)
        parts.append(Pieces(sp.data, sp.starts, torch.where(present & seen, sp.lengths, 0)))
        parts.append(Pieces(p.data, p.starts, torch.where(present, p.lengths, 0)))
        seen = seen | present
    if not parts:
        return _result(sep, Dictionary.from_pylist([""] * n, dev), None, sep.valid)
    return _result(sep, join_pieces(parts), None, sep.valid)


def row_pieces_of(col: Column) -> Pieces:
    return col.dictionary.pieces(col.data)


# ----------------------------------------------------------- code points
def _first_code_point(p: Pieces) -> torch.Tensor:
    """The first code point of each piece (-1 for an empty piece)."""
    size = p.data.shape[0]
    if size == 0:
        return torch.full((len(p),), -1, dtype=torch.int64, device=p.device)
    at = torch.arange(4, device=p.device)
    b = p.data[(p.starts[:, None] + at).clamp(max=size - 1)].long()
    b = torch.where(at < p.lengths[:, None], b, 0)
    lead = b[:, 0]
    cont = b[:, 1:] & 0x3F
    two = ((lead & 0x1F) << 6) | cont[:, 0]
    three = ((lead & 0x0F) << 12) | (cont[:, 0] << 6) | cont[:, 1]
    four = ((lead & 0x07) << 18) | (cont[:, 0] << 12) | (cont[:, 1] << 6) | cont[:, 2]
    cp = torch.where(lead < 0x80, lead, torch.where(lead < 0xE0, two, torch.where(lead < 0xF0, three, four)))
    return torch.where(p.lengths > 0, cp, -1)


def unicode(col: Column, empty: int = -1) -> Column:
    """The first code point as INTEGER (unicode / ord: -1 for ''; ascii: 0)."""
    col = require_varchar(col, "unicode")
    p, index = work_set(col)
    cp = _first_code_point(p)
    cp = torch.where(cp < 0, empty, cp)
    return Column(T.INTEGER, cp.to(torch.int32)[index], col.valid)


def ascii(col: Column) -> Column:
    return unicode(col, empty=0)


def chr_(col: Column) -> Column:
    """chr(n): the code point n as a string; not a code point (negative, a
    surrogate, beyond U+10FFFF) in a non-NULL row is an error.

    >>> chr_(Column.from_arrow(pa.array([65, 233, None, 128512], pa.int32()))).to_arrow().to_pylist()
    ['A', 'é', None, '😀']
    """
    v = col.data.long()
    used = col.validity()
    bad = ((v < 0) | (v > 0x10FFFF) | ((v >= 0xD800) & (v <= 0xDFFF))) & used
    if bool(bad.any()):
        raise ExecutionError(f"Invalid Input Error: Invalid UTF8 Codepoint {int(v[bad][0])}")
    v = torch.where(used, v, 0)
    width = 1 + (v >= 0x80).long() + (v >= 0x800).long() + (v >= 0x10000).long()
    b0 = torch.where(
        width == 1,
        v,
        torch.where(width == 2, 0xC0 | (v >> 6), torch.where(width == 3, 0xE0 | (v >> 12), 0xF0 | (v >> 18))),
    )
    i = torch.arange(4, device=v.device)[None, :]
    shift = (6 * (width[:, None] - 1 - i)).clamp(min=0)
    picked = torch.where(i == 0, b0[:, None], 0x80 | ((v[:, None] >> shift) & 0x3F))
    keep = i < width[:, None]
    offsets = torch.zeros(len(v) + 1, dtype=torch.int64, device=v.device)
    torch.cumsum(width, 0, out=offsets[1:])
    data = picked[keep].to(torch.uint8)
    return Column(
        T.VARCHAR, torch.arange(len(v), dtype=torch.int32, device=v.device), col.valid, Dictionary(offsets, data)
    )


# ------------------------------------------------------------------ reverse
def reverse(col: Column) -> Column:
    """The string reversed by grapheme clusters (an accent stays on its
    letter, an emoji sequence stays whole; ASCII strings byte by byte), as
    DuckDB does (glint.kernels.strings.graphemes).

    >>> reverse(Column.from_arrow(pa.array(["abc", "héllo", None]))).to_arrow().to_pylist()
    ['cba', 'olléh', None]
    """
    col = require_varchar(col, "reverse")
    p, index = work_set(col)
    r = graphemes.reverse(p)
    offsets = torch.cat(
        [r.starts, (r.starts[-1:] + r.lengths[-1:]) if len(r) else torch.zeros(1, dtype=torch.int64, device=col.device)]
    )
    return _result(col, Dictionary(offsets, r.data), index, col.valid)


# ------------------------------------------------------------------ lengths
def byte_length(col: Column, bits: bool = False) -> Column:
    """strlen (bytes) or bit_length (bits) as BIGINT."""
    col = require_varchar(col, "strlen")
    p, index = work_set(col)
    return Column(T.BIGINT, (p.lengths * (8 if bits else 1))[index], col.valid)


def md5(col: Column) -> Column:
    """md5 of each string's UTF-8 bytes, as 32 lower-case hex digits (hashlib,
    once per distinct string on the host).

    >>> md5(Column.from_arrow(pa.array(["abc", None]))).to_arrow().to_pylist()
    ['900150983cd24fb0d6963f7d28e17f72', None]
    """

    def digests(v: pa.Array) -> pa.Array:
        return pa.array(
            [None if s is None else hashlib.md5(s.encode()).hexdigest() for s in v.to_pylist()], pa.string()
        )

    return map_dictionary(require_varchar(col, "md5"), digests)
