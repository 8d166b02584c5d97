"""Constants written as text: DATE 'text', TIMESTAMP 'text', INTERVAL 'text'
(and the same strings cast to those types), read as DuckDB reads them.

>>> interval_text("1 year 2 months 3 days 04:05:06.5")
(14, 3, 14706500000)
>>> timestamp_literal("1992-01-01 12:30:00.123456")
TIMESTAMP '1992-01-01 12:30:00.123456'
>>> date_literal("1995-3-15")
9204
"""

from __future__ import annotations

import re

from glint.columnar import timestamp_text as text
from glint.columnar import types as T
from glint.errors import ExecutionError, NotSupported
from glint.functions.dates.days import parse_date
from glint.functions.strings.host import cast_error
from glint.plan.expr import Literal


def date_literal(s: str) -> int:
    """Days since 1970 of DATE 'text' (or 'text'::DATE), as DuckDB's CAST reads
    it; DuckDB's error when it does not."""
    try:
        return parse_date(s)
    except ExecutionError:
        raise ExecutionError(cast_error(s, T.DATE)) from None


_US = {"microsecond": 1, "millisecond": 1_000, "second": 1_000_000, "minute": 60_000_000, "hour": 3_600_000_000}
# INTERVAL units (singular, lower case) -> (months, days, microseconds) per unit
_INTERVAL_UNITS = {
    "year": (12, 0, 0),
    "month": (1, 0, 0),
    "day": (0, 1, 0),
    "week": (0, 7, 0),
    "quarter": (3, 0, 0),
    "decade": (120, 0, 0),
    "century": (1200, 0, 0),
    "millennium": (12000, 0, 0),
    **{u: (0, 0, us) for u, us in _US.items()},
}
_UNIT_ALIASES = {
    "years": "year",
    "y": "year",
    "yr": "year",
    "yrs": "year",
    "months": "month",
    "mon": "month",
    "mons": "month",
    "days": "day",
    "d": "day",
    "weeks": "week",
    "w": "week",
    "quarters": "quarter",
    "decades": "decade",
    "dec": "decade",
    "centuries": "century",
    "c": "century",
    "millennia": "millennium",
    "millenniums": "millennium",
    "hours": "hour",
    "h": "hour",
    "hr": "hour",
    "hrs": "hour",
    "minutes": "minute",
    "m": "minute",
    "min": "minute",
    "mins": "minute",
    "seconds": "second",
    "s": "second",
    "sec": "second",
    "secs": "second",
    "milliseconds": "millisecond",
    "ms": "millisecond",
    "msec": "millisecond",
    "msecs": "millisecond",
    "microseconds": "microsecond",
    "us": "microsecond",
    "usec": "microsecond",
    "usecs": "microsecond",
}


# ------------------------------------------------------------------ literals
def timestamp_literal(s: str) -> Literal:
    """TIMESTAMP 'text' (or 'text'::TIMESTAMP): parsed now, DuckDB's error if it does not parse."""
    value, code = text.parse_timestamp(s)
    if code != text.OK:
        raise ExecutionError(text.cast_error(s, code))
    return Literal(value, T.TIMESTAMP)


def interval_unit(name: str) -> tuple[int, int, int]:
    u = name.lower()
    u = _UNIT_ALIASES.get(u, u)
    if u not in _INTERVAL_UNITS:
        raise NotSupported(f"INTERVAL unit {name}")
    return _INTERVAL_UNITS[u]


def scaled(amount: int, unit: tuple[int, int, int]) -> tuple[int, int, int]:
    return amount * unit[0], amount * unit[1], amount * unit[2]


_PIECE = re.compile(r"\s*([+-]?)(\d+(?:\.\d*)?)\s*([a-zA-Z]+)|\s*([+-]?)(\d+):(\d{1,2})(?::(\d{1,2})(?:\.(\d{1,6}))?)?")


def interval_text(s: str) -> tuple[int, int, int]:
    """(months, days, microseconds) of an INTERVAL string: amounts with units
    ('1 year 2 months', '-3 days') and an [-]HH:MM[:SS[.ffffff]] time;
    fractions only of seconds and smaller units."""
    months = days = micros = 0
    pos, s = 0, s.strip()
    if not s:
        raise NotSupported(f"INTERVAL '{s}'")
    while pos < len(s):
        m = _PIECE.match(s, pos)
        if m is None or m.end() == pos:
            raise NotSupported(f"INTERVAL '{s}'")
        pos = m.end()
        if m.group(3) is not None:
            sign = -1 if m.group(1) == "-" else 1
            unit = interval_unit(m.group(3))
            amount = m.group(2)
            if "." in amount:
                if unit[0] or unit[1]:
                    raise NotSupported(f"INTERVAL '{s}' (a fraction of a {m.group(3)})")
                whole, frac = amount.split(".")
                us = int(whole or "0") * unit[2] + int(frac.ljust(6, "0")[:6] or "0") * unit[2] // 1_000_000
                micros += sign * us
                continue
            dm, dd, du = scaled(sign * int(amount), unit)
            months, days, micros = months + dm, days + dd, micros + du
        else:
            sign = -1 if m.group(4) == "-" else 1
            h, mi, sec = int(m.group(5)), int(m.group(6)), int(m.group(7) or 0)
            frac = int((m.group(8) or "").ljust(6, "0") or "0")
            micros += sign * (((h * 60 + mi) * 60 + sec) * 1_000_000 + frac)
    return months, days, micros
