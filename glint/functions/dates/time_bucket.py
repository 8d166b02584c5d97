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


def _epoch_months(micros: torch.Tensor) -> torch.Tensor:
    y, m, _ = civil_from_days(torch.div(micros, MICROS_PER_DAY, rounding_mode="floor"))
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
        raise ExecutionError("Out of Range Error: Overflow in subtraction of INT64")
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
    is_date = col.dtype.kind == "DATE"
    valid = and_valid(col.valid, origin.valid if origin is not None else None)
    inf = infinite(col.data)
    if valid is not None and not bool(valid.any()):
        return Column.nulls(col.dtype, len(col), col.device)
    kind = width_kind(width)
    ts = from_date(col) if is_date else col
    clean = Column(T.TIMESTAMP, torch.where(inf, 0, ts.data), valid)
    if offset is not None and is_date and kind == "months":
        # DuckDB adds an INTERVAL to a DATE in whole days: the microseconds truncated to days
        offset = (offset[0], offset[1] + _c_div(offset[2], MICROS_PER_DAY), 0)
    if offset is not None:
        clean = add_interval(clean, -offset[0], -offset[1], -offset[2])
    org = None
    if origin is not None:
        o = from_date(origin) if origin.dtype.kind == "DATE" else origin
        org_inf = infinite(origin.data)
        valid = and_valid(valid, ~org_inf)
        org = torch.where(org_inf, 0, o.data)
    v = clean.data
    if kind == "micros":
        step = width[1] * MICROS_PER_DAY + width[2]
        out = _bucket(v, step, org if org is not None else DEFAULT_ORIGIN_MICROS, _ok(valid, inf))
    else:
        months = _epoch_months(v)
        start = _epoch_months(org) if org is not None else DEFAULT_ORIGIN_MONTHS
        m = _bucket(months, width[0], start, _ok(valid, inf))
        year = torch.div(m, 12, rounding_mode="floor") + 1970
        out = days_from_civil(year, m - (year - 1970) * 12 + 1, torch.ones_like(m)) * MICROS_PER_DAY
    result = Column(T.TIMESTAMP, out if valid is None else torch.where(valid, out, 0), valid)
    if offset is not None:
        result = add_interval(result, *offset)
    out = torch.where(inf, ts.data, result.data)
    if valid is not None:
        out = torch.where(valid, out, 0)
    res = Column(T.TIMESTAMP, out, valid)
    return to_date(res) if is_date else res


def _ok(valid, inf: torch.Tensor) -> torch.Tensor:
    return ~inf if valid is None else valid & ~inf
