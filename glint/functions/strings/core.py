"""String functions on VARCHAR columns: int32 codes into a dictionary of
strings in Arrow layout on the column's device (glint.columnar.column).

On the device (torch, and Triton kernels on CUDA; glint.kernels.strings):
comparisons with literals and between columns, IN lists, starts_with,
contains, LENGTH, SUBSTRING, UPPER / LOWER of ASCII strings, ``||`` /
CONCAT. On the host, once per string (:mod:`.host`): TRIM, REPLACE,
STRPOS, CAST to and from VARCHAR, and the case mapping of non-ASCII
strings. Elsewhere: LIKE and ILIKE (:mod:`.like`), regular expressions
(:mod:`.regex`), the search functions (:mod:`.text_search`) and the
building ones (:mod:`.text_build`).

Reading functions (LIKE, LENGTH, comparisons) work once per dictionary entry
and gather the results by code, or once per row when the dictionary has more
entries than the column has rows. Functions whose result is a string build a
new dictionary; its entries are neither sorted nor unique.

Semantics follow DuckDB: NULL in gives NULL out (CONCAT() excepted), lengths
and positions count Unicode code points, LIKE has no escape character unless
one is given, strings order byte-wise.

>>> c = Column.from_arrow(pa.array(["Hello", None, "world", ""]))
>>> upper(c).to_arrow().to_pylist()
['HELLO', None, 'WORLD', '']
>>> substring(c, 2, 3).to_arrow().to_pylist()
['ell', None, 'orl', '']
>>> concat([c, Column.from_arrow(pa.array([1, 2, None, 4]))], null_is_empty=True).to_arrow().to_pylist()
['Hello1', '2', 'world', '4']
"""

from __future__ import annotations

import pyarrow as pa
import torch

from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary
from glint.errors import ExecutionError, TypeMismatch

# the host path's functions are part of this module's interface
from glint.functions.strings.host import (
    and_valid,
    format_values,
    from_varchar,
    lower_scalar,
    ltrim,
    map_case,
    map_dictionary,
    parallel_apply,
    replace,
    require_varchar,
    rtrim,
    strpos,
    to_varchar,
    trim,
)
from glint.kernels.strings import columns as K
from glint.kernels.strings.case import ascii_lower, ascii_upper
from glint.kernels.strings.codepoints import char_to_byte
from glint.kernels.strings.columns import per_entry, to_rows, work_set
from glint.kernels.strings.counting import count_chars, count_non_ascii
from glint.kernels.strings.equality import dense_ids
from glint.kernels.strings.gather import gather
from glint.kernels.strings.order import compare_literal as _compare_pieces
from glint.kernels.strings.pieces import Pieces, from_strings
from glint.kernels.strings.search import find, is_one_of, match_at


# ---------------------------------------------------------------- plumbing
def per_row_result(col: Column, values: torch.Tensor, index: torch.Tensor, dtype: T.DataType) -> Column:
    """Per-piece results (see glint.kernels.strings.columns.work_set) as a column of col's rows."""
    return Column(dtype, to_rows(values, index), col.valid)


def _dictionary_of(p: Pieces) -> Dictionary:
    offsets, data = gather(p)
    return Dictionary(offsets, data)


def share_dictionary(cols: list[Column]) -> list[Column]:
    """The columns re-coded onto one dictionary (each distinct dictionary's
    entries one after the other), so a row-wise choice between them (CASE,
    COALESCE) is a choice between codes. Columns whose dictionary is larger
    than they are are compacted first.

    >>> a, b = share_dictionary([Column.from_arrow(pa.array(["x", "a"])), Column.from_arrow(pa.array(["m"]))])
    >>> a.dictionary is b.dictionary, a.data.tolist(), b.data.tolist(), b.to_arrow().to_pylist()
    (True, [0, 1], [2], ['m'])
    """
    cols = [require_varchar(c, "string") for c in cols]
    if len(cols) <= 1 or all(c.dictionary is cols[0].dictionary for c in cols):
        return list(cols)
    cols = [c.compact() for c in cols]
    dicts = list({id(c.dictionary): c.dictionary for c in cols}.values())
    d, bases = Dictionary.concat(dicts)
    base = {id(x): b for x, b in zip(dicts, bases)}
    return [
        Column(T.VARCHAR, c.data + base[id(c.dictionary)] if base[id(c.dictionary)] else c.data, c.valid, d)
        for c in cols
    ]


def from_python(values: list[str | None], device="cpu") -> Column:
    """A VARCHAR column from Python strings (None = NULL).

    >>> from_python(["b", None, "a"]).to_arrow().to_pylist()
    ['b', None, 'a']
    """
    return Column.from_arrow(pa.array(values, pa.string()), T.VARCHAR).to(device)


# ------------------------------------------------------------- comparisons
def compare_literal(op: str, col: Column, s: str) -> Column:
    """col <op> 'literal' for op in eq, ne, lt, le, gt, ge (byte order).

    >>> c = from_python(["b", "a", None, "ab"])
    >>> compare_literal("lt", c, "ab").to_arrow().to_pylist(), compare_literal("eq", c, "ab").to_arrow().to_pylist()
    ([False, True, None, False], [False, False, None, True])
    """
    col = require_varchar(col, "comparison")
    lit = s.encode()

    def test(p: Pieces) -> torch.Tensor:
        if op in ("eq", "ne"):
            if len(lit) <= 8:
                hit = is_one_of(p, [lit])
            else:
                hit = (p.lengths == len(lit)) & match_at(p, lit, torch.zeros_like(p.lengths))
            return hit if op == "eq" else ~hit
        cmp = _compare_pieces(p, lit)
        return {"lt": cmp < 0, "le": cmp <= 0, "gt": cmp > 0, "ge": cmp >= 0}[op]

    return Column(T.BOOLEAN, per_entry(col, ("compare", op, lit), test), col.valid)


def in_literals(col: Column, values: list[str]) -> torch.Tensor:
    """Rows whose string is one of ``values`` (bool per row; NULL rows undefined).

    >>> in_literals(from_python(["b", "a", "c"]), ["c", "b"]).tolist()
    [True, False, True]
    """
    col = require_varchar(col, "IN")

    def test(p: Pieces) -> torch.Tensor:
        if not values:
            return torch.zeros(len(p), dtype=torch.bool, device=col.device)
        lits = [v.encode() for v in values]
        if len(lits) <= 64 and all(len(lit) <= 8 for lit in lits):  # short literals: each piece's word once
            return is_one_of(p, lits)
        if len(values) <= 8:  # a few literals: compare with each
            hit = None
            for v in values:
                lit = v.encode()
                h = (p.lengths == len(lit)) & match_at(p, lit, torch.zeros_like(p.lengths))
                hit = h if hit is None else hit | h
            return hit
        # many: exact ids shared with the literals
        (ids, lit_ids), _ = dense_ids([p, from_strings(values, col.device)])
        return torch.isin(ids, lit_ids)

    return per_entry(col, ("in", tuple(values)), test)


def compare_columns(op: str, x: Column, y: Column) -> Column:
    """x <op> y for two VARCHAR columns, through exact equality ids (eq, ne)
    or common byte-order ranks (the others)."""
    x, y = require_varchar(x, "comparison"), require_varchar(y, "comparison")
    if op in ("eq", "ne"):
        kx, ky = K.equality_keys([x, y])
    else:
        kx, ky = K.order_ranks([x, y])
    out = {"eq": torch.eq, "ne": torch.ne, "lt": torch.lt, "le": torch.le, "gt": torch.gt, "ge": torch.ge}[op](kx, ky)
    return Column(T.BOOLEAN, out, and_valid(x.valid, y.valid))


# ------------------------------------------------- per-row keys of one column
def hash64(col: Column) -> torch.Tensor:
    """int64 content hash of each row's string, the same for equal strings in
    any dictionary, chunk, device or process; NULL rows get
    glint.kernels.strings.columns.NULL_HASH (see glint.kernels.strings.hashing).

    >>> h = hash64(from_python(["ab", None, "ab"]))
    >>> bool(h[0] == h[2])
    True
    """
    return K.hash64(require_varchar(col, "hash"))


def order_ranks(col: Column) -> torch.Tensor:
    """int64 per row that orders as the strings do (byte-wise, DuckDB's
    VARCHAR order); equal strings get equal values.

    >>> order_ranks(from_python(["b", "a", "ab", "a"])).tolist()
    [2, 0, 1, 0]
    """
    return K.order_ranks([require_varchar(col, "ORDER BY")])[0]


def extreme_rows(x: Column, slots, largest: bool, has: torch.Tensor) -> Column:
    """MIN (or MAX, ``largest``) of a VARCHAR column per group of ``slots``
    (glint.kernels.groupby.Slots), by byte order; NULL rows are skipped and
    groups where ``has`` is False are NULL. Compacted: a state of a few groups
    does not keep a large dictionary alive.

    >>> from glint.kernels.groupby import Slots
    >>> x = from_python(["b", "a", None, "ab", "c"])
    >>> m = extreme_rows(x, Slots(torch.tensor([0, 0, 1, 1, 0]), 2), False, torch.tensor([True, True]))
    >>> m.to_arrow().to_pylist(), len(m.dictionary)
    (['a', 'ab'], 2)
    """
    xs, s = (x, slots) if x.valid is None else (x.filter(x.valid), slots.subset(x.valid))
    return Column(x.dtype, K.extreme_codes(xs, s, largest), has, x.dictionary).compact()


def starts_with(col: Column, prefix: str) -> Column:
    col = require_varchar(col, "starts_with")
    lit = prefix.encode()
    hit = per_entry(col, ("starts_with", lit), lambda p: match_at(p, lit, torch.zeros_like(p.lengths)))
    return Column(T.BOOLEAN, hit, col.valid)


def contains(col: Column, s: str) -> Column:
    col = require_varchar(col, "contains")
    lit = s.encode()
    hit = per_entry(col, ("contains", lit), lambda p: find(p, lit, torch.zeros_like(p.lengths)) >= 0)
    return Column(T.BOOLEAN, hit, col.valid)


# --------------------------------------------------------------- LENGTH, case
def length(col: Column) -> Column:
    """Number of code points (DuckDB's length), as BIGINT."""
    col = require_varchar(col, "LENGTH")
    return Column(T.BIGINT, per_entry(col, ("length",), count_chars), col.valid)


def upper(col: Column) -> Column:
    return _change_case(col, upper=True)


def lower(col: Column) -> Column:
    return _change_case(col, upper=False)


def _change_case(col: Column, upper: bool) -> Column:
    """ASCII strings mapped on the device; strings with other code points
    through the host's exact Unicode mapping, appended to the dictionary."""
    col = require_varchar(col, "UPPER" if upper else "LOWER").compact()
    d = col.dictionary
    mapped = Dictionary(d.offsets, (ascii_upper if upper else ascii_lower)(d.data))
    if len(d) == 0:
        return Column(T.VARCHAR, col.data, col.valid, mapped)
    other = (count_non_ascii(d.pieces()) > 0).nonzero().squeeze(1)
    if other.numel() == 0:
        return Column(T.VARCHAR, col.data, col.valid, mapped)
    exact = Dictionary.from_arrow(map_case(d.to_arrow(other), upper)).to(col.device)
    out, (_, base) = Dictionary.concat([mapped, exact])
    remap = torch.arange(len(d), dtype=torch.int32, device=col.device)
    remap[other] = torch.arange(base, base + other.shape[0], dtype=torch.int32, device=col.device)
    return Column(T.VARCHAR, remap[col.data.long()], col.valid, out)


# ------------------------------------------------------------------ SUBSTRING
_FAR = 1 << 40  # beyond any string's length: clamping positions here keeps int64 arithmetic exact


def _char_bounds(n: torch.Tensor, start: torch.Tensor, length: torch.Tensor | None):
    """[lo, hi) code-point bounds of SUBSTRING(s, start, length) for strings of
    n code points, with DuckDB's rules: a positive start is 1-based, start 0
    sits one before the first character, a negative start counts from the
    end; a negative length takes the characters *before* the start; the range
    is clipped to the string afterwards.

    >>> n = torch.tensor([5, 5, 5, 5])
    >>> [t.tolist() for t in _char_bounds(n, torch.tensor([0, -2, 3, 2]), torch.tensor([2, 2, -2, 10]))]
    [[0, 3, 0, 1], [1, 5, 2, 5]]
    """
    start = start.clamp(-_FAR, _FAR)
    b = torch.where(start > 0, start - 1, torch.where(start < 0, n + start, -1))
    if length is None:
        lo, hi = b, n
    else:
        length = length.clamp(-_FAR, _FAR)
        lo = torch.where(length >= 0, b, b + length)
        hi = torch.where(length >= 0, b + length, b)
    lo = torch.minimum(lo.clamp(min=0), n)
    hi = torch.minimum(hi.clamp(min=0), n)
    return lo, torch.maximum(hi, lo)


def _slice(p: Pieces, start: torch.Tensor, length: torch.Tensor | None) -> Dictionary:
    """SUBSTRING of each piece, as a new dictionary (one entry per piece)."""
    n = count_chars(p)
    lo, hi = _char_bounds(n, start, length)
    return _dictionary_of(slice_chars(p, lo, hi, n))


def slice_chars(p: Pieces, lo: torch.Tensor, hi: torch.Tensor, n: torch.Tensor | None = None) -> Pieces:
    """Code points [lo, hi) of each piece (0 <= lo <= hi <= its code points
    ``n``), as pieces of the same buffer: no bytes move.

    >>> from glint.kernels.strings.pieces import to_pylist
    >>> to_pylist(slice_chars(from_strings(["héllo", "ab"]), torch.tensor([1, 0]), torch.tensor([3, 1])))
    ['él', 'a']
    """
    if n is None:
        n = count_chars(p)
    wide = (n != p.lengths).nonzero().squeeze(1)  # pieces with multi-byte code points
    if wide.numel():
        sub = p.take(wide)
        lo, hi = lo.clone(), hi.clone()
        lo[wide], hi[wide] = char_to_byte(sub, lo[wide]), char_to_byte(sub, hi[wide])
    return Pieces(p.data, p.starts + lo, hi - lo)


_LIMIT_U32 = (1 << 32) - 1


def check_substring_range(start: torch.Tensor | int, length: torch.Tensor | int | None, valid) -> None:
    """DuckDB's limits: a SUBSTRING offset or length above 2**32 - 1 (in a
    non-NULL row) is an error."""
    for x, what in ((start, "offset"), (length, "length")):
        if x is None:
            continue
        if isinstance(x, int):
            bad = x > _LIMIT_U32 and (valid is None or bool(valid.any()))
        else:
            over = x > _LIMIT_U32
            bad = bool((over if valid is None else over & valid).any())
        if bad:
            raise ExecutionError(f"Out of Range Error: Substring {what} outside of supported range (> {_LIMIT_U32})")


def substring(col: Column, start: int | Column, length: int | Column | None = None) -> Column:
    """SUBSTRING(s, start[, length]) in code points, with DuckDB's rules for
    start <= 0 and negative lengths. ``start`` and ``length`` may be integer
    columns (then each row is sliced by its own bounds).

    >>> c = Column.from_arrow(pa.array(["hello", "héllo"]))
    >>> [substring(c, s, n).to_arrow().to_pylist() for s, n in ((0, 2), (-2, 2), (3, -2), (2, None))]
    [['h', 'h'], ['lo', 'lo'], ['he', 'hé'], ['ello', 'éllo']]
    >>> substring(c, Column.from_arrow(pa.array([2, None])), 2).to_arrow().to_pylist()
    ['el', None]
    """
    col = require_varchar(col, "SUBSTRING")
    if not isinstance(start, Column) and not isinstance(length, Column):
        if len(col):
            check_substring_range(start, length, col.valid)
        col = col.compact()
        p = col.dictionary.pieces()
        full = lambda v: torch.full((len(p),), int(v), dtype=torch.int64, device=col.device)  # noqa: E731
        d = _slice(p, full(start), None if length is None else full(length))
        return Column(T.VARCHAR, col.data, col.valid, d)
    n, device = len(col), col.device
    valid = col.valid
    bounds = []
    for x in (start, length):
        if x is None:
            bounds.append(None)
        elif isinstance(x, Column):
            if not x.dtype.is_integer:
                raise TypeMismatch(f"SUBSTRING position of type {x.dtype}")
            bounds.append(x.data.long())
            valid = and_valid(valid, x.valid)
        else:
            bounds.append(torch.full((n,), int(x), dtype=torch.int64, device=device))
    check_substring_range(bounds[0], bounds[1], valid)
    p = col.dictionary.pieces(col.data)
    if valid is not None:
        p = Pieces(p.data, p.starts, torch.where(valid, p.lengths, 0))
    return Column(T.VARCHAR, torch.arange(n, dtype=torch.int32, device=device), valid, _slice(p, *bounds))


# --------------------------------------------------------------------- concat
def join_pieces(parts: list[Pieces]) -> Dictionary:
    """Entry i = parts[0][i] + parts[1][i] + ... (every part has as many
    pieces), as a new dictionary."""
    bufs = list({id(p.data): p.data for p in parts}.values())
    base, at = {}, 0
    for b in bufs:
        base[id(b)] = at
        at += b.shape[0]
    data = bufs[0] if len(bufs) == 1 else torch.cat(bufs)
    starts = torch.stack([p.starts + base[id(p.data)] for p in parts], dim=1).reshape(-1)
    lengths = torch.stack([p.lengths for p in parts], dim=1).reshape(-1)
    offsets, out = gather(Pieces(data, starts, lengths))
    return Dictionary(offsets[:: len(parts)], out)


def concat(cols: list[Column], null_is_empty: bool = False) -> Column:
    """``a || b || ...`` (any NULL gives NULL) or, with ``null_is_empty``,
    CONCAT(a, b, ...) (NULLs count as ''). Non-VARCHAR inputs are cast to
    VARCHAR first. When every input but one holds a single string (a column
    and constants), the join is done once per entry of that one.

    >>> a = Column.from_arrow(pa.array(["x", None, "y"]))
    >>> concat([a, Column.from_arrow(pa.array(["1", "2", "3"]))]).to_arrow().to_pylist()
    ['x1', None, 'y3']
    """
    if not cols:
        raise ValueError("concat of no columns")
    strs = [to_varchar(c) for c in cols]
    if len(strs) == 1 and not null_is_empty:
        return strs[0]
    n, device = len(strs[0]), strs[0].device
    if n == 0:
        return Column(
            T.VARCHAR, torch.zeros(0, dtype=torch.int32, device=device), None, Dictionary.from_pylist([""], device)
        )
    valid = None
    if not null_is_empty:
        for c in strs:
            valid = and_valid(valid, c.valid)
    strs = [c.compact() for c in strs]
    varying = [c for c in strs if len(c.dictionary) > 1]
    if len(varying) <= 1 and (not null_is_empty or all(c.valid is None for c in strs)):
        # constants around (at most) one column: join once per entry of that column
        v = varying[0] if varying else strs[0]
        k = len(v.dictionary)
        parts = [
            c.dictionary.pieces() if c is v else c.dictionary.pieces(torch.zeros(k, dtype=torch.int64, device=device))
            for c in strs
        ]
        return Column(
            T.VARCHAR,
            v.data if varying else torch.zeros(n, dtype=torch.int32, device=device),
            valid,
            join_pieces(parts),
        )
    parts = []
    for c in strs:
        p = c.dictionary.pieces(c.data)
        if c.valid is not None:  # NULL: '' for CONCAT; for || the row is NULL anyway
            p = Pieces(p.data, p.starts, torch.where(c.valid, p.lengths, 0))
        parts.append(p)
    return Column(T.VARCHAR, torch.arange(n, dtype=torch.int32, device=device), valid, join_pieces(parts))
