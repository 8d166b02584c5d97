"""time_bucket(width, x [, offset | origin]): DATE and TIMESTAMP values
truncated to buckets of a constant INTERVAL, as DuckDB 1.4 computes them.

A width of days and smaller units buckets microseconds since an origin
(2000-01-03, a Monday, unless given); a width of months buckets months since
2000-01-01; a width mixing both is DuckDB's error. An offset moves the
buckets' edges; an infinite value stays as it is, and an infinite origin
gives NULL.

>>> import datetime
>>> import pyarrow as pa
>>> ts = Column.from_arrow(pa.array([datetime.datetime(2024, 5, 17, 13, 45)]))
>>> time_bucket(ts, (0, 0, 15 * 60 * 10**6)).to_arrow().to_pylist()
[datetime.datetime(2024, 5, 17, 13, 45)]
>>> time_bucket(ts, (3, 0, 0)).to_arrow().to_pylist()
[datetime.datetime(2024, 4, 1, 0, 0)]
>>> time_bucket(ts, (0, 7, 0)).to_arrow().to_pylist()
[datetime.datetime(2024, 5, 13, 0, 0)]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.calendar import civil_from_days, days_from_civil
from glint.columnar.column import Column
from glint.columnar.timestamp_text import MICROS_PER_DAY
from glint.errors import ExecutionError
from glint.functions.dates import days
from glint.functions.dates.timestamps import add_interval, from_date, infinite, to_date
from glint.functions.validity import and_valid

DEFAULT_ORIGIN_MICROS = 10959 * MICROS_PER_DAY  # 2000-01-03, a Monday
DEFAULT_ORIGIN_MONTHS = 360  # 2000-01


def width_kind(width: tuple[int, int, int]) -> str:
    """ "micros" or "months", or DuckDB's error for a width it cannot bucket by."""
    months, days, micros = width
    if months == 0:
        if days * MICROS_PER_DAY + micros <= 0:
            raise ExecutionError("Not implemented Error: Period must be greater than 0")
        return "micros"
    if days == 0 and micros == 0:
        if months < 0:
            raise ExecutionError("Not implemented Error: Period must be greater than 0")
        return "months"
    raise ExecutionError("Not implemented Error: Month intervals cannot have day or time component")


def _epoch_months(day: torch.Tensor) -> torch.Tensor:
    y, m, _ = civil_from_days(day)
    return (y - 1970) * 12 + m - 1


def _bucket(ts: torch.Tensor, width: int, origin: torch.Tensor | int, valid) -> torch.Tensor:
    """DuckDB's Width...Common: origin taken modulo the width (a C remainder),
    then the floor of (ts - origin) / width, scaled back."""
    origin = torch.fmod(origin, width) if isinstance(origin, torch.Tensor) else _c_mod(origin, width)
    shifted = ts - origin
    over = ((ts ^ origin) & (ts ^ shifted)) < 0  # int64 overflow of ts - origin
    if valid is not None:
        over &= valid
    if bool(over.any()):
        i = int(over.nonzero()[0, 0])
        o = int(origin[i]) if isinstance(origin, torch.Tensor) else origin
        raise ExecutionError(f"Out of Range Error: Overflow in subtraction of INT64 ({int(ts[i])} - {o})!")
    return torch.div(shifted, width, rounding_mode="floor") * width + origin


def _c_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def _c_mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def time_bucket(
    col: Column,
    width: tuple[int, int, int],
    offset: tuple[int, int, int] | None = None,
    origin: Column | None = None,
) -> Column:
    """time_bucket of a DATE or TIMESTAMP column (the result has its type)."""
    valid = and_valid(col.valid, origin.valid if origin is not None else None)
    if valid is not None and not bool(valid.any()):
        return Column.nulls(col.dtype, len(col), col.device)
    inf = infinite(col.data)
    org = None
    if origin is not None:  # an infinite origin gives NULL
        org_inf = infinite(origin.data)
        valid = and_valid(valid, ~org_inf)
        org = Column(origin.dtype, torch.where(org_inf, 0, origin.data), valid)
    ok = _ok(valid, inf)
    clean = Column(col.dtype, torch.where(inf, 0, col.data), valid)
    if width_kind(width) == "micros":
        out = _by_micros(clean, width[1] * MICROS_PER_DAY + width[2], offset, org, ok)
    else:
        out = _by_months(clean, width[0], offset, org, ok)
    out = torch.where(inf, col.data, out.to(col.data.dtype))
    if valid is not None:
        out = torch.where(valid, out, 0)
    return Column(col.dtype, out, valid)


def _by_micros(col: Column, step: int, offset, origin: Column | None, ok) -> torch.Tensor:
    """Buckets of ``step`` microseconds; a DATE goes through TIMESTAMP and back, as DuckDB casts it."""
    ts = from_date(col) if col.dtype.kind == "DATE" else col
    if offset is not None:
        ts = add_interval(ts, -offset[0], -offset[1], -offset[2])
    start = DEFAULT_ORIGIN_MICROS
    if origin is not None:
        start = (from_date(origin) if origin.dtype.kind == "DATE" else origin).data
    out = Column(T.TIMESTAMP, _bucket(ts.data, step, start, ok), col.valid)
    if offset is not None:
        out = add_interval(out, *offset)
    return to_date(out).data if col.dtype.kind == "DATE" else out.data


def _by_months(col: Column, width: int, offset, origin: Column | None, ok) -> torch.Tensor:
    """Buckets of ``width`` months from the origin's month; a DATE stays a DATE
    throughout (DuckDB adds an INTERVAL to a DATE in whole days: its
    microseconds are truncated to days)."""
    is_date = col.dtype.kind == "DATE"
    if offset is not None and is_date:
        offset = (offset[0], offset[1] + _c_div(offset[2], MICROS_PER_DAY), 0)
    shifted = col
    if offset is not None:
        neg = (-offset[0], -offset[1], -offset[2])
        shifted = days.add_interval(col, neg[0], neg[1]) if is_date else add_interval(col, *neg)
    months = _epoch_months(_days_of(shifted))
    start = _epoch_months(_days_of(origin)) if origin is not None else DEFAULT_ORIGIN_MONTHS
    m = _bucket(months, width, start, ok)
    year = torch.div(m, 12, rounding_mode="floor") + 1970
    first = days_from_civil(year, m - (year - 1970) * 12 + 1, torch.ones_like(m))
    out = Column(T.DATE, first.to(torch.int32), ok)
    if not is_date:  # the first of a month before TIMESTAMP's first day is DuckDB's cast error
        out = from_date(out)
    if offset is not None:
        out = days.add_interval(out, offset[0], offset[1]) if is_date else add_interval(out, *offset)
    return out.data


def _days_of(c: Column) -> torch.Tensor:
    if c.dtype.kind == "DATE":
        return c.data.long()
    return torch.div(c.data, MICROS_PER_DAY, rounding_mode="floor")


def _ok(valid, inf: torch.Tensor) -> torch.Tensor:
    return ~inf if valid is None else valid & ~inf
