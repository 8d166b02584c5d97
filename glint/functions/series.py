"""generate_series and range: the values from a start to a stop by a step, as
DuckDB makes them.

- ``range(stop)``, ``range(start, stop)``, ``range(start, stop, step)`` over
  BIGINT (the default start is 0, the default step 1); ``generate_series``
  takes the same arguments and includes ``stop`` when the steps reach it;
- over TIMESTAMP (or DATE, read as TIMESTAMP) with an INTERVAL step: each
  value is the one before it plus the step (so a month step from January 31st
  gives February 29th, then March 29th);
- a step of 0 is an error, a NULL argument gives no rows, a step that moves
  away from the stop gives no rows.

>>> from glint.plan.expr import Literal
>>> big = lambda v: Literal(v, T.BIGINT)
>>> series([big(10), big(0), big(-3)], "range")
SeriesSpec(start=10, step=-3, count=4, type=BIGINT, values=())
>>> series([big(10), big(0), big(-3)], "generate_series").count
4
>>> series([big(0), big(9), big(3)], "generate_series").count
4
"""

from __future__ import annotations

from dataclasses import dataclass

from glint.columnar import types as T
from glint.errors import BinderError
from glint.plan.expr import Literal

_DAY_US = 86_400_000_000
_TS_MIN, _TS_MAX = -(2**63) + 1, 2**63 - 2  # DuckDB's finite TIMESTAMP range in microseconds


@dataclass(frozen=True, slots=True)
class SeriesSpec:
    """``count`` values ``start + k * step`` of ``type``, or, for a step of
    months, the values themselves (``values``, in microseconds)."""

    start: int
    step: int
    count: int
    type: T.DataType
    values: tuple[int, ...] = ()


def element_type(elements: list[tuple[T.DataType, bool]], fn: str = "unnest") -> T.DataType:
    """The type of a list's elements, from each element's (type, is a string
    literal), as DuckDB unifies them: string literals take the other elements'
    type (all strings: VARCHAR), numbers the wider number, BOOLEAN and an
    integer the integer; no elements, or only NULLs, are INTEGER.

    >>> element_type([(T.INTEGER, False), (T.DECIMAL(2, 1), False)]), element_type([(T.VARCHAR, True), (T.INTEGER, False)])
    (DECIMAL(11,1), INTEGER)
    """
    typed = [t for t, lit in elements if not lit and t.kind != "NULL"] or [t for t, _ in elements]
    acc = T.NULLTYPE
    for t in typed:
        if t.kind == "NULL" or t == acc:
            continue
        if acc.kind == "NULL":
            acc = t
        elif acc.is_numeric and t.is_numeric:
            acc = T.common_type(acc, t)
        elif "BOOLEAN" in (acc.kind, t.kind) and (acc.is_integer or t.is_integer):
            acc = acc if acc.is_integer else t
        else:
            raise BinderError(
                f"Cannot deduce template type 'T' in function: 'list_value(T, [T...]) -> T[]' ({acc} and {t})"
            )
    return T.INTEGER if acc.kind == "NULL" else acc


def no_match(fn: str, args) -> BinderError:
    types = ", ".join("NULL" if a.type.kind == "NULL" else str(a.type) for a in args)
    return BinderError(
        f"No function matches the given name and argument types '{fn}({types})'. "
        "You might need to add explicit type casts."
    )


def series(args: list[Literal], fn: str) -> SeriesSpec:
    """The values of ``fn(args)`` (``fn``: generate_series or range) for
    constant arguments."""
    inclusive = fn == "generate_series"
    if not 1 <= len(args) <= 3:
        raise no_match(fn, args)
    if len(args) == 3 and args[2].type.kind == "INTERVAL":
        return _timestamps(args, fn, inclusive)
    if any(a.type.kind not in ("INTEGER", "BIGINT", "NULL") for a in args):
        raise no_match(fn, args)
    values = [a.value for a in args]
    start, stop, step = (0, values[0], 1) if len(values) == 1 else (values[0], values[1], 1)
    if len(values) == 3:
        step = values[2]
    if step == 0:
        raise BinderError("interval cannot be 0!")
    if None in (start, stop, step):
        return SeriesSpec(0, 1, 0, T.BIGINT)
    return SeriesSpec(start, step, _count(start, stop, step, inclusive), T.BIGINT)


def _count(start: int, stop: int, step: int, inclusive: bool) -> int:
    """How many of start, start + step, ... come before stop (or reach it)."""
    span = stop - start if step > 0 else start - stop
    s = abs(step)
    if span < 0 or (span == 0 and not inclusive):
        return 0
    return span // s + 1 if inclusive else -(-span // s)


def _timestamps(args: list[Literal], fn: str, inclusive: bool) -> SeriesSpec:
    start, stop, step = args
    ends = []
    for a in (start, stop):
        if a.type.kind == "DATE":
            ends.append(None if a.value is None else a.value * _DAY_US)
        elif a.type.kind in ("TIMESTAMP", "NULL"):
            ends.append(a.value)
        else:
            raise no_match(fn, args)
    if step.value is None or None in ends:
        return SeriesSpec(0, 1, 0, T.TIMESTAMP)
    months, days, micros = step.value
    parts = (months, days, micros)
    if all(p == 0 for p in parts):
        raise BinderError("interval cannot be 0!")
    if any(p > 0 for p in parts) and any(p < 0 for p in parts):
        raise BinderError("RANGE with composite interval that has mixed signs is not supported")
    lo, hi = ends
    if months == 0:
        step_us = days * _DAY_US + micros
        return SeriesSpec(lo, step_us, _count(lo, hi, step_us, inclusive), T.TIMESTAMP)
    up = any(p > 0 for p in parts)
    values, v = [], lo
    while (v < hi or (inclusive and v == hi)) if up else (v > hi or (inclusive and v == hi)):
        values.append(v)
        v = add_interval(v, months, days, micros)
        if not _TS_MIN <= v <= _TS_MAX:
            break
    return SeriesSpec(lo, 0, len(values), T.TIMESTAMP, tuple(values))


def add_interval(ts: int, months: int, days: int, micros: int) -> int:
    """A TIMESTAMP (microseconds) plus an INTERVAL, months first (clamped to
    the month's last day), then days, then microseconds.

    >>> jan31 = 19753 * _DAY_US  # 2024-01-31
    >>> (add_interval(jan31, 1, 0, 0) // _DAY_US) - 19753
    29
    """
    day, tod = divmod(ts, _DAY_US)
    y, m, d = _civil(day)
    total = y * 12 + (m - 1) + months
    y, m = divmod(total, 12)
    m += 1
    d = min(d, _month_days(y, m))
    return (_days(y, m, d) + days) * _DAY_US + tod + micros


def _civil(z: int) -> tuple[int, int, int]:
    """(year, month, day) of a day number (days since 1970-01-01)."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (m <= 2), m, d)


def _days(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _month_days(y: int, m: int) -> int:
    if m == 2:
        return 29 if (y % 4 == 0 and y % 100 != 0) or y % 400 == 0 else 28
    return 31 if m in (1, 3, 5, 7, 8, 10, 12) else 30
