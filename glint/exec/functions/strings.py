"""String functions on dictionary-encoded VARCHAR columns.

A VARCHAR column is int32 codes into a sorted, duplicate-free host-side
:class:`Dictionary`. Every function here does its string work once per
*dictionary entry* on the host (pyarrow.compute / numpy), moves the per-entry
result to the column's device and gathers it by the row codes; the rows
themselves are only touched by torch ops. A result that is itself a string is
re-encoded into a new sorted dictionary, so the output is again a valid
VARCHAR column.

Semantics follow DuckDB: NULL in gives NULL out (CONCAT() excepted), lengths
and positions count Unicode code points, LIKE has no escape character unless
one is given.

>>> c = Column.from_arrow(pa.array(["Hello", None, "world", ""]))
>>> upper(c).to_arrow().to_pylist()
['HELLO', None, 'WORLD', '']
>>> like(c, "%o%").to_arrow().to_pylist()
[True, None, True, False]
>>> substring(c, 2, 3).to_arrow().to_pylist()
['ell', None, 'orl', '']
>>> concat([c, Column.from_arrow(pa.array([1, 2, None, 4]))], null_is_empty=True).to_arrow().to_pylist()
['Hello1', '2', 'world', '4']
"""
from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Callable

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from ... import types as T
from ...errors import ExecutionError, NotSupported, TypeMismatch
from ...storage.column import Column, Dictionary
from ...types import DataType
from . import dates

# DuckDB's trim() strips Unicode space separators (category Zs), not tabs or newlines.
_SPACE_SEPARATORS = "\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
# CAST(VARCHAR AS number) ignores ASCII whitespace around the number.
_ASCII_WS = " \t\n\v\f\r"


# ------------------------------------------------------------ dictionary plumbing
def _require_varchar(col: Column, what: str) -> Column:
    """The column as VARCHAR: a bare-NULL column becomes an all-NULL VARCHAR one."""
    if col.dtype.kind == "NULL":
        return Column.nulls(T.VARCHAR, len(col), col.device)
    if not col.dtype.is_string:
        raise TypeMismatch(f"{what} expects VARCHAR, got {col.dtype}")
    return col


def _row_codes(col: Column) -> torch.Tensor:
    """int64 row codes, safe to gather with: NULL rows may hold any code."""
    codes = col.data.long()
    if col.valid is not None and len(col.dictionary):
        codes = codes.clamp(0, len(col.dictionary) - 1)
    return codes


def _and_valid(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    if a is None:
        return b
    return a if b is None else a & b


def _gather_entries(col: Column, entries: torch.Tensor,
                    entry_valid: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-dictionary-entry values (host tensors) gathered to the column's rows."""
    n = len(col)
    if len(entries) == 0:           # empty dictionary: every row is NULL (or there are none)
        return torch.zeros(n, dtype=entries.dtype, device=col.device), torch.zeros(n, dtype=torch.bool, device=col.device)
    codes = _row_codes(col)
    data = entries.to(col.device)[codes]
    valid = col.valid
    if entry_valid is not None:
        valid = _and_valid(valid, entry_valid.to(col.device)[codes])
    return data, valid


def _host_valid(arr: pa.Array) -> torch.Tensor | None:
    if arr.null_count == 0:
        return None
    return torch.from_numpy(arr.is_valid().to_numpy(zero_copy_only=False).copy())


def _recode(col: Column, strings: pa.Array) -> Column:
    """The column with each entry replaced by strings[entry], re-encoded."""
    d, codes, valid = Dictionary.encode(strings)
    data, row_valid = _gather_entries(col, torch.from_numpy(codes.copy()),
                                      None if valid is None else torch.from_numpy(valid.copy()))
    if len(d) == 0:
        d = Dictionary(pa.array([], pa.string()))
    return Column(T.VARCHAR, data.to(torch.int32), row_valid, d)


def _arrow_result_type(t: pa.DataType) -> tuple[DataType, np.dtype, object]:
    if pa.types.is_boolean(t):
        return T.BOOLEAN, np.bool_, False
    if pa.types.is_integer(t):
        return T.BIGINT, np.int64, 0
    if pa.types.is_floating(t):
        return T.DOUBLE, np.float64, 0.0
    raise NotSupported(f"string function result of Arrow type {t}")


def _text(values: pa.Array) -> pa.Array:
    """Dictionary text with 32-bit offsets when it fits (kernels mixing it with
    other strings expect one string type); 64-bit only when it must."""
    if pa.types.is_large_string(values.type) and values.nbytes < (1 << 31) - 1:
        return values.cast(pa.string())
    return values


def _is_string_type(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


PARALLEL_MIN = 1 << 18       # dictionary entries from which element-wise work is split over threads


def parallel_apply(fn: Callable[[pa.Array], pa.Array], values: pa.Array) -> pa.Array:
    """fn over slices of `values` on a thread pool (Arrow's compute kernels
    release the GIL; many, such as regular-expression matching, are
    single-threaded), concatenated in order. fn must be element-wise.

    >>> v = pa.array([str(i) for i in range(10)])
    >>> parallel_apply(pc.utf8_length, v).to_pylist() == pc.utf8_length(v).to_pylist()
    True
    """
    n = len(values)
    workers = min(os.cpu_count() or 1, 32)
    if n < PARALLEL_MIN or workers < 2:
        return fn(values)
    step = -(-n // (workers * 4))
    slices = [values.slice(i, step) for i in range(0, n, step)]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(fn, slices))
    parts = [p.combine_chunks() if isinstance(p, pa.ChunkedArray) else p for p in parts]
    if len({p.type for p in parts}) > 1:
        parts = [p.cast(pa.large_string()) if _is_string_type(p.type) else p for p in parts]
    return pa.concat_arrays(parts)


def map_dictionary(col: Column, fn: Callable[[pa.Array], pa.Array]) -> Column:
    """Apply ``fn`` to the dictionary entries and gather the results by code.

    String results make a new VARCHAR column (sorted, deduplicated dictionary);
    boolean, integer and float results become BOOLEAN, BIGINT and DOUBLE. A NULL
    from ``fn`` makes those rows NULL.

    >>> c = Column.from_arrow(pa.array(["b", "a", None, "b"]))
    >>> map_dictionary(c, pc.utf8_length).to_arrow().to_pylist()
    [1, 1, None, 1]
    >>> r = map_dictionary(c, lambda v: pc.binary_join_element_wise("x", v, ""))
    >>> r.dictionary.values.to_pylist(), r.to_arrow().to_pylist()
    (['xa', 'xb'], ['xb', 'xa', None, 'xb'])
    """
    col = _require_varchar(col, "string function")
    out = parallel_apply(fn, _text(col.dictionary.values))
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks() if out.num_chunks != 1 else out.chunk(0)
    if _is_string_type(out.type):
        return _recode(col, out)
    dtype, npt, fill = _arrow_result_type(out.type)
    values = np.array(out.fill_null(fill).to_numpy(zero_copy_only=False), dtype=npt)  # a writable copy
    data, valid = _gather_entries(col, torch.from_numpy(values), _host_valid(out))
    return Column(dtype, data, valid)


# ---------------------------------------------------------------------- LIKE
_ANY, _ONE = "%", "_"


def _like_tokens(pattern: str, escape: str | None) -> list[tuple[str, str]]:
    """Pattern as [(kind, text)] with kind 'L' (literal), '%' or '_'; runs of
    '%' collapse into one and escaped characters become literals."""
    if escape is not None and len(escape) > 1:
        raise ExecutionError(f"LIKE escape string must be empty or one character, got '{escape}'")
    esc = escape or None
    tokens: list[tuple[str, str]] = []
    lit: list[str] = []

    def flush() -> None:
        if lit:
            tokens.append(("L", "".join(lit)))
            lit.clear()

    i = 0
    while i < len(pattern):         # over the pattern's characters, not rows
        ch = pattern[i]
        if ch == esc:
            if i + 1 == len(pattern):
                raise ExecutionError(f"LIKE pattern must not end with the escape character: '{pattern}'")
            lit.append(pattern[i + 1])
            i += 2
            continue
        if ch in (_ANY, _ONE):
            flush()
            if not (ch == _ANY and tokens and tokens[-1][0] == _ANY):
                tokens.append((ch, ch))
        else:
            lit.append(ch)
        i += 1
    flush()
    return tokens


def _like_regex(tokens: list[tuple[str, str]]) -> str:
    body = "".join(re.escape(t) if k == "L" else (".*" if k == _ANY else ".") for k, t in tokens)
    return "(?s)^" + body + "$"          # (?s): '%' and '_' match newlines too


def _like_matcher(tokens: list[tuple[str, str]]) -> Callable[[pa.Array], pa.Array]:
    """A vectorised matcher, using plain substring kernels where the pattern's
    shape allows and an anchored regex otherwise."""
    shape = "".join(k for k, _ in tokens)
    lits = [t for k, t in tokens if k == "L"]
    if shape == "":
        return lambda v: pc.equal(v, "")
    if shape == "%":
        return lambda v: pc.is_valid(v)
    if shape == "L":
        return lambda v: pc.equal(v, lits[0])
    if shape == "L%":
        return lambda v: pc.starts_with(v, lits[0])
    if shape == "%L":
        return lambda v: pc.ends_with(v, lits[0])
    if shape == "%L%":
        return lambda v: pc.match_substring(v, lits[0])
    regex = _like_regex(tokens)
    return lambda v: pc.match_substring_regex(v, regex)


def _lower_scalar(s: str) -> str:
    """Lower-case with the same (utf8proc) mapping used for the values."""
    return pc.utf8_lower(pa.scalar(s, pa.string())).as_py()


def like(col: Column, pattern: str, escape: str | None = None, case_insensitive: bool = False) -> Column:
    """col [I]LIKE pattern [ESCAPE escape] -> BOOLEAN.

    ``%`` matches any run of characters (newlines included), ``_`` exactly one
    code point. There is no escape character unless one is given; a pattern
    ending in a lone escape character is an error. ILIKE lower-cases both
    sides (as DuckDB does) before matching.

    >>> c = Column.from_arrow(pa.array(["a%b", "axb", "A.B", None]))
    >>> like(c, "a\\\\%b", escape="\\\\").to_arrow().to_pylist()
    [True, False, False, None]
    >>> like(c, "a_b", case_insensitive=True).to_arrow().to_pylist()
    [True, True, True, None]
    >>> like(c, "a.b").to_arrow().to_pylist()
    [False, False, False, None]
    """
    col = _require_varchar(col, "LIKE")
    tokens = _like_tokens(pattern, escape)
    if case_insensitive:
        tokens = [(k, _lower_scalar(t) if k == "L" else t) for k, t in tokens]
        match = _like_matcher(tokens)
        return map_dictionary(col, lambda v: match(pc.utf8_lower(v)))
    return map_dictionary(col, _like_matcher(tokens))


# ------------------------------------------------------------ simple functions
def _slice_bounds(start: int, length: int | None) -> tuple[int, int | None]:
    """Python-slice bounds equal to DuckDB's SUBSTRING(s, start, length).

    DuckDB: a positive start is 1-based, start 0 sits one before the first
    character, a negative start counts from the end; a negative length takes
    the characters *before* the start. The range is clipped to the string
    afterwards. Negative Python indices reproduce the from-the-end cases.
    """
    if start >= 0:
        b = start - 1
        if length is None:
            return max(b, 0), None
        lo, hi = (b, b + length) if length >= 0 else (b + length, b)
        return max(lo, 0), max(hi, 0)
    if length is None:
        return start, None
    if length >= 0:
        return start, (None if start + length >= 0 else start + length)
    return start + length, start


def substring(col: Column, start: int | Column, length: int | Column | None = None) -> Column:
    """SUBSTRING(s, start[, length]) in code points, with DuckDB's rules for
    start <= 0 and negative lengths. ``start`` and ``length`` are usually
    constants; integer columns work too (each distinct (string, start,
    length) row is then sliced once).

    >>> c = Column.from_arrow(pa.array(["hello", "héllo"]))
    >>> [substring(c, s, n).to_arrow().to_pylist() for s, n in ((0, 2), (-2, 2), (3, -2), (2, None))]
    [['h', 'h'], ['lo', 'lo'], ['he', 'hé'], ['ello', 'éllo']]
    >>> substring(c, Column.from_arrow(pa.array([2, None])), 2).to_arrow().to_pylist()
    ['el', None]
    """
    if isinstance(start, Column) or isinstance(length, Column):
        return _substring_rows(_require_varchar(col, "SUBSTRING"), start, length)
    lo, hi = _slice_bounds(int(start), None if length is None else int(length))
    return map_dictionary(col, lambda v: pc.utf8_slice_codeunits(v, lo, hi))


def _char_bounds(n_chars: np.ndarray, start: np.ndarray, length: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """[lo, hi) code-point bounds of SUBSTRING, elementwise (see _slice_bounds)."""
    b = np.where(start > 0, start - 1, np.where(start < 0, n_chars + start, -1))
    if length is None:
        lo, hi = b, n_chars
    else:
        lo, hi = np.where(length >= 0, b, b + length), np.where(length >= 0, b + length, b)
    lo, hi = np.clip(lo, 0, n_chars), np.clip(hi, 0, n_chars)
    return lo, np.maximum(hi, lo)


def _slice_chars(strings: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> pa.Array:
    """strings[i][lo[i]:hi[i]] for all i at once, through a fixed-width UTF-32
    view (numpy's 'U' dtype). Only sees strings without trailing NUL characters."""
    if len(strings) == 0 or int((hi - lo).max()) <= 0:
        return pa.array([""] * len(strings), pa.string())
    u = np.array(strings.tolist(), dtype=str)
    points = u.view(np.uint32).reshape(len(u), -1)
    width = int((hi - lo).max())
    pos = lo[:, None] + np.arange(width)
    out = np.take_along_axis(points, np.minimum(pos, points.shape[1] - 1), axis=1)
    out[pos >= hi[:, None]] = 0     # NUL padding, which numpy strips
    return pa.array(np.ascontiguousarray(out).view(f"<U{width}").ravel().astype(object), pa.string())


def _int_rows(x: int | Column, n: int, device) -> tuple[torch.Tensor, torch.Tensor | None]:
    if isinstance(x, Column):
        if not x.dtype.is_integer:
            raise TypeMismatch(f"SUBSTRING position of type {x.dtype}")
        return x.data.long(), x.valid
    return torch.full((n,), int(x), dtype=torch.int64, device=device), None


def _substring_rows(col: Column, start: int | Column, length: int | Column | None) -> Column:
    n, device = len(col), col.device
    keys, valid = [_row_codes(col)], col.valid
    for x in (start, length) if length is not None else (start,):
        data, v = _int_rows(x, n, device)
        keys.append(data.to(device))
        valid = _and_valid(valid, v)
    if valid is not None:           # NULL rows: one dummy key, not their garbage
        keys = [torch.where(valid, k, torch.zeros_like(k)) for k in keys]
    if len(col.dictionary) == 0 or n == 0:
        return Column.nulls(T.VARCHAR, n, device) if n else Column(T.VARCHAR, col.data, col.valid, col.dictionary)
    uniq, inverse = torch.unique(torch.stack(keys, dim=1), dim=0, return_inverse=True)
    u = uniq.cpu().numpy()
    n_chars = _np(pc.utf8_length(col.dictionary.values)).astype(np.int64)[u[:, 0]]
    lo, hi = _char_bounds(n_chars, u[:, 1], u[:, 2] if u.shape[1] > 2 else None)
    d, codes, _ = Dictionary.encode(_slice_chars(col.dictionary.np[u[:, 0]], lo, hi))
    rows = torch.from_numpy(codes.copy()).to(device)[inverse]
    return Column(T.VARCHAR, rows.to(torch.int32), valid, d)


def upper(col: Column) -> Column:
    return map_dictionary(col, pc.utf8_upper)


def lower(col: Column) -> Column:
    return map_dictionary(col, pc.utf8_lower)


def length(col: Column) -> Column:
    """Number of code points (DuckDB's length), as BIGINT."""
    return map_dictionary(col, lambda v: pc.cast(pc.utf8_length(v), pa.int64()))


def trim(col: Column) -> Column:
    """Strip Unicode space separators from both ends (tabs and newlines stay)."""
    return map_dictionary(col, lambda v: pc.utf8_trim(v, _SPACE_SEPARATORS))


def ltrim(col: Column) -> Column:
    return map_dictionary(col, lambda v: pc.utf8_ltrim(v, _SPACE_SEPARATORS))


def rtrim(col: Column) -> Column:
    return map_dictionary(col, lambda v: pc.utf8_rtrim(v, _SPACE_SEPARATORS))


def replace(col: Column, old: str, new: str) -> Column:
    """REPLACE(s, old, new): every non-overlapping occurrence, left to right;
    an empty ``old`` leaves the string unchanged (DuckDB)."""
    if old == "":
        return _require_varchar(col, "REPLACE")
    return map_dictionary(col, lambda v: pc.replace_substring(v, old, new))


def starts_with(col: Column, prefix: str) -> Column:
    return map_dictionary(col, lambda v: pc.starts_with(v, prefix))


def contains(col: Column, s: str) -> Column:
    return map_dictionary(col, lambda v: pc.match_substring(v, s))


def strpos(col: Column, s: str) -> Column:
    """1-based code-point position of the first ``s`` (0 if absent; 1 for '').

    >>> strpos(Column.from_arrow(pa.array(["héllo", "abc"])), "l").to_arrow().to_pylist()
    [3, 0]
    """
    def position(v: pa.Array) -> pa.Array:
        if s == "":
            return pa.array(np.ones(len(v), dtype=np.int64))
        # the text before the first match, counted in code points
        parts = pc.split_pattern(v, s, max_splits=1)
        found = pc.equal(pc.list_value_length(parts), 2)
        before = pc.utf8_length(pc.list_element(parts, 0))
        return pc.if_else(found, pc.add(pc.cast(before, pa.int64()), 1), pa.scalar(0, pa.int64()))
    return map_dictionary(col, position)


# -------------------------------------------------------------- dictionaries
def unify(a: Column, b: Column) -> tuple[Column, Column]:
    """Re-code two VARCHAR columns onto one shared dictionary, so their codes
    compare as their strings do.

    >>> a, b = unify(Column.from_arrow(pa.array(["x", "a"])), Column.from_arrow(pa.array(["m"])))
    >>> a.dictionary is b.dictionary, a.data.tolist(), b.data.tolist()
    (True, [2, 0], [1])
    """
    a, b = _require_varchar(a, "unify"), _require_varchar(b, "unify")
    if a.dictionary is b.dictionary:
        return a, b
    d, ma, mb = a.dictionary.merge(b.dictionary)
    return _remap(a, d, ma), _remap(b, d, mb)


def unify_many(cols: list[Column]) -> list[Column]:
    """:func:`unify` for any number of VARCHAR columns."""
    cols = [_require_varchar(c, "unify") for c in cols]
    if len(cols) <= 1 or all(c.dictionary is cols[0].dictionary for c in cols):
        return list(cols)
    dicts = list({id(c.dictionary): c.dictionary for c in cols}.values())
    big = sum(d.values.nbytes for d in dicts) >= (1 << 31) - 1
    merged = pc.unique(pa.concat_arrays([d.values.cast(pa.large_string() if big else pa.string()) for d in dicts]))
    d = Dictionary(merged.take(pc.sort_indices(merged)))
    maps = {id(x): np.searchsorted(d.np, x.np).astype(np.int32) for x in dicts}
    return [_remap(c, d, maps[id(c.dictionary)]) for c in cols]


def _remap(col: Column, d: Dictionary, code_map: np.ndarray) -> Column:
    if len(code_map) == len(d):     # same entries: the codes stay as they are
        return Column(T.VARCHAR, col.data, col.valid, d)
    if len(code_map) == 0:
        return Column(T.VARCHAR, torch.zeros_like(col.data), col.valid, d)
    data, _ = _gather_entries(col, torch.from_numpy(np.ascontiguousarray(code_map, dtype=np.int32)), None)
    return Column(T.VARCHAR, data, col.valid, d)


def from_python(values: list[str | None], device="cpu") -> Column:
    """A VARCHAR column from Python strings (None = NULL).

    >>> from_python(["b", None, "a"]).to_arrow().to_pylist()
    ['b', None, 'a']
    """
    return Column.from_arrow(pa.array(values, pa.string()), T.VARCHAR).to(device)


# ------------------------------------------------------------- CAST to VARCHAR
def _format_doubles(v: np.ndarray) -> pa.Array:
    # numpy prints float64 like Python's repr, which is also DuckDB's format
    # ('1.0', '0.1', '1e+16', '1e-05', 'inf', 'nan'); a NaN with the sign bit set is '-nan'.
    out = v.astype(str).astype(object)
    out[np.isnan(v) & np.signbit(v)] = "-nan"
    return pa.array(out, pa.string())


def format_values(dtype: DataType, data: torch.Tensor) -> pa.Array:
    """Strings for (host or device) values of a non-VARCHAR type, printed as
    DuckDB's CAST(x AS VARCHAR) prints them."""
    host = data.cpu()
    kind = dtype.kind
    if kind == "DATE":
        return dates.format_dates(host)
    if kind == "DOUBLE":
        return _format_doubles(host.numpy())
    if kind in ("BOOLEAN", "INTEGER", "BIGINT"):
        return pc.cast(pa.array(host.numpy()), pa.string())
    if kind in ("DECIMAL", "HUGEINT"):
        return pc.cast(Column(dtype, host).to_arrow(), pa.string())
    raise NotSupported(f"CAST({dtype} AS VARCHAR)")


def to_varchar(col: Column) -> Column:
    """CAST(col AS VARCHAR): format each distinct value once on the host.

    >>> import decimal
    >>> c = Column.from_arrow(pa.array([decimal.Decimal("12.50"), None, decimal.Decimal("-0.05")], pa.decimal128(15, 2)))
    >>> to_varchar(c).to_arrow().to_pylist()
    ['12.50', None, '-0.05']
    >>> to_varchar(Column.from_arrow(pa.array([0.1, 1e20, 1.0, 3.0]))).to_arrow().to_pylist()
    ['0.1', '1e+20', '1.0', '3.0']
    """
    if col.dtype.is_string:
        return col
    if col.dtype.kind == "NULL":
        return Column.nulls(T.VARCHAR, len(col), col.device)
    data = col.data
    if col.valid is not None:       # NULL rows hold arbitrary values: don't format them
        keep = col.valid if data.dim() == 1 else col.valid[:, None]
        data = torch.where(keep, data, torch.zeros_like(data))
    if data.dtype == torch.float64:     # by bit pattern: -0.0 prints apart from 0.0
        uniq, inverse = torch.unique(data.view(torch.int64), return_inverse=True)
        uniq = uniq.view(torch.float64)
    elif data.dim() == 1:
        uniq, inverse = torch.unique(data, return_inverse=True)
    else:
        uniq, inverse = torch.unique(data, dim=0, return_inverse=True)
    d, codes, _ = Dictionary.encode(format_values(col.dtype, uniq))
    rows = torch.from_numpy(codes.copy()).to(col.device)[inverse]
    return Column(T.VARCHAR, rows.to(torch.int32), col.valid, d)


# ------------------------------------------------------------------- concat
def _combination_keys(codes: list[torch.Tensor], radices: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Distinct rows of the stacked codes (as an (u, k) host array) and each
    row's index into them. A mixed-radix int64 key when it fits, else a
    row-wise unique."""
    total = 1
    for r in radices:
        total *= r
    if total < 2**62:
        key = torch.zeros_like(codes[0])
        stride = 1
        strides = []
        for c, r in zip(codes, radices):
            key = key + c * stride
            strides.append(stride)
            stride *= r
        uniq, inverse = torch.unique(key, return_inverse=True)
        u = uniq.cpu().numpy()
        combos = np.stack([(u // s) % r for s, r in zip(strides, radices)], axis=1) if len(u) else \
            np.zeros((0, len(codes)), np.int64)
        return torch.from_numpy(combos), inverse
    uniq, inverse = torch.unique(torch.stack(codes, dim=1), dim=0, return_inverse=True)
    return uniq.cpu(), inverse


def concat(cols: list[Column], null_is_empty: bool = False) -> Column:
    """``a || b || ...`` (any NULL gives NULL) or, with ``null_is_empty``,
    CONCAT(a, b, ...) (NULLs count as ''). Non-VARCHAR inputs are cast to
    VARCHAR first. Each distinct combination of inputs is joined once.

    >>> a = Column.from_arrow(pa.array(["x", None, "y"]))
    >>> concat([a, Column.from_arrow(pa.array(["1", "2", "3"]))]).to_arrow().to_pylist()
    ['x1', None, 'y3']
    """
    if not cols:
        raise ValueError("concat of no columns")
    strs = [to_varchar(c) for c in cols]
    if len(strs) == 1 and not null_is_empty:
        return strs[0]
    device = strs[0].device
    codes, radices, tables = [], [], []
    valid = None
    for c in strs:
        k = len(c.dictionary)
        code = _row_codes(c)
        if c.valid is not None:     # NULL -> an extra '' entry at index k
            code = torch.where(c.valid, code, torch.full_like(code, k))
            valid = _and_valid(valid, c.valid)
        codes.append(code.to(device))
        radices.append(k + 1)
        tables.append(pa.concat_arrays([c.dictionary.values.cast(pa.string()), pa.array([""], pa.string())]))
    combos, inverse = _combination_keys(codes, radices)
    parts = [t.take(pa.array(combos[:, i].numpy())) for i, t in enumerate(tables)]
    joined = pc.binary_join_element_wise(*parts, "")
    d, entry_codes, _ = Dictionary.encode(joined)
    rows = torch.from_numpy(entry_codes.copy()).to(device)[inverse] if len(entry_codes) else \
        torch.zeros(len(inverse), dtype=torch.int32, device=device)
    return Column(T.VARCHAR, rows.to(torch.int32), None if null_is_empty else valid, d)


# ----------------------------------------------------------- CAST from VARCHAR
_NUMBER_RE = (r"^[ \t\n\v\f\r]*(?P<sign>[+-]?)(?P<int>[0-9]+(?:_[0-9]+)*)?(?:\.(?P<frac>[0-9]*))?"
              r"(?:[eE](?P<exp>[+-]?[0-9]+))?[ \t\n\v\f\r]*$")
# DuckDB skips one leading '+' before parsing a double, so '+-1' is -1.
_DOUBLE_RE = (r"(?i)^[ \t\n\v\f\r]*(?:\+-|[+-])?(?:inf|infinity|nan|(?:[0-9]+(?:_[0-9]+)*(?:\.[0-9]*)?|\.[0-9]+)"
              r"(?:e[+-]?[0-9]+)?)[ \t\n\v\f\r]*$")
_RADIX_RE = r"^[ \t\n\v\f\r]*0(?:[xX][0-9a-fA-F]+|[bB][01]+)[ \t\n\v\f\r]*$"
_NUMPY = {torch.bool: np.bool_, torch.int32: np.int32, torch.int64: np.int64, torch.float64: np.float64}
_TRUE = ["true", "t", "yes", "y", "1"]
_FALSE = ["false", "f", "no", "n", "0"]


def _duck_type_name(dtype: DataType) -> str:
    return {"INTEGER": "INT32", "BIGINT": "INT64", "BOOLEAN": "BOOL"}.get(dtype.kind, str(dtype))


def _np(a: pa.Array) -> np.ndarray:
    return a.to_numpy(zero_copy_only=False)


def _exact_scaled(text: str, scale: int, allow_radix: bool) -> int | None:
    """value * 10**scale rounded half away from zero, for the rare entries the
    vectorised path leaves (exponents, long digit strings, 0x/0b)."""
    t = text.strip(_ASCII_WS)
    if allow_radix and re.fullmatch(r"0[xXbB][0-9a-fA-F]+", t):
        try:
            return int(t, 0)
        except ValueError:
            return None
    try:
        v = Decimal(t.replace("_", ""))
    except InvalidOperation:
        return None
    if not v.is_finite():
        return None
    if v.is_zero() or v.adjusted() + scale < -2:
        return 0
    if v.adjusted() + scale > 40:
        return None                 # overflows any target
    with localcontext() as ctx:
        ctx.prec = 100
        return int(v.scaleb(scale).to_integral_value(ROUND_HALF_UP))


def _parse_scaled(v: pa.Array, scale: int, lo: int, hi: int, allow_radix: bool) -> tuple[np.ndarray, np.ndarray]:
    """Parse decimal strings to int64 values scaled by 10**scale, rounding half
    away from zero (DuckDB casts '2.5' to INTEGER 3): (values, ok), where ok
    also requires lo <= value <= hi. Plain numbers of at most 18 digits are
    parsed vectorised; the rest fall back to :func:`_exact_scaled`."""
    n = len(v)
    parts = pc.extract_regex(v, _NUMBER_RE)
    matched = _np(parts.is_valid())
    sign, ip, fp, ex = (pc.struct_field(parts, f).fill_null("") for f in ("sign", "int", "frac", "exp"))
    ip = pc.replace_substring(ip, "_", "")
    syntax_ok = matched & (_np(pc.add(pc.utf8_length(ip), pc.utf8_length(fp))) > 0)
    kept = pc.utf8_rpad(pc.utf8_slice_codeunits(fp, 0, scale), scale, "0") if scale else pa.array([""] * n, pa.string())
    round_up = _np(pc.greater_equal(pc.utf8_slice_codeunits(fp, scale, scale + 1), "5"))
    digits = pc.utf8_ltrim(pc.binary_join_element_wise(ip, kept, ""), "0")
    fast = syntax_ok & _np(pc.equal(ex, "")) & (_np(pc.utf8_length(digits)) <= 18)
    digits = pc.if_else(pa.array(fast, pa.bool_()), pc.if_else(pc.equal(digits, ""), "0", digits), "0")
    mag = _np(pc.cast(digits, pa.int64())).astype(np.int64) + round_up
    values = np.where(_np(pc.equal(sign, "-")), -mag, mag)
    ok = fast & (values >= lo) & (values <= hi)
    slow = syntax_ok & ~fast
    if allow_radix:
        slow |= _np(pc.match_substring_regex(v, _RADIX_RE))
    for i in np.flatnonzero(slow):  # rare entries: exponents, > 18 digits, 0x / 0b
        r = _exact_scaled(v[i].as_py(), scale, allow_radix)
        if r is not None and lo <= r <= hi:
            values[i], ok[i] = r, True
    return np.where(ok, values, 0), ok


def _parse_entries(v: pa.Array, dtype: DataType) -> tuple[np.ndarray, np.ndarray]:
    """Per-dictionary-entry parse: (values as numpy of the target layout, ok)."""
    kind = dtype.kind
    if kind == "BOOLEAN":
        low = pc.utf8_lower(v)
        t, f = _np(pc.is_in(low, pa.array(_TRUE))), _np(pc.is_in(low, pa.array(_FALSE)))
        return t, t | f
    if kind in ("INTEGER", "BIGINT"):
        bits = 31 if kind == "INTEGER" else 63
        return _parse_scaled(v, 0, -(2**bits), 2**bits - 1, allow_radix=True)
    if kind == "DECIMAL":
        bound = 10**dtype.precision - 1
        return _parse_scaled(v, dtype.scale, -bound, bound, allow_radix=False)
    if kind == "DOUBLE":
        ok = _np(pc.match_substring_regex(v, _DOUBLE_RE))
        text = pc.replace_substring_regex(pc.utf8_trim(v, _ASCII_WS), r"^\+-", "-")
        text = np.where(ok, np.asarray(_np(text), dtype=object), "0")
        return text.astype(np.float64) if len(text) else np.zeros(0), ok
    if kind == "DATE":
        return dates.parse_dates(v)
    raise NotSupported(f"CAST(VARCHAR AS {dtype})")


def from_varchar(col: Column, dtype: DataType) -> Column:
    """CAST(col AS dtype) for a VARCHAR column: each dictionary entry is parsed
    once; a value that does not parse (and is used by a non-NULL row) raises
    like DuckDB ("Could not convert string 'abc' to INT32").

    >>> c = Column.from_arrow(pa.array([" 12 ", "2.5", None, "1e3"]))
    >>> from_varchar(c, T.INTEGER).to_arrow().to_pylist()
    [12, 3, None, 1000]
    >>> from_varchar(Column.from_arrow(pa.array(["abc"])), T.INTEGER)
    Traceback (most recent call last):
    ...
    glint.errors.ExecutionError: Could not convert string 'abc' to INT32
    """
    col = _require_varchar(col, "CAST")
    if dtype.is_string:
        return col
    values, ok = _parse_entries(_text(col.dictionary.values), dtype)
    entries = torch.from_numpy(np.ascontiguousarray(values, dtype=_NUMPY[dtype.torch_dtype]))
    data, valid = _gather_entries(col, entries, None)
    if not ok.all():
        bad, _ = _gather_entries(col, torch.from_numpy(~ok), None)
        if valid is not None:
            bad = bad & valid
        if bool(bad.any()):
            code = int(_row_codes(col)[bad.nonzero()[0, 0]])
            raise ExecutionError(f"Could not convert string '{col.dictionary.np[code]}' to {_duck_type_name(dtype)}")
    return Column(dtype, data, valid)
