"""TIMESTAMP to and from text, as DuckDB 1.4 casts them.

Parsing runs on the host once per distinct string (the entries of a VARCHAR
column's dictionary): the usual shapes (``YYYY-MM-DD[ HH:MM[:SS[.ffffff]]]``)
are parsed vectorised with pyarrow; anything else goes through
:func:`parse_timestamp`, a transcription of DuckDB's
``Timestamp::TryConvertTimestamp`` (leading spaces, ``T`` or blanks before
the time, 24:00:00, an ignored UTC offset ``±HH[:MM[:SS]]`` or ``Z``, ``UTC``,
``(BC)`` after the date, ``infinity`` / ``-infinity`` / ``epoch``), which also
says why a string does not parse, so the error is DuckDB's.

>>> parse_timestamp("1992-01-01 12:30:00.1234567")
(694269000123456, 0)
>>> parse_timestamp("2020-02-30")[1] == RANGE, parse_timestamp("2020-01-01 12:00 x")[1] == FORMAT
(True, True)
>>> format_timestamps(torch.tensor([694269000123456, 0, -1])).to_pylist()
['1992-01-01 12:30:00.123456', '1970-01-01 00:00:00', '1969-12-31 23:59:59.999999']
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from glint.columnar import calendar as dates

MICROS_PER_SEC = 1_000_000
MICROS_PER_DAY = 86_400 * MICROS_PER_SEC
TS_INFINITY = 2**63 - 1  # DuckDB's 'infinity'; '-infinity' is its negation
OK, FORMAT, RANGE, NON_UTC = 0, 1, 2, 3

_SPACE = " \t\n\v\f\r"
_DIGITS = "0123456789"
# DuckDB's Date::TryFromDate bounds: days of 5877642-06-25 (BC) .. 5877642-07-10
_DATE_MIN_YEAR, _DATE_MAX_YEAR = -5877641, 5877642


def format_error(text: str) -> str:
    return (
        f'Conversion Error: invalid timestamp field format: "{text}", expected format is '
        f"(YYYY-MM-DD HH:MM:SS[.US][±HH[:MM[:SS]]| ZONE])"
    )


def cast_error(text: str, code: int) -> str:
    """DuckDB's message for a string that does not cast to TIMESTAMP."""
    if code == RANGE:
        return f'Conversion Error: timestamp field value out of range: "{text}"'
    if code == NON_UTC:
        return (
            f'Conversion Error: timestamp field value "{text}" has a timestamp that is not UTC.\n'
            f"Use the TIMESTAMPTZ type with the ICU extension loaded to handle non-UTC timestamps."
        )
    return format_error(text)


# ------------------------------------------------------------------ scalar parser
def _two_digits(s: str, pos: int) -> tuple[int, int] | None:
    """DuckDB's ParseDoubleDigit: one or two digits at pos -> (value, new pos)."""
    if pos < len(s) and s[pos] in _DIGITS:
        v, pos = int(s[pos]), pos + 1
        if pos < len(s) and s[pos] in _DIGITS:
            v, pos = v * 10 + int(s[pos]), pos + 1
        return v, pos
    return None


def _special(s: str, pos: int, neg: bool) -> tuple[int, int]:
    """'infinity' / 'inf' / 'epoch' (any case) after an optional '-'."""
    rest = s[pos:].lower()
    if rest.startswith("infinity"):
        value, pos = (-TS_INFINITY if neg else TS_INFINITY), pos + 8
    elif rest == "inf":
        return (-TS_INFINITY if neg else TS_INFINITY), OK
    elif rest.startswith("epoch"):
        value, pos = 0, pos + 5
    else:
        return 0, FORMAT
    while pos < len(s) and s[pos] in _SPACE:
        pos += 1
    return (value, OK) if pos == len(s) else (0, FORMAT)


def _date_part(s: str) -> tuple[int, int, int, int, int] | tuple[int, int]:
    """(year, month, day, pos, OK) of the leading date, or (value, code) for a
    special value or an error."""
    n, pos = len(s), 0
    while pos < n and s[pos] in _SPACE:
        pos += 1
    if pos >= n:
        return 0, FORMAT
    neg = s[pos] == "-"
    if neg:
        pos += 1
        if pos >= n:
            return 0, FORMAT
    if s[pos] not in _DIGITS:
        return _special(s, pos, neg)
    year = 0
    while pos < n and s[pos] in _DIGITS:
        if year >= 100_000_000:
            return 0, RANGE
        year, pos = year * 10 + int(s[pos]), pos + 1
    if neg:
        year = -year
    if pos >= n or s[pos] not in " -/\\":
        return 0, FORMAT
    sep, pos = s[pos], pos + 1
    got = _two_digits(s, pos)
    if got is None:
        return 0, FORMAT
    month, pos = got
    if pos >= n or s[pos] != sep:
        return 0, FORMAT
    got = _two_digits(s, pos + 1)
    if got is None:
        return 0, FORMAT
    day, pos = got
    if (
        n - pos >= 5
        and s[pos] in _SPACE
        and s[pos + 1] == "("
        and s[pos + 2 : pos + 4].lower() == "bc"
        and s[pos + 4] == ")"
    ):
        if neg or year == 0:
            return 0, FORMAT
        year, pos = 1 - year, pos + 5
    if pos < n and s[pos] in _DIGITS:
        return 0, FORMAT
    return year, month, day, pos, OK


def _time_part(s: str, pos: int) -> tuple[int, int, int]:
    """(micros of the day, new pos, code) of a time at pos: H[H...]:[M[M][:[S[S][.f...]]]]."""
    n = len(s)
    while pos < n and s[pos] in _SPACE:
        pos += 1
    if pos >= n or s[pos] not in _DIGITS:
        return 0, pos, FORMAT
    hour, digits = 0, 0
    while pos < n and s[pos] in _DIGITS:
        digits += 1
        if digits > 9:
            return 0, pos, FORMAT
        hour, pos = hour * 10 + int(s[pos]), pos + 1
    if pos >= n or s[pos] != ":":
        return 0, pos, FORMAT
    pos += 1
    minute = second = micros = 0
    parsed = 0  # minutes, then seconds: each optional at the end of the text
    while parsed < 2 and pos < n:
        if parsed == 1:
            if s[pos] != ":":
                return 0, pos, FORMAT
            pos += 1
            if pos >= n:
                break
        got = _two_digits(s, pos)
        if got is None or got[0] >= 60:
            return 0, pos, FORMAT
        if parsed == 0:
            minute, pos = got
        else:
            second, pos = got
        parsed += 1
    if parsed == 2 and pos < n and s[pos] == ".":
        pos += 1
        mult = 100_000
        while pos < n and s[pos] in _DIGITS:
            micros += int(s[pos]) * mult
            mult //= 10
            pos += 1
    return ((hour * 60 + minute) * 60 + second) * MICROS_PER_SEC + micros, pos, OK


def _utc_offset(s: str, pos: int) -> int | None:
    """The position after a UTC offset ±HH[[:]MM[:SS]] at pos (its value is
    ignored: DuckDB's TIMESTAMP keeps the wall-clock time), or None."""
    n = len(s)
    if pos + 3 > n or s[pos] not in "+-" or s[pos + 1] not in _DIGITS or s[pos + 2] not in _DIGITS:
        return None
    pos += 3
    if pos >= n:
        return pos
    colon = s[pos] == ":"
    if colon:
        pos += 1
    if pos + 2 > n or s[pos] not in _DIGITS or s[pos + 1] not in _DIGITS:
        return pos
    pos += 2
    if colon and pos < n and s[pos] == ":":
        pos += 1
        if pos + 2 <= n and s[pos] in _DIGITS and s[pos + 1] in _DIGITS:
            pos += 2
    return pos


def parse_timestamp(s: str) -> tuple[int, int]:
    """(microseconds since 1970, code) for one string; code is OK, FORMAT,
    RANGE or NON_UTC (the kind of DuckDB error).

    >>> parse_timestamp("2020-01-01T24:00"), parse_timestamp(" -infinity ")
    ((1577923200000000, 0), (-9223372036854775807, 0))
    >>> parse_timestamp("290308-12-22 (BC) 00:00:00+02:30"), parse_timestamp("2020-01-01 12:00:00 CET")
    ((-9223340486400000000, 0), (0, 3))
    """
    date = _date_part(s)
    if len(date) == 2:
        return date
    year, month, day, pos, _ = date
    if not (1 <= month <= 12 and 1 <= day <= _month_days(year, month)) or not _DATE_MIN_YEAR <= year <= _DATE_MAX_YEAR:
        return 0, RANGE
    days = _days_from_civil(year, month, day)
    n = len(s)
    if pos == n:
        return _checked(days * MICROS_PER_DAY)
    if s[pos] in " T":
        pos += 1
    time, pos, code = _time_part(s, pos)
    if code != OK:
        return 0, code
    if time > MICROS_PER_DAY or days * MICROS_PER_DAY < -(2**63):  # DuckDB multiplies the day out first
        return 0, RANGE
    value, code = _checked(days * MICROS_PER_DAY + time)
    if code != OK or pos == n:
        return value, code
    zone = ""
    if s[pos] == "Z":
        pos += 1
    else:
        after = _utc_offset(s, pos)
        if after is not None:
            pos = after
        else:
            if s[pos] != " ":
                return 0, NON_UTC
            pos += 1
            start = pos
            while pos < n and (s[pos].isascii() and (s[pos].isalnum() or s[pos] in "_/+-")):
                pos += 1
            zone = s[start:pos]
    while pos < n and s[pos] in _SPACE:
        pos += 1
    if pos < n:
        return 0, FORMAT
    if zone and zone.lower() != "utc":
        return 0, NON_UTC
    return value, OK


def _checked(value: int) -> tuple[int, int]:
    return (value, OK) if -TS_INFINITY < value < TS_INFINITY else (0, RANGE)


def _month_days(year: int, month: int) -> int:
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[month - 1]


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


# ------------------------------------------------------------------ vectorised
_FAST_RE = (
    r"^(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
    r"(?:[ T](?P<H>[0-9]{2}):(?P<M>[0-9]{2})(?::(?P<S>[0-9]{2})(?:\.(?P<f>[0-9]{1,6}))?)?)?$"
)


def _int_field(parts, name: str) -> np.ndarray:
    f = pc.struct_field(parts, name).fill_null("")
    f = pc.if_else(pc.equal(pc.utf8_length(f), 0), "0", f)
    return np.array(pc.cast(f, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)  # a writable copy


def parse_timestamps(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised TIMESTAMP parsing of a string array: (int64 microseconds,
    int8 codes, 0 where the string parsed). NULL entries parse as 0.

    >>> v, code = parse_timestamps(pa.array(["2020-01-01 10:00", "2020-1-1", "x", None]))
    >>> v.tolist(), code.tolist()
    ([1577872800000000, 1577836800000000, 0, 0], [0, 0, 1, 0])
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    out = np.zeros(n, np.int64)
    codes = np.zeros(n, np.int8)
    if n == 0:
        return out, codes
    parts = pc.extract_regex(values, _FAST_RE)
    fast = parts.is_valid().to_numpy(zero_copy_only=False)
    if fast.any():
        y, m, d, hh, mm, ss = (torch.from_numpy(_int_field(parts, k)) for k in "ymdHMS")
        frac = pc.utf8_rpad(pc.struct_field(parts, "f").fill_null(""), 6, "0")
        us = torch.from_numpy(_int_field(pa.StructArray.from_arrays([frac], ["f"]), "f"))
        ok = (m >= 1) & (m <= 12) & (d >= 1) & (d <= dates.days_in_month(y, m)) & (hh < 24) & (mm < 60) & (ss < 60)
        days = dates.days_from_civil(y, m, d)
        value = days * MICROS_PER_DAY + ((hh * 60 + mm) * 60 + ss) * MICROS_PER_SEC + us
        fast &= ok.numpy()
        out = np.where(fast, value.numpy(), 0)
    slow = ~fast & values.is_valid().to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(slow):
        out[i], codes[i] = parse_timestamp(values[i].as_py())
    return out, codes


def format_timestamps(micros: torch.Tensor) -> pa.Array:
    """DuckDB's CAST(timestamp AS VARCHAR): 'YYYY-MM-DD HH:MM:SS[.ffffff]'
    with trailing zeros of the fraction dropped, '(BC)' after the date of a
    year <= 0, and 'infinity' / '-infinity'."""
    v = micros.cpu().long()
    days = torch.div(v, MICROS_PER_DAY, rounding_mode="floor")
    tod = v - days * MICROS_PER_DAY
    date = dates.format_dates(days)
    secs, us = torch.div(tod, MICROS_PER_SEC, rounding_mode="floor"), tod % MICROS_PER_SEC

    def two(a: torch.Tensor) -> pa.Array:
        return pc.utf8_lpad(pc.cast(pa.array(a.numpy()), pa.string()), 2, "0")

    clock = pc.binary_join_element_wise(two(secs // 3600), two(secs // 60 % 60), two(secs % 60), ":")
    fraction = pc.utf8_rtrim(pc.utf8_lpad(pc.cast(pa.array(us.numpy()), pa.string()), 6, "0"), "0")
    has_fraction = pa.array((us != 0).numpy())
    clock = pc.if_else(has_fraction, pc.binary_join_element_wise(clock, fraction, "."), clock)
    out = pc.binary_join_element_wise(date, clock, " ")
    inf = (v == TS_INFINITY) | (v == -TS_INFINITY)
    if bool(inf.any()):
        out = pc.if_else(pa.array((v == TS_INFINITY).numpy()), "infinity", out)
        out = pc.if_else(pa.array((v == -TS_INFINITY).numpy()), "-infinity", out)
    return out


def format_timestamp(micros: int) -> str:
    """One TIMESTAMP as DuckDB prints it.

    >>> format_timestamp(-62135596800000000 - 1), format_timestamp(2**63 - 1)
    ('0001-12-31 (BC) 23:59:59.999999', 'infinity')
    """
    return format_timestamps(torch.tensor([int(micros)], dtype=torch.int64))[0].as_py()
