"""String functions that run on the host, once per string: a column's
referenced strings are copied to the host as an Arrow array, pyarrow.compute
(or numpy) works on them, and the result comes back to the column's device.

This is the path for what has no device kernel yet and must keep DuckDB's
exact semantics: TRIM / LTRIM / RTRIM (Unicode space separators), REPLACE,
STRPOS, CAST to and from VARCHAR (number and date parsing and printing), and
the non-ASCII strings of UPPER / LOWER / ILIKE (utf8proc's case mapping).
The device functions are in :mod:`glint.functions.strings.core`.

When the dictionary has more entries than the column has rows, the column is
compacted first, so only strings some row uses travel.

>>> c = Column.from_arrow(pa.array([" a ", None, "b　"]))
>>> trim(c).to_arrow().to_pylist(), strpos(c, "b").to_arrow().to_pylist()
(['a', None, 'b'], [0, None, 1])
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from glint.columnar import timestamp_text
from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary
from glint.columnar.types import DataType
from glint.errors import ExecutionError, NotSupported, TypeMismatch
from glint.functions.dates import days as dates

# DuckDB's trim() strips Unicode space separators (category Zs), not tabs or newlines.
_SPACE_SEPARATORS = (
    "\u0020\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
# CAST(VARCHAR AS number) ignores ASCII whitespace around the number.
_ASCII_WS = " \t\n\v\f\r"


def require_varchar(col: Column, what: str) -> Column:
    """The column as VARCHAR: a bare-NULL column becomes an all-NULL VARCHAR one."""
    if col.dtype.kind == "NULL":
        return Column.nulls(T.VARCHAR, len(col), col.device)
    if not col.dtype.is_string:
        raise TypeMismatch(f"{what} expects VARCHAR, got {col.dtype}")
    return col


def and_valid(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    if a is None:
        return b
    return a if b is None else a & b


def _host_valid(arr: pa.Array) -> torch.Tensor | None:
    if arr.null_count == 0:
        return None
    return torch.from_numpy(arr.is_valid().to_numpy(zero_copy_only=False).copy())


def _arrow_result_type(t: pa.DataType) -> tuple[DataType, np.dtype, object]:
    if pa.types.is_boolean(t):
        return T.BOOLEAN, np.bool_, False
    if pa.types.is_integer(t):
        return T.BIGINT, np.int64, 0
    if pa.types.is_floating(t):
        return T.DOUBLE, np.float64, 0.0
    raise NotSupported(f"string function result of Arrow type {t}")


def _is_string_type(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


PARALLEL_MIN = 1 << 18  # dictionary entries from which element-wise work is split over threads


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


def host_strings(col: Column) -> tuple[Column, pa.Array]:
    """(the column, compacted when its dictionary has more entries than it has
    rows; its dictionary's entries as a host Arrow array). One
    device-to-host copy of the entries."""
    col = col.compact()
    return col, col.dictionary.to_arrow()


def map_dictionary(col: Column, fn: Callable[[pa.Array], pa.Array]) -> Column:
    """Apply ``fn`` (element-wise, Arrow in, Arrow out) on the host to the
    strings the column references, and bring the result back by code.

    String results make a new VARCHAR column over a dictionary of the results
    (codes unchanged); boolean, integer and float results become BOOLEAN,
    BIGINT and DOUBLE. A NULL from ``fn`` makes those rows NULL.

    >>> c = Column.from_arrow(pa.array(["b", "a", None, "b"]))
    >>> map_dictionary(c, pc.utf8_length).to_arrow().to_pylist()
    [1, 1, None, 1]
    >>> r = map_dictionary(c, lambda v: pc.binary_join_element_wise("x", v, ""))
    >>> r.to_arrow().to_pylist()
    ['xb', 'xa', None, 'xb']
    """
    col = require_varchar(col, "string function")
    col, values = host_strings(col)
    out = parallel_apply(fn, values)
    if isinstance(out, pa.ChunkedArray):
        out = out.combine_chunks() if out.num_chunks != 1 else out.chunk(0)
    codes = col.data.long()
    entry_valid = _host_valid(out)
    valid = col.valid
    if entry_valid is not None:
        valid = and_valid(valid, entry_valid.to(col.device)[codes])
    if _is_string_type(out.type):
        d = Dictionary.from_arrow(out).to(col.device) if len(out) else col.dictionary
        return Column(T.VARCHAR, col.data, valid, d)
    dtype, npt, fill = _arrow_result_type(out.type)
    values = np.array(out.fill_null(fill).to_numpy(zero_copy_only=False), dtype=npt)  # a writable copy
    return Column(dtype, torch.from_numpy(values).to(col.device)[codes], valid)


# ------------------------------------------------------ host string layout
def host_bytes(a: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 bytes, int64 offsets) of a host string array."""
    a = a.cast(pa.large_string()) if not pa.types.is_large_string(a.type) else a
    bufs = a.buffers()
    offs = np.frombuffer(bufs[1], dtype=np.int64)[a.offset : a.offset + len(a) + 1]
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    return data, offs


def splice(pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> pa.Array:
    """Strings made of pieces: element i is the concatenation over the
    pieces of data[start[i] : start[i] + length[i]] (all in numpy).

    >>> d = np.frombuffer(b"hello", dtype=np.uint8)
    >>> splice([(d, np.array([0, 1]), np.array([1, 2])), (d, np.array([4, 4]), np.array([1, 0]))]).to_pylist()
    ['ho', 'el']
    """
    n = len(pieces[0][1])
    bases, at = [], 0
    for data, _, _ in pieces:
        bases.append(at)
        at += len(data)
    buf = np.concatenate([p[0] for p in pieces]) if pieces else np.zeros(0, np.uint8)
    starts = np.stack([p[1] + b for p, b in zip(pieces, bases)], axis=1).reshape(-1)
    lengths = np.stack([p[2] for p in pieces], axis=1).reshape(-1)
    offs = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offs[1:])
    local = np.arange(offs[-1]) - np.repeat(offs[:-1], lengths)
    out = buf[np.repeat(starts, lengths) + local]
    row_offs = np.ascontiguousarray(offs[:: len(pieces)])
    return pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(row_offs), pa.py_buffer(out.tobytes())])


def lower_scalar(s: str) -> str:
    """Lower-case with the (utf8proc) mapping used for the values."""
    return pc.utf8_lower(pa.scalar(s, pa.string())).as_py()


def map_case(values: pa.Array, upper: bool) -> pa.Array:
    """Exact (utf8proc) upper or lower case of host strings."""
    return parallel_apply(pc.utf8_upper if upper else pc.utf8_lower, values)


# ------------------------------------------------------------ simple functions
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
        return require_varchar(col, "REPLACE")
    return map_dictionary(col, lambda v: pc.replace_substring(v, old, new))


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
    if kind == "TIMESTAMP":
        return timestamp_text.format_timestamps(host)
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
    if col.valid is not None:  # NULL rows hold arbitrary values: don't format them
        keep = col.valid if data.dim() == 1 else col.valid[:, None]
        data = torch.where(keep, data, torch.zeros_like(data))
    if data.dtype == torch.float64:  # by bit pattern: -0.0 prints apart from 0.0
        uniq, inverse = torch.unique(data.view(torch.int64), return_inverse=True)
        uniq = uniq.view(torch.float64)
    elif data.dim() == 1:
        uniq, inverse = torch.unique(data, return_inverse=True)
    else:
        uniq, inverse = torch.unique(data, dim=0, return_inverse=True)
    d = Dictionary.from_arrow(format_values(col.dtype, uniq)).to(col.device)
    return Column(T.VARCHAR, inverse.to(torch.int32), col.valid, d)


# ----------------------------------------------------------- CAST from VARCHAR
_NUMBER_RE = (
    r"^[ \t\n\v\f\r]*(?P<sign>[+-]?)(?P<int>[0-9]+(?:_[0-9]+)*)?(?:\.(?P<frac>[0-9]*))?"
    r"(?:[eE](?P<exp>[+-]?[0-9]+))?[ \t\n\v\f\r]*$"
)
# DuckDB skips one leading '+' before parsing a double, so '+-1' is -1.
_DOUBLE_RE = (
    r"(?i)^[ \t\n\v\f\r]*(?:\+-|[+-])?(?:inf|infinity|nan|(?:[0-9]+(?:_[0-9]+)*(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:e[+-]?[0-9]+)?)[ \t\n\v\f\r]*$"
)
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
        return None  # overflows any target
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
    if kind == "TIMESTAMP":
        values, codes = timestamp_text.parse_timestamps(v)
        return values, codes == timestamp_text.OK
    raise NotSupported(f"CAST(VARCHAR AS {dtype})")


def cast_error(text: str, dtype: DataType) -> str:
    """DuckDB's message for a string that does not cast to dtype."""
    if dtype.kind == "TIMESTAMP":
        return timestamp_text.cast_error(text, timestamp_text.parse_timestamp(text)[1])
    if dtype.kind == "DATE":
        if dates.parse_dates(pa.array([text]).cast(pa.string()))[1][0] or _date_shaped(text):
            return f'Conversion Error: date field value out of range: "{text}"'
        return f'Conversion Error: invalid date field format: "{text}", expected format is (YYYY-MM-DD)'
    return f"Could not convert string '{text}' to {_duck_type_name(dtype)}"


def _date_shaped(text: str) -> bool:
    """A string that reads as year, month and day whose values are not a date."""
    m = re.match(dates._DATE_RE, text)
    return m is not None and m.group("s1") == m.group("s2")


def from_varchar(col: Column, dtype: DataType, safe: bool = False) -> Column:
    """CAST(col AS dtype) for a VARCHAR column: each dictionary entry is parsed
    once; a value that does not parse (and is used by a non-NULL row) raises
    like DuckDB ("Could not convert string 'abc' to INT32"), or with ``safe``
    (TRY_CAST) makes its rows NULL.

    >>> c = Column.from_arrow(pa.array([" 12 ", "2.5", None, "1e3"]))
    >>> from_varchar(c, T.INTEGER).to_arrow().to_pylist()
    [12, 3, None, 1000]
    >>> from_varchar(Column.from_arrow(pa.array(["abc"])), T.INTEGER)
    Traceback (most recent call last):
    ...
    glint.errors.ExecutionError: Could not convert string 'abc' to INT32
    """
    col = require_varchar(col, "CAST")
    if dtype.is_string:
        return col
    col, text = host_strings(col)
    values, ok = _parse_entries(text, dtype)
    codes = col.data.long()
    entries = torch.from_numpy(np.ascontiguousarray(values, dtype=_NUMPY[dtype.torch_dtype]))
    data = entries.to(col.device)[codes]
    if not ok.all():  # only strings a non-NULL row holds must parse
        bad = torch.from_numpy(~ok).to(col.device)[codes]
        if safe:
            return Column(dtype, data, ~bad if col.valid is None else col.valid & ~bad)
        if col.valid is not None:
            bad = bad & col.valid
        if bool(bad.any()):
            code = int(codes[bad.nonzero()[0, 0]])
            raise ExecutionError(cast_error(text[code].as_py(), dtype))
    return Column(dtype, data, col.valid)
