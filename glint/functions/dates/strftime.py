"""strftime: DATE and TIMESTAMP values as text in a DuckDB format, made on
the column's device.

Each distinct value is formatted once. Its fields (year, month, ..., ISO
week) are integer tensors; each item of the format becomes a byte matrix
(values, width) and a mask of the bytes it keeps (a number without padding
keeps its significant digits, a month name its letters); the matrices side
by side, masked, are the result's dictionary in Arrow layout. Infinite
values print as ``infinity`` / ``-infinity``, as DuckDB prints them.

>>> import datetime
>>> import pyarrow as pa
>>> ts = Column.from_arrow(pa.array([datetime.datetime(2021, 3, 4, 17, 6, 7, 891234), None]))
>>> strftime(ts, parse_format("%A %-d %B %Y, %I:%M:%S.%f %p")).to_arrow().to_pylist()
['Thursday 4 March 2021, 05:06:07.891234 PM', None]
"""

from __future__ import annotations

from functools import cached_property

import torch

from glint.columnar import types as T
from glint.columnar.calendar import civil_from_days, days_from_civil
from glint.columnar.column import Column, Dictionary
from glint.columnar.timestamp_text import MICROS_PER_DAY, MICROS_PER_SEC
from glint.functions.dates import days as calendar
from glint.functions.dates.format_spec import (
    DAY_ABBREVIATIONS,
    DAY_NAMES,
    MONTH_ABBREVIATIONS,
    MONTH_NAMES,
    parse_format,  # noqa: F401  (the doctest)
)
from glint.functions.dates.timestamps import infinite, split

Piece = tuple[torch.Tensor, torch.Tensor]  # (bytes (n, w) uint8, kept (n, w) bool)


# ---------------------------------------------------------------- pieces
def _digits(v: torch.Tensor, width: int) -> torch.Tensor:
    """The last ``width`` decimal digits of v >= 0, zero-padded, as ASCII bytes."""
    powers = torch.tensor([10 ** (width - 1 - i) for i in range(width)], dtype=torch.int64, device=v.device)
    return (torch.div(v[:, None], powers, rounding_mode="floor") % 10 + 48).to(torch.uint8)


def _count_digits(v: torch.Tensor, width: int) -> torch.Tensor:
    """Decimal digits of v >= 0 (at least 1), up to ``width``."""
    count = torch.ones_like(v)
    for k in range(1, width):
        count += (v >= 10**k).long()
    return count


def number(v: torch.Tensor, width: int, keep: torch.Tensor | None = None) -> Piece:
    """v >= 0 in ``width`` digits, keeping the last ``keep`` of them (all when None)."""
    b = _digits(v, width)
    if keep is None:
        return b, torch.ones_like(b, dtype=torch.bool)
    return b, torch.arange(width, device=v.device)[None, :] >= (width - keep)[:, None]


def unpadded(v: torch.Tensor, width: int) -> Piece:
    """v >= 0 without leading zeros (DuckDB's %-d ...)."""
    return number(v, width, _count_digits(v, width))


def literal(text: bytes, n: int, device) -> Piece:
    b = torch.tensor(list(text), dtype=torch.uint8, device=device).expand(n, len(text))
    return b, torch.ones_like(b, dtype=torch.bool)


def names(index: torch.Tensor, table: tuple[str, ...]) -> Piece:
    """The names at ``index`` (0-based) from a table of ASCII names."""
    width = max(len(s) for s in table)
    rows = [list(s.encode().ljust(width, b"\0")) for s in table]
    t = torch.tensor(rows, dtype=torch.uint8, device=index.device)
    lengths = torch.tensor([len(s) for s in table], dtype=torch.int64, device=index.device)
    return t[index], torch.arange(width, device=index.device)[None, :] < lengths[index][:, None]


def assemble(pieces: list[Piece]) -> Dictionary:
    """One string per row: the pieces' kept bytes, left to right."""
    data = torch.cat([p[0] for p in pieces], dim=1)
    keep = torch.cat([p[1] for p in pieces], dim=1)
    lengths = keep.sum(dim=1)
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int64, device=data.device)
    torch.cumsum(lengths, 0, out=offsets[1:])
    return Dictionary(offsets, data[keep])


# ---------------------------------------------------------------- fields
class Fields:
    """The calendar fields of day numbers and microseconds of the day, each
    computed when first asked for."""

    def __init__(self, days: torch.Tensor, tod: torch.Tensor):
        self.days, self.tod = days, tod

    @cached_property
    def ymd(self) -> torch.Tensor:
        return torch.stack(civil_from_days(self.days))

    @property
    def year(self) -> torch.Tensor:
        return self.ymd[0]

    @property
    def month(self) -> torch.Tensor:
        return self.ymd[1]

    @property
    def day(self) -> torch.Tensor:
        return self.ymd[2]

    @cached_property
    def hour(self) -> torch.Tensor:
        return torch.div(self.tod, 3600 * MICROS_PER_SEC, rounding_mode="floor")

    @property
    def hour12(self) -> torch.Tensor:
        h = self.hour % 12
        return torch.where(h == 0, 12, h)

    @property
    def minute(self) -> torch.Tensor:
        return torch.div(self.tod, 60 * MICROS_PER_SEC, rounding_mode="floor") % 60

    @property
    def second(self) -> torch.Tensor:
        return torch.div(self.tod, MICROS_PER_SEC, rounding_mode="floor") % 60

    @property
    def micros(self) -> torch.Tensor:
        return self.tod % MICROS_PER_SEC

    @cached_property
    def isodow(self) -> torch.Tensor:
        return (self.days + 3) % 7 + 1  # Monday 1 .. Sunday 7

    @cached_property
    def doy(self) -> torch.Tensor:
        return calendar._day_of_year(self.year, self.month, self.day)

    @cached_property
    def iso(self) -> torch.Tensor:
        return torch.stack(calendar._iso_year_week(self.days))

    def week(self, monday_first: bool) -> torch.Tensor:
        """DuckDB's ExtractWeekNumberRegular: weeks starting on the first
        Sunday (Monday) of the year; days before it are week 0."""
        y = self.year
        jan1 = days_from_civil(y, torch.ones_like(y), torch.ones_like(y))
        jan1_dow = (jan1 + 3) % 7 + 1
        first = torch.where(jan1_dow == 1, 0, 8 - jan1_dow) if monday_first else 7 - jan1_dow
        doy0 = self.doy - 1
        return torch.where(doy0 < first, 0, torch.div(doy0 - first, 7, rounding_mode="floor") + 1)


def _year_piece(y: torch.Tensor) -> list[Piece]:
    """%Y: four digits for years 0 to 9999, else the signed number."""
    mag = y.abs()
    sign = torch.full((len(y), 1), ord("-"), dtype=torch.uint8, device=y.device)
    keep = torch.where((y >= 0) & (y <= 9999), 4, _count_digits(mag, 7))
    return [(sign, (y < 0)[:, None]), number(mag, 7, keep)]


def _specifier(code: str, f: Fields, n: int, device) -> list[Piece]:
    if code == "Y":
        return _year_piece(f.year)
    if code == "G":  # DuckDB writes the ISO year as an unsigned 32-bit value's last four digits
        return [number(torch.remainder(f.iso[0], 2**32) % 10000, 4)]
    fixed = {
        "d": (lambda: f.day, 2),
        "m": (lambda: f.month, 2),
        "y": (lambda: f.year.abs() % 100, 2),
        "H": (lambda: f.hour, 2),
        "I": (lambda: f.hour12, 2),
        "M": (lambda: f.minute, 2),
        "S": (lambda: f.second, 2),
        "f": (lambda: f.micros, 6),
        "g": (lambda: torch.div(f.micros, 1000, rounding_mode="floor"), 3),
        "n": (lambda: f.micros * 1000, 9),
        "j": (lambda: f.doy, 3),
        "U": (lambda: f.week(False), 2),
        "W": (lambda: f.week(True), 2),
        "V": (lambda: f.iso[1], 2),
        "w": (lambda: f.isodow % 7, 1),
        "u": (lambda: f.isodow, 1),
    }
    if code in fixed:
        value, width = fixed[code]
        return [number(value(), width)]
    if code.startswith("-"):
        value, width = fixed[code[1]]
        return [unpadded(value(), width)]
    if code == "a":
        return [names(f.isodow % 7, DAY_ABBREVIATIONS)]
    if code == "A":
        return [names(f.isodow % 7, DAY_NAMES)]
    if code == "b":
        return [names(f.month - 1, MONTH_ABBREVIATIONS)]
    if code == "B":
        return [names(f.month - 1, MONTH_NAMES)]
    if code == "p":
        return [names((f.hour >= 12).long(), ("AM", "PM"))]
    if code == "z":  # naive values: UTC
        return [literal(b"+00", n, device)]
    if code == "Z":
        return []
    raise AssertionError(code)


# ---------------------------------------------------------------- strftime
def format_values(days: torch.Tensor, tod: torch.Tensor, items) -> Dictionary:
    """The formatted strings of (day number, microsecond of the day) values."""
    n, device = len(days), days.device
    f = Fields(days, tod)
    pieces: list[Piece] = []
    for kind, value in items:
        pieces += [literal(value, n, device)] if kind == "lit" else _specifier(value, f, n, device)
    if not pieces:
        pieces = [literal(b"", n, device)]
    return assemble(pieces)


def strftime(col: Column, items) -> Column:
    """strftime(x, format) of a DATE or TIMESTAMP column (``items``: the parsed format)."""
    v = col.data.long()
    inf = infinite(col.data)
    if col.valid is not None:
        v = torch.where(col.valid, v, 0)
    v = torch.where(inf, 0, v)
    key = v if col.dtype.kind == "TIMESTAMP" else v * MICROS_PER_DAY
    key = torch.where(inf, torch.where(col.data.long() > 0, 1, -1) * (2**62), key)
    uniq, inverse = torch.unique(key, return_inverse=True)
    finite = uniq.abs() != 2**62
    days, tod = split(torch.where(finite, uniq, 0))
    d = format_values(days, tod, items)
    if not bool(finite.all()):
        special = assemble([names((uniq > 0).long(), ("-infinity", "infinity"))])
        d = _replace_rows(d, special, ~finite)
    return Column(T.VARCHAR, inverse.to(torch.int32), col.valid, d)


def _replace_rows(d: Dictionary, other: Dictionary, rows: torch.Tensor) -> Dictionary:
    """d's entries, with ``other``'s where ``rows`` is set (same entry count)."""
    both, (_, base) = Dictionary.concat([d, other])
    idx = torch.where(rows, torch.arange(len(d), device=rows.device) + base, torch.arange(len(d), device=rows.device))
    return both.take(idx)
