"""Date functions on DATE columns (int32 days since 1970-01-01).

Everything is integer torch arithmetic on the row tensors, so it runs on
whatever device the column lives on. Calendar conversions use Howard Hinnant's
``days_from_civil`` / ``civil_from_days`` (proleptic Gregorian calendar, exact
for any int32 day count). Semantics follow DuckDB: ``dow`` counts Sunday as 0,
``week`` is the ISO week, month arithmetic clamps the day to the month's end,
and ``date_diff`` counts calendar boundaries crossed.

>>> import datetime
>>> c = Column.from_arrow(pa.array([datetime.date(2020, 1, 31), None, datetime.date(1995, 3, 15)]))
>>> extract("month", c).to_arrow().to_pylist()
[1, None, 3]
>>> add_interval(c, 1, 0).to_arrow().to_pylist()
[datetime.date(2020, 2, 29), None, datetime.date(1995, 4, 15)]
>>> date_trunc("quarter", c).to_arrow().to_pylist()[2]
datetime.date(1995, 1, 1)
>>> parse_date("1995-3-15"), format_date(9204)
(9204, '1995-03-15')
"""

from __future__ import annotations

import datetime
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from glint.columnar import types as T
from glint.columnar.calendar import (  # noqa: F401  (the date functions' calendar)
    _CUM_DAYS,
    _MONTH_DAYS,
    INFINITY,
    MAX_DAYS,
    MIN_DAYS,
    _fdiv,
    civil_from_days,
    days_from_civil,
    days_in_month,
    format_date,
    format_dates,
    is_leap,
)
from glint.columnar.column import Column
from glint.errors import ExecutionError, NotSupported
from glint.kernels.backend import use_triton
from glint.kernels.calendar import civil_field_triton


def _day_of_year(y: torch.Tensor, m: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    table = torch.tensor(_CUM_DAYS, dtype=torch.int64, device=m.device)
    return table[m - 1] + d + ((m > 2) & is_leap(y)).long()


def _dow(days: torch.Tensor) -> torch.Tensor:
    """Day of week with Sunday = 0 (1970-01-01 was a Thursday)."""
    return (days.long() + 4) % 7


def _iso_year_week(days: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """ISO-8601 (year, week): the week belongs to the year holding its Thursday."""
    days = days.long()
    isodow = (days + 3) % 7 + 1  # Monday = 1 .. Sunday = 7
    thursday = days + (4 - isodow)
    iy, _, _ = civil_from_days(thursday)
    jan1 = days_from_civil(iy, torch.ones_like(iy), torch.ones_like(iy))
    return iy, (thursday - jan1) // 7 + 1


def per_day(days: torch.Tensor, fn) -> torch.Tensor:
    """fn(days) for a function of the day alone, computed once per day of the
    column's [min, max] range and gathered when that range is small next to
    the row count (the usual case: a few thousand distinct dates). Calendar
    maths costs a dozen integer divisions a value; a gather, one load."""
    n = days.numel()
    if n < 4096:
        return fn(days)
    lo, hi = (int(v) for v in torch.aminmax(days))
    if hi - lo + 1 > n // 2:
        return fn(days)
    table = fn(torch.arange(lo, hi + 1, dtype=torch.int64, device=days.device))
    return table[days.long() - lo]


# EXTRACT's names of the fields the GPU computes from the day alone (glint.kernels.calendar)
_CIVIL_NAMES = {
    **dict.fromkeys(("year", "years", "y", "yr", "yrs"), "year"),
    **dict.fromkeys(("month", "months", "mon"), "month"),
    **dict.fromkeys(("day", "days", "dayofmonth", "d"), "day"),
    **dict.fromkeys(("quarter", "quarters"), "quarter"),
}


def day_field(days: torch.Tensor, field: str) -> torch.Tensor:
    """EXTRACT(field) of day counts (int64): year, month, day and quarter
    by one kernel on a GPU (no read of the days' range, :func:`per_day`'s
    host synchronisation); the others, and the CPU, per day of the range.

    >>> day_field(torch.tensor([11016, 0]), "yr").tolist()
    [2000, 1970]
    """
    civil = _CIVIL_NAMES.get(field)
    if civil is not None and use_triton(days):
        return civil_field_triton(days, civil)
    return per_day(days, lambda d: _extract_field(field, d))


# ------------------------------------------------------------------ functions
def _date_column(col: Column, what: str) -> None:
    if col.dtype.kind != "DATE":
        raise NotSupported(f"{what} of {col.dtype} (only DATE)")


def _century(y: torch.Tensor, size: int) -> torch.Tensor:
    """DuckDB's century/millennium: year 1 starts the first; year 0 is in the -1st."""
    return torch.where(y > 0, _fdiv(y - 1, size) + 1, torch.div(y, size, rounding_mode="trunc") - 1)


def _extract_field(field: str, days: torch.Tensor) -> torch.Tensor:
    y, m, d = civil_from_days(days)
    if field in ("year", "years", "y", "yr", "yrs"):
        return y
    if field in ("month", "months", "mon"):
        return m
    if field in ("day", "days", "dayofmonth", "d"):
        return d
    if field in ("quarter", "quarters"):
        return (m - 1) // 3 + 1
    if field in ("dow", "dayofweek", "weekday"):
        return _dow(days)
    if field == "isodow":
        return (days.long() + 3) % 7 + 1
    if field in ("doy", "dayofyear"):
        return _day_of_year(y, m, d)
    if field in ("week", "weeks", "w", "weekofyear"):
        return _iso_year_week(days)[1]
    if field == "isoyear":
        return _iso_year_week(days)[0]
    if field == "yearweek":
        iy, wk = _iso_year_week(days)
        return iy * 100 + torch.where(iy > 0, wk, -wk)  # DuckDB: year 0 (1 BC) and before count down
    if field == "epoch":
        return days.long() * 86400
    if field in ("decade", "decades"):
        return torch.div(y, 10, rounding_mode="trunc")
    if field in ("century", "centuries"):
        return _century(y, 100)
    if field in ("millennium", "millennia", "millenium"):
        return _century(y, 1000)
    raise NotSupported(f"EXTRACT({field} FROM DATE)")


def extract(field: str, col: Column) -> Column:
    """EXTRACT(field FROM date) as BIGINT; NULL stays NULL.

    ``epoch`` is whole seconds (DuckDB returns the same value as DOUBLE).

    >>> import datetime
    >>> c = Column.from_arrow(pa.array([datetime.date(2021, 1, 1)]))
    >>> [extract(f, c).data.item() for f in ("dow", "isodow", "week", "yearweek", "doy", "century")]
    [5, 5, 53, 202053, 1, 21]
    """
    _date_column(col, "EXTRACT")
    field = field.lower()
    _extract_field(field, col.data[:0])  # rejects an unknown field up front
    return Column(T.BIGINT, day_field(col.data, field), col.valid)


def _add_months(days: torch.Tensor, months: int) -> torch.Tensor:
    """Shift by whole months, clamping the day to the target month's last day."""
    y, m, d = civil_from_days(days)
    total = y * 12 + (m - 1) + months
    ny = _fdiv(total, 12)
    nm = total - ny * 12 + 1
    nd = torch.minimum(d, days_in_month(ny, nm))
    return days_from_civil(ny, nm, nd)


def add_interval(col: Column, months: int, days: int) -> Column:
    """date + INTERVAL 'months months days days' (months first, then days, as
    DuckDB does). Subtract by passing negative amounts.

    >>> import datetime
    >>> c = Column.from_arrow(pa.array([datetime.date(2020, 3, 31)]))
    >>> add_interval(c, -1, 1).to_arrow().to_pylist()
    [datetime.date(2020, 3, 1)]
    """
    _date_column(col, "date + INTERVAL")
    out = col.data.long()
    if months:
        out = per_day(out, lambda d: _add_months(d, months))
    if days:
        out = out + days
    return Column(T.DATE, out.to(torch.int32), col.valid)


def date_trunc(part: str, col: Column) -> Column:
    """DATE_TRUNC to year / quarter / month / week (ISO: Monday) / day.

    >>> import datetime
    >>> c = Column.from_arrow(pa.array([datetime.date(2020, 2, 6)]))
    >>> date_trunc("week", c).to_arrow().to_pylist()
    [datetime.date(2020, 2, 3)]
    """
    _date_column(col, "DATE_TRUNC")
    part = part.lower()
    days = col.data.long()
    if part in ("day", "days", "d", "dayofmonth"):
        out = days
    elif part in ("week", "weeks", "w", "weekofyear"):
        out = days - (days + 3) % 7
    elif part in ("month", "months", "mon", "quarter", "quarters", "year", "years", "y", "yr", "yrs"):
        out = per_day(days, lambda d: _first_of(part[0], d))
    else:
        raise NotSupported(f"DATE_TRUNC('{part}', DATE)")
    return Column(T.DATE, out.to(torch.int32), col.valid)


def _first_of(unit: str, days: torch.Tensor) -> torch.Tensor:
    """The first day of the year ('y'), quarter ('q') or month ('m') of each day."""
    y, m, _ = civil_from_days(days)
    if unit == "q":
        m = (m - 1) // 3 * 3 + 1
    elif unit == "y":
        m = torch.ones_like(m)
    return days_from_civil(y, m, torch.ones_like(m))


def _and_valid(*cols: Column) -> torch.Tensor | None:
    valid = None
    for c in cols:
        if c.valid is not None:
            valid = c.valid if valid is None else valid & c.valid
    return valid


def _month_index(days: torch.Tensor) -> torch.Tensor:
    """Months since year 0: year * 12 + month - 1."""
    y, m, _ = civil_from_days(days)
    return y * 12 + m - 1


def date_diff(part: str, a: Column, b: Column) -> Column:
    """DATE_DIFF(part, a, b): calendar boundaries of `part` crossed going from a
    to b (so 2024-12-31 -> 2025-01-01 is one year); ``week`` is whole 7-day
    spans, truncated toward zero, as in DuckDB.

    >>> import datetime
    >>> a = Column.from_arrow(pa.array([datetime.date(2024, 1, 31)]))
    >>> b = Column.from_arrow(pa.array([datetime.date(2024, 2, 1)]))
    >>> [date_diff(p, a, b).data.item() for p in ("year", "month", "day")]
    [0, 1, 1]
    """
    _date_column(a, "DATE_DIFF")
    _date_column(b, "DATE_DIFF")
    part = part.lower()
    da, db = a.data.long(), b.data.long()
    if part in ("day", "days", "d", "dayofmonth"):
        out = db - da
    elif part in ("week", "weeks", "w", "weekofyear"):
        out = torch.div(db - da, 7, rounding_mode="trunc")
    elif part in ("month", "months", "mon", "quarter", "quarters", "year", "years", "y", "yr", "yrs"):
        ma, mb = per_day(da, _month_index), per_day(db, _month_index)
        step = {"y": 12, "q": 3, "m": 1}[part[0]]
        out = _fdiv(mb, step) - _fdiv(ma, step)
    else:
        raise NotSupported(f"DATE_DIFF('{part}', DATE, DATE)")
    return Column(T.BIGINT, out, _and_valid(a, b))


def _int_operand(x: Column | int, like: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None, int]:
    if isinstance(x, Column):
        if not x.dtype.is_integer:
            raise NotSupported(f"MAKE_DATE argument of type {x.dtype}")
        return x.data.long(), x.valid, len(x)
    device = like.device if like is not None else "cpu"
    return torch.tensor([int(x)], dtype=torch.int64, device=device), None, -1


def make_date(year: Column | int, month: Column | int, day: Column | int) -> Column:
    """MAKE_DATE(y, m, d); a non-NULL invalid triple raises like DuckDB
    ("Conversion Error: Date out of range: 2020-2-30"). Arguments may be Python ints (constants).

    >>> make_date(Column.from_arrow(pa.array([2020, 2021])), 2, 29).to_arrow().to_pylist()
    Traceback (most recent call last):
    ...
    glint.errors.ExecutionError: Conversion Error: Date out of range: 2021-2-29
    """
    ref = next((c.data for c in (year, month, day) if isinstance(c, Column)), None)
    parts = [_int_operand(x, ref) for x in (year, month, day)]
    n = max(p[2] for p in parts)
    n = 1 if n < 0 else n
    y, m, d = (p[0].expand(n) if p[2] < 0 else p[0] for p in parts)
    valid = None
    for p in parts:
        if p[1] is not None:
            valid = p[1] if valid is None else valid & p[1]
    ok = (m >= 1) & (m <= 12) & (d >= 1) & (d <= days_in_month(y, m))
    days = days_from_civil(y, m, d)
    ok &= (days >= MIN_DAYS) & (days <= MAX_DAYS)
    bad = ~ok if valid is None else valid & ~ok
    if bool(bad.any()):
        i = int(bad.nonzero()[0, 0])
        raise ExecutionError(f"Conversion Error: Date out of range: {int(y[i])}-{int(m[i])}-{int(d[i])}")
    days = torch.where(ok, days, torch.zeros_like(days))
    return Column(T.DATE, days.to(torch.int32), valid)


# --------------------------------------------------------- parsing / printing
_WS = " \t\n\v\f\r"
# YYYY-MM-DD with '-', '/' or ' ' (the same twice, checked after matching);
# after the day anything but a digit may follow (DuckDB ignores a time part or
# other trailing text), and a trailing "(BC)" flips the era.
_DATE_RE = (
    r"(?s)^[ \t\n\v\f\r]*(?P<y>[0-9]{1,7})(?P<s1>[-/ ])(?P<m>[0-9]{1,2})(?P<s2>[-/ ])"
    r"(?P<d>[0-9]{1,2})(?P<rest>(?:[^0-9].*)?)$"
)
_BC_RE = r"^[ \t\n\v\f\r]*\(BC\)"


def _field(parts: pa.StructArray, name: str) -> pa.Array:
    return pc.struct_field(parts, name).fill_null("")


def _digits_to_int(s: pa.Array) -> np.ndarray:
    s = pc.if_else(pc.equal(pc.utf8_length(s), 0), "0", s)
    return pc.cast(s, pa.int64()).to_numpy(zero_copy_only=False)


def parse_dates(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised DATE parsing of a string array: (int32 days, parsed-ok mask).

    >>> days, ok = parse_dates(pa.array(["1995-03-15", "1995/3/5", "1995-02-29", "x"]))
    >>> days.tolist(), ok.tolist()
    ([9204, 9194, 0, 0], [True, True, False, False])
    """
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    n = len(values)
    if n == 0:
        return np.zeros(0, np.int32), np.zeros(0, bool)
    parts = pc.extract_regex(values, _DATE_RE)
    matched = parts.is_valid().to_numpy(zero_copy_only=False) & values.is_valid().to_numpy(zero_copy_only=False)
    same_sep = pc.equal(_field(parts, "s1"), _field(parts, "s2")).fill_null(False).to_numpy(zero_copy_only=False)
    y = _digits_to_int(_field(parts, "y"))
    m = _digits_to_int(_field(parts, "m"))
    d = _digits_to_int(_field(parts, "d"))
    bc = pc.match_substring_regex(_field(parts, "rest"), _BC_RE).to_numpy(zero_copy_only=False)
    y = np.where(bc, 1 - y, y)
    epoch = pc.equal(pc.utf8_lower(pc.utf8_trim(values, _WS)), "epoch").fill_null(False).to_numpy(zero_copy_only=False)
    yt, mt, dt = (torch.from_numpy(np.array(a, dtype=np.int64)) for a in (y, m, d))  # writable copies
    ok = matched & same_sep
    ok &= ((mt >= 1) & (mt <= 12) & (dt >= 1) & (dt <= days_in_month(yt, mt))).numpy()
    days = days_from_civil(yt, mt, dt).numpy()
    ok &= (days >= MIN_DAYS) & (days <= MAX_DAYS)
    days = np.where(ok, days, 0)
    ok |= epoch
    # 'infinity' / '-infinity' (DuckDB keeps the int32 extremes for them)
    word = pc.utf8_lower(pc.utf8_trim(values, _WS))
    for text, value in (("infinity", INFINITY), ("-infinity", -INFINITY)):
        hit = pc.equal(word, text).fill_null(False).to_numpy(zero_copy_only=False)
        days = np.where(hit, value, days)
        ok |= hit
    return days.astype(np.int32), ok


_ISO_DATE = re.compile(r"\s*([0-9]{4})-([0-9]{2})-([0-9]{2})\s*", re.ASCII)
_EPOCH = datetime.date(1970, 1, 1)


def parse_date(s: str) -> int:
    """Days since 1970-01-01 of a DATE literal, accepting what DuckDB's CAST
    accepts ('1995-03-15', '1995/3/5', '1995-03-15 10:00:00', '0044-03-15 (BC)').

    >>> parse_date("1970-01-02"), parse_date(" 2000/2/29 ")
    (1, 11016)
    >>> parse_date("2001-02-29")
    Traceback (most recent call last):
    ...
    glint.errors.ExecutionError: invalid date '2001-02-29'
    """
    m = _ISO_DATE.fullmatch(s)
    if m is not None:  # the common literal, without the vectorised parser's Arrow calls
        try:
            return (datetime.date(int(m[1]), int(m[2]), int(m[3])) - _EPOCH).days
        except ValueError:
            pass  # (an invalid day: the parser below raises its error)
    days, ok = parse_dates(pa.array([s], pa.string()))
    if not ok[0]:
        raise ExecutionError(f"invalid date '{s}'")
    return int(days[0])
