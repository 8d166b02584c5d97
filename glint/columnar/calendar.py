"""The proleptic Gregorian calendar on tensors: DATE values (int32 days since
1970-01-01) to and from (year, month, day), and their text as DuckDB prints it.
Shared by the date functions, the timestamp text conversions and the loaders."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

# (year, month, day) of day counts: kept beside its GPU kernel, part of this module's interface
from glint.kernels.calendar import civil_from_days  # noqa: F401

# DuckDB reserves the int32 extremes for -infinity / infinity.
MIN_DAYS = -(2**31) + 2
MAX_DAYS = 2**31 - 2
INFINITY = 2**31 - 1

_CUM_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


# --------------------------------------------------------------- calendar core
def _fdiv(a: torch.Tensor, b: int) -> torch.Tensor:
    return torch.div(a, b, rounding_mode="floor")


def days_from_civil(y: torch.Tensor, m: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """Day counts since 1970-01-01 (int64) for valid (year, month, day) triples.

    >>> days_from_civil(torch.tensor([1970, 2000]), torch.tensor([1, 2]), torch.tensor([1, 29])).tolist()
    [0, 11016]
    """
    y, m, d = y.long(), m.long(), d.long()
    y = y - (m <= 2).long()
    era = _fdiv(y, 400)
    yoe = y - era * 400
    mp = torch.where(m > 2, m - 3, m + 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def is_leap(y: torch.Tensor) -> torch.Tensor:
    return ((y % 4 == 0) & (y % 100 != 0)) | (y % 400 == 0)


def days_in_month(y: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
    """Length of month m (1..12) of year y; m outside 1..12 gives garbage."""
    table = torch.tensor(_MONTH_DAYS, dtype=torch.int64, device=m.device)
    return table[(m.long() - 1).clamp(0, 11)] + ((m == 2) & is_leap(y)).long()


def format_dates(days: torch.Tensor) -> pa.Array:
    """'YYYY-MM-DD' strings (DuckDB's CAST(date AS VARCHAR)) for day counts;
    years <= 0 print as '(BC)' dates, years past 9999 with more digits."""
    days = days.cpu()
    y, m, d = civil_from_days(days)
    bc = (y <= 0).numpy()
    year = torch.where(y <= 0, 1 - y, y).numpy()

    def padded(a: np.ndarray, width: int) -> pa.Array:
        return pc.utf8_lpad(pc.cast(pa.array(a, pa.int64()), pa.string()), width, "0")

    out = pc.binary_join_element_wise(padded(year, 4), padded(m.numpy(), 2), padded(d.numpy(), 2), "-")
    if bc.any():
        out = pc.if_else(pa.array(bc), pc.binary_join_element_wise(out, "(BC)", " "), out)
    inf = days.abs() == INFINITY
    if bool(inf.any()):
        out = pc.if_else(pa.array(inf.numpy()), pc.if_else(pa.array((days > 0).numpy()), "infinity", "-infinity"), out)
    return out


def format_date(days: int) -> str:
    """A DATE as DuckDB prints it.

    >>> format_date(0), format_date(-719162), format_date(-719163)
    ('1970-01-01', '0001-01-01', '0001-12-31 (BC)')
    """
    return format_dates(torch.tensor([int(days)], dtype=torch.int64))[0].as_py()
