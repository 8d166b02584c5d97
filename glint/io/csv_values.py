"""The text of CSV fields read as DuckDB's CSV reader reads it: which
fields a type accepts when the reader detects the columns' types (DuckDB's
*strict* casts: :func:`castable`), and the values of a column of a detected
type (its ordinary casts: :func:`convert`). Both work on whole Arrow string
arrays (pyarrow's regular expressions and numpy), a field at a time in
Python only for the rare forms (hexadecimal integers, numbers past 18
digits, decimals read as integers).

The strict forms, as DuckDB 1.4 accepts them when it detects types:

- BOOLEAN: ``true false t f yes no`` in any case, nothing around them;
- BIGINT: decimal digits within int64, a ``-`` sign but no ``+``, spaces
  around; no leading zero unless the number is ``0`` (``02139`` stays
  text, ``-05`` is a number); ``0x`` hexadecimal and ``0b`` binary;
- DOUBLE: ``[-]digits[.digits][e[+-]digits]``, ``.5``, ``5.``, ``nan``,
  ``inf``, ``infinity``; spaces before but not after, no ``+``, no leading
  zero before a digit (``0.5`` is a number, ``01.5`` is not);
- DATE: ``[-]YYYY-M-D`` with ``-``, ``/``, ``\\`` or a space between the
  parts and a two-digit year at least, or a format the detection chose
  (``%m/%d/%Y``...); TIMESTAMP: a DATE, then ``T`` or a space and
  ``H:M[:S[.f]]``; TIME ``H:MM[:SS[.f]]``; TIMESTAMP WITH TIME ZONE: a
  TIMESTAMP with ``Z``, an offset ``+HH[:MM]`` or a zone name.

>>> a = pa.array(["02139", "10001", "-05", "0x1F", None, "1e5"])
>>> castable("BIGINT", a).tolist()
[False, True, True, True, True, False]
>>> convert("BIGINT", pa.array([" 7 ", "-05", "0x1F", None]))[0].to_pylist()
[7, -5, 31, None]
>>> castable("DOUBLE", pa.array(["0.5", "01.5", ".5", "nan", "inf", "1e400", "+1", "2 "])).tolist()
[True, False, True, True, True, True, False, False]
>>> convert("DATE", pa.array(["2024-01-05", "2024/2/29", "2-01-01 (BC)"]))[0].cast(pa.int32()).to_pylist()
[19727, 19782, -719893]
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

WS = "[ \\t\\n\\x0b\\f\\r]"
_SEP = "[-/ \\\\]"
INT64_MAX = (1 << 63) - 1
# DuckDB's DATE range (Date::DATE_MIN_YEAR / DATE_MAX_YEAR, whole years)
DATE_MIN_YEAR, DATE_MAX_YEAR = -5877640, 5881579
# TIMESTAMP: int64 microseconds (about 294,000 years either side of 1970)
_TS_DAYS = INT64_MAX // 86_400_000_000 - 1
_MICROS_PER_DAY = 86_400_000_000

# kinds -> the Arrow types glint reads them as (TIME and TIMESTAMP WITH TIME
# ZONE, which glint does not have, stay text)
ARROW_TYPES = {
    "BOOLEAN": pa.bool_(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us"),
    "TIME": pa.string(),
    "TIMESTAMPTZ": pa.string(),
    "VARCHAR": pa.string(),
    "NULL": pa.string(),
}

_BOOL_STRICT = {"t": True, "f": False, "true": True, "false": False, "yes": True, "no": False}
_BOOL_LOOSE = dict(_BOOL_STRICT, y=True, n=False, **{"1": True, "0": False})

_INT_STRICT = f"^{WS}*(?P<v>-[0-9]+|0|[1-9][0-9]*){WS}*$"
_INT_LOOSE = f"^{WS}*(?P<v>[-+]?[0-9]+){WS}*$"
_HEX_BIN = f"^{WS}*0(?:[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*|[bB][01](?:_?[01])*)$"
_NUMBER = "(?:[0-9]+(?:\\.[0-9]*)?|\\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_DOUBLE_STRICT = f"^{WS}*(?P<v>-?{_NUMBER})$"
_DOUBLE_LOOSE = f"^{WS}*(?P<v>[-+]?{_NUMBER}){WS}*$"
_LEADING_ZERO = f"^{WS}*0[0-9]"
_INF_NAN = f"^{WS}*(?P<v>-?(?:[nN][aA][nN](?:\\([A-Za-z0-9_]*\\))?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?))$"
_TIME = (
    f"^{WS}*(?P<h>[0-9]{{1,9}}):(?:(?P<m2>[0-9]{{2}})|(?P<m>[0-9]{{1,2}}):(?P<s>[0-9]{{1,2}})(?P<f>\\.[0-9]*)?{WS}*)$"
)


def _date_part(min_year_digits: int) -> str:
    return (
        f"(?P<neg>-?)(?P<y>[0-9]{{{min_year_digits},9}})(?P<s1>{_SEP})(?P<mo>[0-9]{{1,2}})"
        f"(?P<s2>{_SEP})(?P<d>[0-9]{{1,2}})(?P<bc>{WS}\\([bB][cC]\\))?"
    )


_DATE_STRICT = f"^{WS}*{_date_part(2)}{WS}*$"
_DATE_LOOSE = f"^{WS}*{_date_part(1)}{WS}*$"
# a timestamp: its date, and a time after "T" or a space (minutes and seconds
# may be left off after their colon; a suffix only after the seconds)
_TIMESTAMP = (
    f"^{WS}*{_date_part(1)}(?:[ T]{WS}*(?P<h>[0-9]{{1,9}}):(?:(?P<mi>[0-9]{{1,2}})"
    "(?::(?:(?P<s>[0-9]{1,2})(?P<f>\\.[0-9]*)?(?P<rest>.*))?)?)?)?$"
)
_OFFSET = "[-+][0-9]{2}(?::?[0-9]{2}(?::[0-9]{2})?)?"
_REST_NAIVE = f"^(?: (?:[uU][tT][cC])?{WS}*)?$"  # no zone, or UTC
_REST_ZONED = f"^(?:Z{WS}*|{_OFFSET}{WS}*| [A-Za-z0-9_/+-]*{WS}*)$"


# ------------------------------------------------------------------ helpers
def _matches(a: pa.Array, pattern: str) -> np.ndarray:
    """Whether each value matches (a NULL: False)."""
    return pc.fill_null(pc.match_substring_regex(a, pattern), False).to_numpy(zero_copy_only=False)


def _groups(a: pa.Array, pattern: str) -> tuple[np.ndarray, dict]:
    """(which values match, {group: its text per value, NULL where unmatched}).
    (An optional group that took no part in a match reads as "".)"""
    got = pc.extract_regex(a, pattern)
    ok = got.is_valid().to_numpy(zero_copy_only=False)
    names = [got.type.field(i).name for i in range(got.type.num_fields)]
    return ok, {n: got.field(n) for n in names}


def _ints(a: pa.Array) -> np.ndarray:
    """Digit strings as int64 (NULL and "" as 0)."""
    a = pc.if_else(pc.equal(pc.fill_null(a, ""), ""), "0", a)
    return pc.cast(pc.fill_null(a, "0"), pa.int64()).to_numpy(zero_copy_only=False)


def _fraction_micros(a: pa.Array) -> np.ndarray:
    """ ".123" -> 123000 (microseconds: the digits padded or cut to six)."""
    digits = pc.utf8_slice_codeunits(pc.fill_null(a, ""), 1, 7)
    return _ints(pc.utf8_rpad(digits, 6, "0")) * np.where(_lengths(digits) > 0, 1, 0)


def _lengths(a: pa.Array) -> np.ndarray:
    return pc.fill_null(pc.utf8_length(a), 0).to_numpy(zero_copy_only=False)


def _nonempty(a: pa.Array) -> np.ndarray:
    return _lengths(a) > 0


def _text(a: pa.Array) -> np.ndarray:
    """The values as a numpy array of Python strings (None for NULL)."""
    return np.asarray(a.to_pylist(), dtype=object)


def _leap(y: np.ndarray) -> np.ndarray:
    return (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))


_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def valid_date(y, m, d) -> np.ndarray:
    """Whether (year, month, day) is a day of DuckDB's DATE range."""
    y, m, d = np.asarray(y), np.asarray(m), np.asarray(d)
    ok = (m >= 1) & (m <= 12) & (d >= 1) & (y >= DATE_MIN_YEAR) & (y <= DATE_MAX_YEAR)
    last = _MONTH_DAYS[np.clip(m, 0, 12)] + ((m == 2) & _leap(y))
    return ok & (d <= last)


def days_from_civil(y, m, d) -> np.ndarray:
    """Days since 1970-01-01 of proleptic Gregorian dates (year 0 = 1 BC).

    >>> days_from_civil(np.array([1970, 2000, 1969]), np.array([1, 3, 12]), np.array([1, 1, 31])).tolist()
    [0, 11017, -1]
    """
    y = np.asarray(y, dtype=np.int64) - (np.asarray(m) <= 2)
    m = np.asarray(m, dtype=np.int64)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + np.asarray(d, dtype=np.int64) - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _null_ok(a: pa.Array, ok: np.ndarray) -> np.ndarray:
    return ok | a.is_null().to_numpy(zero_copy_only=False)


# ------------------------------------------------------------------ numbers
def _bigint_loose(text: str) -> int | None:
    """A field as DuckDB's ordinary cast to BIGINT reads it, or None:
    spaces, a sign, single underscores between digits, ``0x`` / ``0b``,
    decimals and exponents rounded half away from zero."""
    s = text.strip(" \t\n\x0b\f\r")
    if re.fullmatch("0[xX][0-9a-fA-F](?:_?[0-9a-fA-F])*", s):
        v = int(s[2:].replace("_", ""), 16)
    elif re.fullmatch("0[bB][01](?:_?[01])*", s):
        v = int(s[2:].replace("_", ""), 2)
    else:
        if not re.fullmatch(
            "[-+]?(?:[0-9](?:_?[0-9])*(?:\\.(?:[0-9](?:_?[0-9])*)?)?|\\.[0-9](?:_?[0-9])*)(?:[eE][-+]?[0-9]+)?", s
        ):
            return None
        try:
            v = int(Decimal(s.replace("_", "")).quantize(Decimal(1), rounding=ROUND_HALF_UP))
        except (InvalidOperation, ValueError):
            return None
    return v if -INT64_MAX - 1 <= v <= INT64_MAX else None


def _bigint_strict_values(a: pa.Array) -> np.ndarray:
    ok = _matches(a, _INT_STRICT)
    if ok.any():
        digits = _lengths(pc.utf8_trim_whitespace(a))
        long = ok & (digits > 18)
        for i in np.flatnonzero(long):  # past 18 digits: within int64?
            v = int(a[int(i)].as_py().strip(" \t\n\x0b\f\r"))
            ok[i] = -INT64_MAX - 1 <= v <= INT64_MAX
    special = _matches(a, _HEX_BIN)
    for i in np.flatnonzero(special):
        ok[i] = _bigint_loose(a[int(i)].as_py()) is not None
    return ok


def _double_strict(a: pa.Array) -> np.ndarray:
    return (_matches(a, _DOUBLE_STRICT) & ~_matches(a, _LEADING_ZERO)) | _matches(a, _INF_NAN)


def _double_values(a: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(values, which parsed) of DuckDB's ordinary cast to DOUBLE."""
    ok, g = _groups(a, _DOUBLE_LOOSE)
    text = pc.if_else(pa.array(ok), g["v"], None)
    ok_nan, gn = _groups(a, _INF_NAN)
    name = pc.utf8_lower(pc.replace_substring_regex(gn["v"], "\\(.*\\)$", ""))
    text = pc.if_else(pa.array(ok_nan), name, text)
    vals = pc.cast(pc.fill_null(text, "0"), pa.float64()).to_numpy(zero_copy_only=False)
    found = ok | ok_nan
    for i in np.flatnonzero(~found & a.is_valid().to_numpy(zero_copy_only=False)):
        s = a[int(i)].as_py().strip(" \t\n\x0b\f\r")
        if re.fullmatch("[-+]?(?:[0-9](?:_?[0-9])*(?:\\.[0-9](?:_?[0-9])*)?)(?:[eE][-+]?[0-9]+)?", s):
            vals[i], found[i] = float(s.replace("_", "")), True
    return vals, found


# ------------------------------------------------------------------ dates and times
def _date_values(a: pa.Array, strict: bool) -> tuple[np.ndarray, np.ndarray]:
    """(days since 1970, which parsed) of ISO-like dates (Date::TryConvertDate)."""
    ok, g = _groups(a, _DATE_STRICT if strict else _DATE_LOOSE)
    if not ok.any():
        return np.zeros(len(a), np.int64), ok
    ok &= pc.fill_null(pc.equal(g["s1"], g["s2"]), False).to_numpy(zero_copy_only=False)
    y, m, d = _ints(g["y"]), _ints(g["mo"]), _ints(g["d"])
    neg, bc = _nonempty(g["neg"]), _nonempty(g["bc"])
    ok &= ~(bc & (neg | (y == 0)))
    y = np.where(neg, -y, y)
    y = np.where(bc, 1 - y, y)
    ok &= valid_date(y, m, d)
    return np.where(ok, days_from_civil(np.where(ok, y, 1970), np.where(ok, m, 1), np.where(ok, d, 1)), 0), ok


def _time_ok(a: pa.Array) -> np.ndarray:
    ok, g = _groups(a, _TIME)
    if not ok.any():
        return ok
    h = _ints(g["h"])
    two = _nonempty(g["m2"])
    m = np.where(two, _ints(g["m2"]), _ints(g["m"]))
    s = _ints(g["s"])
    micros = (h * 3600 + m * 60 + s) * 1_000_000 + _fraction_micros(g["f"])
    return ok & (m < 60) & (s < 60) & (h <= 24) & (micros <= _MICROS_PER_DAY)


def _timestamp_values(a: pa.Array, kind: str, strict: bool) -> tuple[np.ndarray, np.ndarray]:
    """(microseconds since 1970, which parsed) of ISO-like timestamps
    (Timestamp::TryConvertTimestamp). ``kind`` TIMESTAMP: no zone, or UTC
    (strict: an offset or Z fails; otherwise it is left off); TIMESTAMPTZ:
    any zone (only whether it parses)."""
    ok, g = _groups(a, _TIMESTAMP)
    if not ok.any():
        return np.zeros(len(a), np.int64), ok
    ok &= pc.fill_null(pc.equal(g["s1"], g["s2"]), False).to_numpy(zero_copy_only=False)
    y, mo, d = _ints(g["y"]), _ints(g["mo"]), _ints(g["d"])
    neg, bc = _nonempty(g["neg"]), _nonempty(g["bc"])
    ok &= ~(bc & (neg | (y == 0)))
    y = np.where(neg, -y, y)
    y = np.where(bc, 1 - y, y)
    ok &= valid_date(y, mo, d)
    h, mi, s = _ints(g["h"]), _ints(g["mi"]), _ints(g["s"])
    micros = (h * 3600 + mi * 60 + s) * 1_000_000 + _fraction_micros(g["f"])
    ok &= (mi < 60) & (s < 60) & (h <= 24) & (micros <= _MICROS_PER_DAY)
    rest = pc.fill_null(g["rest"], "")
    if kind == "TIMESTAMPTZ":
        ok &= _matches(rest, _REST_ZONED)
    elif strict:
        ok &= _matches(rest, _REST_NAIVE)
    else:  # (an offset or Z is read and left off, as DuckDB's reader and its cast do)
        ok &= _matches(rest, _REST_NAIVE) | _matches(rest, _REST_ZONED.replace(" [A-Za-z0-9_/+-]*", " [uU][tT][cC]"))
    days = days_from_civil(np.where(ok, y, 1970), np.where(ok, mo, 1), np.where(ok, d, 1))
    ok &= np.abs(days) < _TS_DAYS
    return np.where(ok, days * _MICROS_PER_DAY + micros, 0), ok


# ------------------------------------------------------------------ formats (strptime)
_SPECIFIERS = {
    "Y": ("[0-9]{1,4}", "[0-9]{2,4}"),
    "y": ("[0-9]{1,2}", "[0-9]{2}"),
    "m": ("[0-9]{1,2}",) * 2,
    "d": ("[0-9]{1,2}",) * 2,
    "H": ("[0-9]{1,2}",) * 2,
    "I": ("[0-9]{1,2}",) * 2,
    "M": ("[0-9]{1,2}",) * 2,
    "S": ("[0-9]{1,2}",) * 2,
    "f": ("[0-9]{1,6}",) * 2,
    "p": ("[AaPp][Mm]",) * 2,
}


def format_pattern(fmt: str, strict: bool) -> str:
    """A regular expression matching what DuckDB's strptime ``fmt`` parses
    (the specifiers of the CSV reader's date and timestamp formats; runs of
    spaces match runs of spaces; spaces before and after).

    >>> re.fullmatch(format_pattern("%d.%m.%Y", True), " 31.12.2023 ") is not None
    True
    """
    out, i = [f"^{WS}*"], 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%" and i + 1 < len(fmt) and fmt[i + 1] in _SPECIFIERS:
            spec = fmt[i + 1]
            out.append(f"(?P<{spec}>{_SPECIFIERS[spec][1 if strict else 0]})")
            i += 2
            continue
        if c == "%" and fmt[i + 1 : i + 2] == "%":
            c, i = "%", i + 1
        if c in " \t\n\x0b\f\r":
            while i + 1 < len(fmt) and fmt[i + 1] in " \t\n\x0b\f\r":
                i += 1
            out.append(f"{WS}+")
        else:
            out.append(re.escape(c))
        i += 1
    out.append(f"{WS}*$")
    return "".join(out)


def _format_values(a: pa.Array, fmt: str, strict: bool) -> tuple[np.ndarray, np.ndarray, bool]:
    """(days or microseconds since 1970, which parsed, whether the format has a time)."""
    ok, g = _groups(a, format_pattern(fmt, strict))
    n = len(a)
    zero = np.zeros(n, np.int64)

    def num(k, default):
        return _ints(g[k]) if k in g else np.full(n, default, np.int64)

    y = num("Y", 1900)
    if "y" in g:
        yy = _ints(g["y"])
        y = np.where(yy >= 69, 1900 + yy, 2000 + yy)
    m, d = num("m", 1), num("d", 1)
    ok &= (m >= 1) & (m <= 12) & (d >= 1) & (d <= 31) & valid_date(y, m, d)
    has_time = any(k in g for k in "HIMSfp")
    if not has_time:
        days = days_from_civil(np.where(ok, y, 1970), np.where(ok, m, 1), np.where(ok, d, 1))
        return np.where(ok, days, zero), ok, False
    h = num("H", 0)
    ok &= h < 24
    if "I" in g:
        h12 = _ints(g["I"])
        ok &= (h12 >= 1) & (h12 <= 12)
        pm = (
            pc.fill_null(pc.equal(pc.utf8_lower(pc.utf8_slice_codeunits(g["p"], 0, 1)), "p"), False).to_numpy(
                zero_copy_only=False
            )
            if "p" in g
            else np.zeros(n, bool)
        )
        h = np.where(h12 == 12, 0, h12) + np.where(pm, 12, 0)
    mi, s = num("M", 0), num("S", 0)
    ok &= (mi < 60) & (s < 60)
    frac = _ints(pc.utf8_rpad(pc.fill_null(g["f"], ""), 6, "0")) if "f" in g else zero
    days = days_from_civil(np.where(ok, y, 1970), np.where(ok, m, 1), np.where(ok, d, 1))
    micros = days * _MICROS_PER_DAY + ((h * 60 + mi) * 60 + s) * 1_000_000 + frac
    return np.where(ok, micros, zero), ok, True


_COMPILED: dict = {}


def format_parses(fmt: str, value: str) -> bool:
    """Whether DuckDB's strict strptime ``fmt`` parses one value (the
    detection of a column's date format tries its candidates on a value,
    row after row: in Python, not through Arrow).

    >>> format_parses("%m/%d/%Y", "12/31/2023"), format_parses("%d/%m/%Y", "12/31/2023")
    (True, False)
    """
    pattern = _COMPILED.get(fmt)
    if pattern is None:
        pattern = _COMPILED[fmt] = re.compile(format_pattern(fmt, True))
    m = pattern.match(value)
    if m is None:
        return False
    g = m.groupdict()
    y = int(g["Y"]) if "Y" in g else 1900
    if "y" in g:
        y = int(g["y"]) + (1900 if int(g["y"]) >= 69 else 2000)
    mo, d = int(g.get("m") or 1), int(g.get("d") or 1)
    if not bool(valid_date(y, mo, d)):
        return False
    if "I" in g and not 1 <= int(g["I"]) <= 12:
        return False
    return int(g.get("H") or 0) < 24 and int(g.get("M") or 0) < 60 and int(g.get("S") or 0) < 60


# ------------------------------------------------------------------ the two entry points
def castable(kind: str, a: pa.Array, fmt: str | None = None) -> np.ndarray:
    """Whether each value of a string array is a value of ``kind`` as
    DuckDB's type detection sees it (NULLs are of every type). ``fmt``: the
    DATE or TIMESTAMP format the detection chose (None: ISO forms)."""
    if kind == "VARCHAR":
        return np.ones(len(a), bool)
    if kind == "NULL":
        return a.is_null().to_numpy(zero_copy_only=False)
    if kind == "BOOLEAN":
        ok = pc.is_in(pc.ascii_lower(a), value_set=pa.array(list(_BOOL_STRICT)))
        ok = pc.fill_null(ok, False).to_numpy(zero_copy_only=False)
    elif kind == "BIGINT":
        ok = _bigint_strict_values(a)
    elif kind == "DOUBLE":
        ok = _double_strict(a)
    elif kind == "TIME":
        ok = _time_ok(a)
    elif kind in ("DATE", "TIMESTAMP") and fmt:
        # (a chosen format parses as DuckDB's strptime does outside its detection: not strictly)
        ok = _format_values(a, fmt, False)[1]
    elif kind == "DATE":
        ok = _date_values(a, True)[1]
    else:
        ok = _timestamp_values(a, kind, True)[1]
    return _null_ok(a, ok)


def convert(kind: str, a: pa.Array, fmt: str | None = None) -> tuple[pa.Array, int | None]:
    """(the string array's values as ``kind``, None) as DuckDB's reader
    converts a column of that type; (None, the first index that does not
    convert) when a value is not of the type."""
    valid = a.is_valid().to_numpy(zero_copy_only=False)
    mask = ~valid
    if kind in ("VARCHAR", "NULL", "TIME", "TIMESTAMPTZ"):
        return a.cast(pa.string()), None
    fast = _fast(kind, a, fmt)
    if fast is not None:
        return fast, None
    if kind == "BOOLEAN":
        lowered = pc.ascii_lower(a)
        ok = pc.fill_null(pc.is_in(lowered, value_set=pa.array(list(_BOOL_LOOSE))), False)
        ok = ok.to_numpy(zero_copy_only=False)
        vals = pc.is_in(lowered, value_set=pa.array([k for k, v in _BOOL_LOOSE.items() if v]))
        out = pc.if_else(pa.array(mask), None, vals)
    elif kind == "BIGINT":
        ok, g = _groups(a, _INT_LOOSE)
        text = pc.replace_substring(pc.fill_null(g["v"], "0"), "+", "")
        long = _lengths(text) > 18
        short = ok & ~long
        vals = np.zeros(len(a), np.int64)
        if short.any():
            vals[short] = pc.cast(pc.filter(text, pa.array(short)), pa.int64()).to_numpy(zero_copy_only=False)
        ok = short.copy()
        for i in np.flatnonzero(valid & ~short):
            v = _bigint_loose(a[int(i)].as_py())
            if v is not None:
                vals[i], ok[i] = v, True
        out = pa.array(vals, pa.int64(), mask=mask)
    elif kind == "DOUBLE":
        vals, ok = _double_values(a)
        out = pa.array(vals, pa.float64(), mask=mask)
    elif fmt:
        vals, ok, _ = _format_values(a, fmt, False)
        out = _temporal(kind, vals, mask, fmt_has_time=_format_has_time(fmt))
    elif kind == "DATE":
        vals, ok = _date_values(a, False)
        out = pa.array(vals.astype(np.int32), pa.int32(), mask=mask).cast(pa.date32())
    else:
        vals, ok = _timestamp_values(a, "TIMESTAMP", False)
        out = pa.array(vals, pa.int64(), mask=mask).cast(pa.timestamp("us"))
    bad = np.flatnonzero(valid & ~ok)
    if len(bad):
        return None, int(bad[0])
    return out, None


_ISO_DATE = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
_ISO_TIMESTAMP = "^[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9]{2}:[0-9]{2}:[0-9]{2}(?:\\.[0-9]{1,6})?$"


def _fast(kind: str, a: pa.Array, fmt: str | None) -> pa.Array | None:
    """The column through Arrow's own cast where its forms are ones Arrow
    reads as DuckDB does (plain integers and decimals, YYYY-MM-DD dates,
    YYYY-MM-DD HH:MM:SS[.f] timestamps), else None (the general path)."""
    try:
        if kind == "BIGINT":
            return pc.cast(a, pa.int64())
        if kind == "DOUBLE" and not _matches(a, "[_xX]").any():
            return pc.cast(a, pa.float64())
        if kind == "DATE" and not fmt and _null_ok(a, _matches(a, _ISO_DATE)).all():
            return pc.cast(a, pa.date32())
        if kind == "TIMESTAMP" and not fmt and _null_ok(a, _matches(a, _ISO_TIMESTAMP)).all():
            return pc.cast(a, pa.timestamp("us"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    return None


def _format_has_time(fmt: str) -> bool:
    return any(f"%{c}" in fmt for c in "HIMSfp")


def _temporal(kind: str, vals: np.ndarray, mask: np.ndarray, fmt_has_time: bool) -> pa.Array:
    """Days or microseconds (as the format gave them) as a DATE or TIMESTAMP column."""
    if kind == "DATE":
        days = vals // _MICROS_PER_DAY if fmt_has_time else vals
        return pa.array(days.astype(np.int32), pa.int32(), mask=mask).cast(pa.date32())
    micros = vals if fmt_has_time else vals * _MICROS_PER_DAY
    return pa.array(micros, pa.int64(), mask=mask).cast(pa.timestamp("us"))
