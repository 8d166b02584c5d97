"""Calendar functions on TIMESTAMP (int64 microseconds since 1970-01-01) and
their DATE forms, with DuckDB 1.4's semantics.

A timestamp splits into its day (floor of micros / 86400e6, a DATE day
number) and the microseconds of that day, so every date field reuses the
DATE calendar of :mod:`glint.functions.dates.days`. All of it is integer
torch arithmetic on the row tensors (no Python loop over rows), on whatever
device the column is. DuckDB's ``infinity`` / ``-infinity`` (the int64
extremes) make field extraction and differences NULL, and pass through
truncation and interval arithmetic unchanged.

>>> ts = Column(T.TIMESTAMP, torch.tensor([1614834367891234, -1]))
>>> extract("hour", ts).data.tolist(), extract("milliseconds", ts).data.tolist()
([5, 23], [7891, 59999])
>>> trunc("month", ts).dtype, trunc("minute", ts).data.tolist()
(DATE, [1614834360000000, -60000000])
>>> diff("hour", ts, add_interval(ts, 0, 1, 3_600_000_000)).data.tolist()
[25, 25]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column, Dictionary
from glint.columnar.timestamp_text import MICROS_PER_DAY, MICROS_PER_SEC, TS_INFINITY
from glint.errors import ExecutionError, NotSupported
from glint.functions.dates import days as dates

MICROS_PER_MSEC = 1_000
MICROS_PER_MINUTE = 60 * MICROS_PER_SEC
MICROS_PER_HOUR = 60 * MICROS_PER_MINUTE
DATE_INFINITY = 2**31 - 1  # DuckDB's DATE 'infinity'

# DuckDB's date part specifiers (GetDatePartSpecifier), alias -> canonical name
PARTS = {}
for _name, _aliases in {
    "year": ("year", "yr", "y", "years", "yrs"),
    "month": ("month", "mon", "months", "mons"),
    "day": ("day", "days", "d", "dayofmonth"),
    "decade": ("decade", "dec", "decades", "decs"),
    "century": ("century", "cent", "centuries", "c"),
    "millennium": ("millennium", "mil", "millenniums", "millennia", "mils", "millenium"),
    "microseconds": ("microseconds", "microsecond", "us", "usec", "usecs", "usecond", "useconds"),
    "milliseconds": ("milliseconds", "millisecond", "ms", "msec", "msecs", "msecond", "mseconds"),
    "second": ("second", "sec", "seconds", "secs", "s"),
    "minute": ("minute", "min", "minutes", "mins", "m"),
    "hour": ("hour", "hr", "hours", "hrs", "h"),
    "epoch": ("epoch",),
    "dow": ("dow", "dayofweek", "weekday"),
    "isodow": ("isodow",),
    "week": ("week", "weeks", "w", "weekofyear"),
    "doy": ("doy", "dayofyear"),
    "quarter": ("quarter", "quarters"),
    "yearweek": ("yearweek",),
    "isoyear": ("isoyear",),
    "era": ("era",),
    "timezone": ("timezone",),
    "timezone_hour": ("timezone_hour",),
    "timezone_minute": ("timezone_minute",),
    "julian": ("julian", "jd"),
}.items():
    for _a in _aliases:
        PARTS[_a] = _name

# parts below a day, in microseconds
_TIME_UNITS = {
    "microseconds": 1,
    "milliseconds": MICROS_PER_MSEC,
    "second": MICROS_PER_SEC,
    "minute": MICROS_PER_MINUTE,
    "hour": MICROS_PER_HOUR,
    "epoch": MICROS_PER_SEC,
}
# date_trunc parts whose result DuckDB types as DATE (the others give TIMESTAMP)
DATE_TRUNC_PARTS = (
    "year",
    "month",
    "day",
    "decade",
    "century",
    "millennium",
    "dow",
    "isodow",
    "week",
    "doy",
    "quarter",
    "yearweek",
    "isoyear",
    "julian",
)
DOUBLE_PARTS = ("epoch", "julian")
_NO_DIFF = ("era", "timezone", "timezone_hour", "timezone_minute")


def part_name(text: str) -> str:
    """The canonical date part for a specifier, as DuckDB spells it; an
    unknown one is DuckDB's conversion error.

    >>> part_name("Hrs")
    'hour'
    """
    p = PARTS.get(text.lower())
    if p is None:
        raise ExecutionError(f'Conversion Error: extract specifier "{text}" not recognized')
    return p


def _fdiv(a: torch.Tensor, b: int) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="floor")


def _tdiv(a: torch.Tensor, b: int) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="trunc")


def split(v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(day number, microseconds of the day) of int64 timestamps.

    >>> [t.tolist() for t in split(torch.tensor([-1, 86_400_000_000]))]
    [[-1, 1], [86399999999, 0]]
    """
    days = _fdiv(v, MICROS_PER_DAY)
    return days, v - days * MICROS_PER_DAY


def infinite(v: torch.Tensor) -> torch.Tensor:
    """Rows holding TIMESTAMP 'infinity' / '-infinity' (or DATE ones, for int32 data)."""
    if v.dtype == torch.int32:
        return (v == DATE_INFINITY) | (v == -DATE_INFINITY)
    return (v == TS_INFINITY) | (v == -TS_INFINITY)


def _finite_valid(*cols: Column) -> torch.Tensor:
    """Rows that are non-NULL and finite in every column."""
    ok = None
    for c in cols:
        m = ~infinite(c.data)
        if c.valid is not None:
            m = m & c.valid
        ok = m if ok is None else ok & m
    return ok


def _check(bad: torch.Tensor, valid, message) -> None:
    if valid is not None:
        bad = bad & valid
    if bool(bad.any()):
        raise ExecutionError(message(int(bad.nonzero()[0, 0])) if callable(message) else message)


# ------------------------------------------------------------------ DATE <-> TIMESTAMP
def from_date(col: Column, safe: bool = False) -> Column:
    """CAST(date AS TIMESTAMP): midnight of the day; DATE 'infinity' is
    TIMESTAMP 'infinity'; a day beyond TIMESTAMP's range is DuckDB's error
    (NULL with ``safe``: TRY_CAST)."""
    d = col.data.long()
    limit = (TS_INFINITY - 1) // MICROS_PER_DAY
    over = (d.abs() > limit) & (d.abs() != DATE_INFINITY)
    if safe:
        valid = ~over if col.valid is None else col.valid & ~over
        d = torch.where(over, torch.zeros_like(d), d)
        out = torch.where(d.abs() == DATE_INFINITY, torch.sign(d) * TS_INFINITY, d * MICROS_PER_DAY)
        return Column(T.TIMESTAMP, out, None if bool(valid.all()) else valid)
    _check(
        over,
        col.valid,
        lambda i: (
            f"Conversion Error: Type INT32 with value {dates.format_date(int(d[i]))} "
            f"can't be cast to the destination type INT64"
        ),
    )
    out = torch.where(d.abs() == DATE_INFINITY, torch.sign(d) * TS_INFINITY, d * MICROS_PER_DAY)
    return Column(T.TIMESTAMP, out, col.valid)


def to_date(col: Column) -> Column:
    """CAST(timestamp AS DATE): the day the timestamp falls in."""
    v = col.data
    days, _ = split(v)
    days = torch.where(infinite(v), torch.sign(v) * DATE_INFINITY, days)
    return Column(T.DATE, days.to(torch.int32), col.valid)


def as_timestamp(col: Column) -> Column:
    return from_date(col) if col.dtype.kind == "DATE" else col


# ------------------------------------------------------------------ EXTRACT
def extract(part: str, col: Column) -> Column:
    """date_part(part, x) of a DATE or TIMESTAMP column: BIGINT, or DOUBLE for
    ``epoch`` and ``julian``; NULL for an infinite timestamp."""
    if col.dtype.kind == "DATE":
        return _extract_date(part, col)
    v = col.data
    valid = _finite_valid(col)
    if not bool(valid.all()):
        v = torch.where(valid, v, torch.zeros_like(v))
    days, tod = split(v)
    if part in (
        "year",
        "month",
        "day",
        "decade",
        "century",
        "millennium",
        "dow",
        "isodow",
        "week",
        "doy",
        "quarter",
        "yearweek",
        "isoyear",
    ):
        out = dates.day_field(days, part)
    elif part == "era":
        out = (dates.per_day(days, lambda d: dates._extract_field("year", d)) > 0).long()
    elif part in ("timezone", "timezone_hour", "timezone_minute"):
        out = torch.zeros_like(v)
    elif part == "hour":
        out = tod // MICROS_PER_HOUR
    elif part == "minute":
        out = tod // MICROS_PER_MINUTE % 60
    elif part == "second":
        out = tod // MICROS_PER_SEC % 60
    elif part == "milliseconds":
        out = tod % MICROS_PER_MINUTE // MICROS_PER_MSEC
    elif part == "microseconds":
        out = tod % MICROS_PER_MINUTE
    elif part == "epoch":
        out = v.double() / torch.tensor(float(MICROS_PER_SEC), dtype=torch.float64, device=v.device)
    elif part == "julian":
        day_fraction = tod.double() / torch.tensor(float(MICROS_PER_DAY), dtype=torch.float64, device=v.device)
        out = day_fraction + (days + 2440588).double()
    else:
        raise NotSupported(f"EXTRACT({part} FROM TIMESTAMP)")
    return Column(T.DOUBLE if part in DOUBLE_PARTS else T.BIGINT, out, None if bool(valid.all()) else valid)


def _extract_date(part: str, col: Column) -> Column:
    valid = _finite_valid(col)  # DATE 'infinity' has no parts
    if bool(valid.all()):
        valid = None
    else:
        col = Column(col.dtype, torch.where(valid, col.data, torch.zeros_like(col.data)), valid)
    days = col.data.long()
    if part in ("timezone", "timezone_hour", "timezone_minute"):
        raise ExecutionError(f'Not implemented Error: "date" units "{part}" not recognized')
    if part in _TIME_UNITS and part != "epoch":
        return Column(T.BIGINT, torch.zeros_like(days), col.valid)
    if part == "epoch":
        return Column(T.DOUBLE, (days * 86400).double(), col.valid)
    if part == "julian":
        return Column(T.DOUBLE, (days + 2440588).double(), col.valid)
    if part == "era":
        year = dates.per_day(days, lambda d: dates._extract_field("year", d))
        return Column(T.BIGINT, (year > 0).long(), col.valid)
    return Column(T.BIGINT, dates.day_field(days, part), col.valid)


def epoch_unit(unit: str, col: Column) -> Column:
    """epoch_ms / epoch_us / epoch_ns of a TIMESTAMP (or DATE): BIGINT counts
    since 1970, truncated toward zero; NULL for an infinite timestamp."""
    ts = as_timestamp(col)
    v = ts.data
    valid = _finite_valid(ts)
    v = torch.where(valid, v, torch.zeros_like(v))
    if unit == "ms":
        out = _tdiv(v, MICROS_PER_MSEC)
    elif unit == "us":
        out = v
    else:
        _check(
            v.abs() > (2**63 - 1) // 1000, valid, "Conversion Error: Could not convert Timestamp(US) to Timestamp(NS)"
        )
        out = v * 1000
    return Column(T.BIGINT, out, None if bool(valid.all()) else valid)


# ------------------------------------------------------------------ date_trunc
def trunc(part: str, col: Column) -> Column:
    """date_trunc(part, x) of a DATE or TIMESTAMP: a DATE for parts of a day
    or longer, a TIMESTAMP for shorter ones (DuckDB's types for a constant
    part). Infinite timestamps stay infinite."""
    to_date_type = part in DATE_TRUNC_PARTS
    if part not in DATE_TRUNC_PARTS and part not in _TIME_UNITS:
        raise ExecutionError("Not implemented Error: Specifier type not implemented for DATETRUNC")
    if col.dtype.kind == "DATE":
        if not to_date_type:
            return from_date(col)
        days = col.data.long()
        return Column(T.DATE, _trunc_days(part, days).to(torch.int32), col.valid)
    v = col.data
    inf = infinite(v)
    if to_date_type:
        days = _trunc_days(part, split(torch.where(inf, torch.zeros_like(v), v))[0])
        days = torch.where(inf, torch.sign(v) * DATE_INFINITY, days)
        return Column(T.DATE, days.to(torch.int32), col.valid)
    unit = _TIME_UNITS[part]
    out = v if unit == 1 else torch.where(inf, v, _fdiv(v, unit) * unit)
    return Column(T.TIMESTAMP, out, col.valid)


def _trunc_days(part: str, days: torch.Tensor) -> torch.Tensor:
    if part in ("day", "dow", "isodow", "doy", "julian"):
        return days
    if part in ("week", "yearweek"):
        return days - (days + 3) % 7  # Monday
    if part in ("month", "quarter", "year"):
        return dates.per_day(days, lambda d: dates._first_of(part[0], d))
    if part == "isoyear":

        def monday_of_week_one(d):
            iy, _ = dates._iso_year_week(d)
            jan4 = dates.days_from_civil(iy, torch.ones_like(iy), torch.full_like(iy, 4))
            return jan4 - (jan4 + 3) % 7

        return dates.per_day(days, monday_of_week_one)
    size = {"decade": 10, "century": 100, "millennium": 1000}[part]

    def first_of_span(d):
        y, _, _ = dates.civil_from_days(d)
        y = _tdiv(y, size) * size  # C division, as DuckDB
        return dates.days_from_civil(y, torch.ones_like(y), torch.ones_like(y))

    return dates.per_day(days, first_of_span)


# ------------------------------------------------------------------ interval arithmetic
_MAX_DAY, _MAX_TOD = divmod(TS_INFINITY - 1, MICROS_PER_DAY)  # the last valid (day, microsecond)
# DuckDB forms a timestamp as day * 86400e6 + time in int64: the first day whose product fits
_MIN_DAY = -((2**63) // MICROS_PER_DAY)


def add_interval(col: Column, months: int, days: int, micros: int) -> Column:
    """date or timestamp + INTERVAL (months, days, micros) as a TIMESTAMP:
    months first (the day clamped to the target month's end), then days and
    microseconds, as DuckDB's Interval::Add; infinite timestamps stay
    infinite; a result beyond TIMESTAMP's range is DuckDB's error. The sum is
    formed as (day, microsecond of day), so no intermediate overflows."""
    if col.dtype.kind == "DATE":
        day, tod = col.data.long(), torch.zeros_like(col.data, dtype=torch.int64)
        inf = day.abs() == DATE_INFINITY
        day = torch.where(inf, torch.zeros_like(day), day)
        keep = torch.sign(col.data.long()) * TS_INFINITY
    else:
        v = col.data
        inf = infinite(v)
        day, tod = split(torch.where(inf, torch.zeros_like(v), v))
        keep = v
    if months:
        day = dates.per_day(day, lambda d: dates._add_months(d, months))
        _check((day < dates.MIN_DAYS) | (day > dates.MAX_DAYS), col.valid, lambda i: _date_range_error(day[i]))
    carry_days, rest = divmod(days * MICROS_PER_DAY + micros, MICROS_PER_DAY)
    tod = tod + rest
    carry = (tod >= MICROS_PER_DAY).long()
    tod = tod - carry * MICROS_PER_DAY
    day = day + carry + carry_days
    ok = (day >= _MIN_DAY) & ((day < _MAX_DAY) | ((day == _MAX_DAY) & (tod <= _MAX_TOD)))
    _check(~ok & ~inf, col.valid, "Conversion Error: Date and time not in timestamp range")
    day = torch.where(ok, day, torch.zeros_like(day))
    tod = torch.where(ok, tod, torch.zeros_like(tod))
    # (day + 1) * D + (tod - D) stays in int64 on the last valid negative day
    out = torch.where(day < 0, (day + 1) * MICROS_PER_DAY + (tod - MICROS_PER_DAY), day * MICROS_PER_DAY + tod)
    return Column(T.TIMESTAMP, torch.where(inf, keep, out), col.valid)


def _date_range_error(day: torch.Tensor) -> str:
    y, m, d = (int(t) for t in dates.civil_from_days(day.reshape(1)))
    return f"Conversion Error: Date out of range: {y}-{m}-{d}"


# ------------------------------------------------------------------ date_diff / date_sub
def diff(part: str, a: Column, b: Column) -> Column:
    """date_diff(part, a, b): the boundaries of ``part`` crossed going from a
    to b (DuckDB 1.4); ``week`` counts whole 7-day spans of the days. NULL
    where either side is NULL or infinite."""
    if part in _NO_DIFF:
        raise ExecutionError("Not implemented Error: Specifier type not implemented for DATEDIFF")
    valid = _finite_valid(a, b)
    (da, ta), (db, tb) = _day_and_time(a, valid), _day_and_time(b, valid)
    if part in _TIME_UNITS:
        unit = _TIME_UNITS[part]  # divides a day: floor(micros / unit) without overflow
        out = (db - da) * (MICROS_PER_DAY // unit) + (tb // unit - ta // unit)
        if unit == 1:  # DuckDB subtracts the microseconds with an overflow check
            x, y = da * MICROS_PER_DAY + ta, db * MICROS_PER_DAY + tb
            _check(
                ((y ^ x) & (y ^ (y - x))) < 0,
                valid,
                lambda i: f"Out of Range Error: Overflow in subtraction of INT64 ({int(y[i])} - {int(x[i])})!",
            )
    elif part in ("day", "dow", "isodow", "doy", "julian"):
        out = db - da
    elif part in ("week", "yearweek"):
        out = _tdiv(db - da, 7)
    elif part in ("month", "quarter", "year"):
        ma, mb = dates.per_day(da, dates._month_index), dates.per_day(db, dates._month_index)
        step = {"y": 12, "q": 3, "m": 1}[part[0]]
        div = _tdiv if part == "quarter" else _fdiv  # DuckDB: C division of the month index by 3
        out = div(mb, step) - div(ma, step)
    elif part == "isoyear":
        iso_year = lambda d: dates._iso_year_week(d)[0]  # noqa: E731
        out = dates.per_day(db, iso_year) - dates.per_day(da, iso_year)
    else:
        size = {"decade": 10, "century": 100, "millennium": 1000}[part]
        year = lambda d: dates.civil_from_days(d)[0]  # noqa: E731
        out = _tdiv(dates.per_day(db, year), size) - _tdiv(dates.per_day(da, year), size)
    return Column(T.BIGINT, out, None if bool(valid.all()) else valid)


def _day_and_time(c: Column, valid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(day number, microsecond of the day) of a DATE or TIMESTAMP column (0 where not valid)."""
    v = torch.where(valid, c.data, torch.zeros_like(c.data)).long()
    if c.dtype.kind == "DATE":
        return v, torch.zeros_like(v)
    return split(v)


_MONTHS_PER = {"month": 1, "quarter": 3, "year": 12, "isoyear": 12, "decade": 120, "century": 1200, "millennium": 12000}


def sub(part: str, a: Column, b: Column) -> Column:
    """date_sub(part, a, b): the number of whole ``part`` s from a to b
    (negative when b is before a), DuckDB's DateSub: months count whole
    calendar months (a month ending on its last day is whole), the other
    parts divide the microseconds between the two, truncating."""
    if part in _NO_DIFF:
        raise ExecutionError("Not implemented Error: Specifier type not implemented for DATESUB")
    a, b = as_timestamp(a), as_timestamp(b)
    valid = _finite_valid(a, b)
    x = torch.where(valid, a.data, torch.zeros_like(a.data))
    y = torch.where(valid, b.data, torch.zeros_like(b.data))
    if part in _MONTHS_PER:
        out = _tdiv(_whole_months(x, y), _MONTHS_PER[part])
    else:
        delta = y - x
        over = ((y ^ x) & (y ^ delta)) < 0  # int64 overflow of y - x
        _check(
            over, valid, lambda i: f"Out of Range Error: Overflow in subtraction of INT64 ({int(y[i])} - {int(x[i])})!"
        )
        unit = _TIME_UNITS.get(part) or {"week": 7 * MICROS_PER_DAY, "yearweek": 7 * MICROS_PER_DAY}.get(
            part, MICROS_PER_DAY
        )
        out = _tdiv(delta, unit)
    return Column(T.BIGINT, out, None if bool(valid.all()) else valid)


def _whole_months(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Whole months from x to y (signed), as DuckDB's DateSub::MonthOperator:
    the months between the calendar dates, less one when the end's day and
    time come before the start's, where an end on its month's last day
    counts as later than any later start day."""
    lo, hi = torch.minimum(x, y), torch.maximum(x, y)
    ds, ts = split(lo)
    de, te = split(hi)
    ys, ms, dd_s = dates.civil_from_days(ds)
    ye, me, dd_e = dates.civil_from_days(de)
    months = (ye * 12 + me) - (ys * 12 + ms)
    last_day = dd_e == dates.days_in_month(ye, me)
    earlier = (dd_e < dd_s) | ((dd_e == dd_s) & (te < ts))
    borrow = torch.where(last_day, (dd_s >= dd_e) & (ts > te), earlier)
    out = months - borrow.long()
    return torch.where(x > y, -out, out)


# ------------------------------------------------------------------ constructors
def from_micros(col: Column) -> Column:
    """make_timestamp(micros): a BIGINT count of microseconds since 1970."""
    v = col.data.long()
    _check(
        infinite(v) | (v == -(2**63)),
        col.valid,
        lambda i: f"Conversion Error: Timestamp microseconds out of range: {int(v[i])}",
    )
    _check(v < _MIN_DAY * MICROS_PER_DAY, col.valid, "Conversion Error: Date out of range in timestamp conversion")
    return Column(T.TIMESTAMP, v, col.valid)


def from_epoch_ms(col: Column) -> Column:
    """epoch_ms(ms): a BIGINT count of milliseconds since 1970 as TIMESTAMP."""
    v = col.data.long()
    limit = (2**63 - 1) // MICROS_PER_MSEC
    _check((v > limit) | (v < -limit), col.valid, "Conversion Error: Could not convert Timestamp(MS) to Timestamp(US)")
    return Column(T.TIMESTAMP, v * MICROS_PER_MSEC, col.valid)


def make_timestamp(parts: list[Column]) -> Column:
    """make_timestamp(year, month, day, hour, minute, seconds): the seconds a
    DOUBLE rounded to microseconds; an invalid date or time is DuckDB's
    error ("Date out of range: 2021-2-30", "Time out of range: 25:6:7.0")."""
    y, mo, d, h, mi = (p.data.long() for p in parts[:5])
    s = parts[5].data.double()
    valid = None
    for p in parts:
        if p.valid is not None:
            valid = p.valid if valid is None else valid & p.valid
    day = dates.make_date(*(Column(T.BIGINT, t, valid) for t in (y, mo, d)))
    whole = torch.where((s < 0) | (s > 60), torch.round(s), torch.trunc(s))
    whole = torch.where(torch.isfinite(whole), whole, torch.full_like(whole, -1.0))
    sec = whole.long()
    micros = torch.round((s - whole) * 1e6).long()
    ok = (
        (h >= 0)
        & (h < 24)
        & (mi >= 0)
        & (mi < 60)
        & (sec >= 0)
        & (sec <= 60)
        & (micros >= 0)
        & (micros <= MICROS_PER_SEC)
    ) | ((h == 24) & (mi == 0) & (sec == 0) & (micros == 0))
    _check(
        ~ok,
        valid,
        lambda i: f"Conversion Error: Time out of range: {int(h[i])}:{int(mi[i])}:{int(sec[i])}.{int(micros[i])}",
    )
    tod = ((h * 60 + mi) * 60 + sec) * MICROS_PER_SEC + micros
    out = day.data.long() * MICROS_PER_DAY + tod
    _check(
        (out >= TS_INFINITY) | (out <= -TS_INFINITY) | (day.data.long().abs() > 106_751_991),
        valid,
        "Conversion Error: Overflow exception in date/time -> timestamp conversion",
    )
    if valid is not None:
        out = torch.where(valid, out, torch.zeros_like(out))
    return Column(T.TIMESTAMP, out, valid)


# ------------------------------------------------------------------ named days and months, last_day
def calendar_name(part: str, names: tuple[str, ...], col: Column) -> Column:
    """monthname / dayname: the English name of the month (part 'month') or
    weekday (part 'dow', Sunday first) as VARCHAR; NULL for infinity."""
    n = extract(part, col)
    codes = n.data - 1 if part == "month" else n.data
    return Column(T.VARCHAR, codes.to(torch.int32), n.valid, Dictionary.from_pylist(list(names), col.device))


def last_day(col: Column) -> Column:
    """last_day(x): the DATE of the last day of x's month; NULL for infinity."""
    valid = _finite_valid(col)
    days, _ = _day_and_time(col, valid)

    def month_end(d):
        y, m, _ = dates.civil_from_days(d)
        return dates.days_from_civil(y, m, dates.days_in_month(y, m))

    out = dates.per_day(days, month_end)
    return Column(T.DATE, out.to(torch.int32), None if bool(valid.all()) else valid)
