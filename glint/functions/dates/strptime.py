"""strptime / try_strptime: text parsed as TIMESTAMP by a DuckDB format, on
the column's device.

DuckDB's parser (StrpTimeFormat::Parse) reads a string left to right: a
literal must match (a run of spaces in the format matches any run of
whitespace), a numeric specifier takes up to its width of digits, names
match case-insensitively, leading and trailing whitespace is skipped, and
``infinity`` / ``-infinity`` / ``epoch`` are special. Here every distinct
string of the column is a row of a padded byte matrix, and the parser runs
once over all of them: a position per row, one gather per byte read. The
first error of a row is kept (its message and position), so a failing
strptime raises DuckDB's message for the first bad row, and try_strptime
gives NULL there.

>>> import pyarrow as pa
>>> c = Column.from_arrow(pa.array(["March 4, 2021 5:06 PM", None, " 04/03/69 "]))
>>> strptime(c, "%B %-d, %Y %-I:%M %p", True).to_arrow().to_pylist()[:2]
[datetime.datetime(2021, 3, 4, 17, 6), None]
>>> strptime(c, "%d/%m/%y", True).to_arrow().to_pylist()
[None, None, datetime.datetime(1969, 3, 4, 0, 0)]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.calendar import days_from_civil, days_in_month
from glint.columnar.column import Column
from glint.columnar.timestamp_text import MICROS_PER_DAY, MICROS_PER_SEC, TS_INFINITY
from glint.errors import ExecutionError
from glint.functions.dates.format_spec import (
    DAY_ABBREVIATIONS,
    DAY_NAMES,
    MONTH_ABBREVIATIONS,
    MONTH_NAMES,
    parse_format,
)
from glint.kernels.strings.columns import to_rows, work_set
from glint.kernels.strings.pieces import Pieces

# numeric specifiers: digits read at most
WIDTH = {"w": 1, "u": 1, "d": 2, "m": 2, "y": 2, "H": 2, "I": 2, "M": 2, "S": 2, "U": 2, "W": 2, "V": 2}
WIDTH.update({"g": 3, "j": 3, "Y": 4, "G": 4, "f": 6, "n": 9})
_DATE_FIELDS = ("d", "m", "y", "Y")  # specifiers DuckDB calls "y/m/d", which override the offsets
_SPACES = torch.tensor([9, 10, 11, 12, 13, 32])
_FIRST_DAY = -25567 * MICROS_PER_DAY  # 1900-01-01, where a parse begins


def _offset_step(code: str, offset: str, seen: set[str]) -> tuple[str, str | None]:
    """DuckDB's offset_specifier state machine (the format alone decides it):
    (the new state, the error a row gets on reaching this specifier, or None).
    The state starts as "w"; d / m / y / Y make the date plain, G / V make it
    ISO, U / W a week of the year, j a day of the year."""
    month_or_day, year = offset in ("d", "m"), offset in ("y", "Y")
    if code in ("d", "m"):
        return code, None
    if code in ("y", "Y"):
        return (code if offset in ("G", "V", "w") else offset), None
    if code == "G":
        if month_or_day or year:
            return offset, None
        if offset == "w":
            return code, None
        if offset in ("G", "V"):
            return offset, ("Multiple ISO year offsets specified" if "G" in seen else None)
        return offset, "Incompatible ISO year offset specified"
    if code == "V":
        if year:
            return offset, "ISO week offsets are incompatible with non-ISO year specifiers. Use '%G' instead"
        if month_or_day:
            return offset, None
        if offset == "w":
            return code, None
        if offset in ("G", "V"):
            return offset, ("Multiple ISO week offsets specified" if "V" in seen else None)
        return offset, "Incompatible ISO week offset specified"
    if code in ("U", "W", "j"):
        if month_or_day:
            return offset, None
        if year or offset == "w":
            return code, None
        return offset, ("Multiple year offsets specified" if code == "j" else "Multiple week offsets specified")
    if code == "u":
        return offset, ("Multiple ISO weekday offsets specified" if "u" in seen else None)
    return offset, None


# code -> (lowest, highest, DuckDB's message) for the numeric specifiers it range-checks
_RANGES = {
    "d": (1, 31, "Day out of range, expected a value between 1 and 31"),
    "m": (1, 12, "Month out of range, expected a value between 1 and 12"),
    "y": (0, 99, "Year without century out of range, expected a value between 0 and 99"),
    "G": (0, 9999, "ISO Year out of range, expected a value between 0000 and 9999"),
    "H": (0, 23, "Hour out of range, expected a value between 0 and 23"),
    "I": (1, 12, "Hour12 out of range, expected a value between 1 and 12"),
    "M": (0, 59, "Minutes out of range, expected a value between 0 and 59"),
    "S": (0, 59, "Seconds out of range, expected a value between 0 and 59"),
    "U": (0, 53, "Week out of range, expected a value between 0 and 53"),
    "W": (0, 53, "Week out of range, expected a value between 0 and 53"),
    "w": (0, 6, "Weekday out of range, expected a value between 0 and 6"),
    "V": (1, 53, "ISO week offset out of range, expected a value between 1 and 53"),
    "u": (1, 7, "ISO weekday offset out of range, expected a value between 1 and 7"),
    "j": (1, 366, "Year day out of range, expected a value between 1 and 366"),
}
_NAMES = {
    "a": (DAY_ABBREVIATIONS, "Expected an abbreviated day name (Mon, Tue, Wed, Thu, Fri, Sat, Sun)"),
    "A": (DAY_NAMES, "Expected a full day name (Monday, Tuesday, etc...)"),
    "b": (MONTH_ABBREVIATIONS, "Expected an abbreviated month name (Jan, Feb, Mar, etc..)"),
    "B": (MONTH_NAMES, "Expected a full month name (January, February, etc...)"),
}


class _Parse:
    """The parser's state over m strings (rows of a padded byte matrix)."""

    def __init__(self, text: torch.Tensor, size: torch.Tensor):
        self.text, self.size = text, size
        m, width = text.shape
        dev = text.device
        idx = torch.arange(width, device=dev).expand(m, width)
        space = torch.isin(text, _SPACES.to(dev))
        # the first position at or after each one that is not whitespace (the padding is not)
        self.next_solid = torch.flip(torch.cummin(torch.flip(torch.where(space, width, idx), [1]), dim=1).values, [1])
        self.start = self.next_solid[:, 0]  # leading whitespace skipped
        self.pos = self.start.clone()
        self.failed = torch.zeros(m, dtype=torch.bool, device=dev)
        self.code = torch.zeros(m, dtype=torch.int64, device=dev)
        self.where = torch.zeros(m, dtype=torch.int64, device=dev)
        self.messages: list[str] = [""]
        zeros = torch.zeros(m, dtype=torch.int64, device=dev)
        self.f = {k: zeros.clone() for k in ("hour", "minute", "second", "micros", "weekno", "weekday", "yearday")}
        self.f.update(year=zeros + 1900, month=zeros + 1, day=zeros + 1, iso_year=zeros + 1900)
        self.f.update(iso_week=zeros + 1, iso_weekday=zeros + 1, ampm=zeros)

    def byte(self, pos: torch.Tensor) -> torch.Tensor:
        return self.text.gather(1, pos.clamp(max=self.text.shape[1] - 1)[:, None]).squeeze(1)

    def fail(self, bad: torch.Tensor, message: str, at: torch.Tensor | None) -> None:
        new = bad & ~self.failed
        self.messages.append(message)
        self.code = torch.where(new, len(self.messages) - 1, self.code)
        self.where = torch.where(new, (at - self.start) if at is not None else -1, self.where)
        self.failed |= new

    def skip_spaces(self) -> None:
        self.pos = self.next_solid.gather(1, self.pos.clamp(max=self.text.shape[1] - 1)[:, None]).squeeze(1)

    # ------------------------------------------------------------ the format's items
    def literal(self, lit: bytes) -> None:
        text = lit.decode()
        i = 0
        while i < len(lit):
            b = self.byte(self.pos)
            if chr(lit[i]).isspace():
                self.fail(~torch.isin(b, _SPACES.to(b.device)), f"Space does not match, expected {text}", self.pos)
                self.pos = self.pos + 1
                self.skip_spaces()
                while i < len(lit) and chr(lit[i]).isspace():
                    i += 1
                continue
            self.pos = self.pos + 1
            self.fail(b != lit[i], f"Literal does not match, expected {text}", self.pos)
            i += 1

    def number(self, code: str, offset_error: str | None) -> torch.Tensor:
        start = self.pos
        value = torch.zeros_like(start)
        active = torch.ones_like(self.failed)
        for _ in range(WIDTH[code.lstrip("-")]):
            b = self.byte(self.pos).long()
            take = active & (b >= 48) & (b <= 57) & (self.pos < self.size)
            value = torch.where(take, value * 10 + (b - 48), value)
            self.pos = self.pos + take.long()
            active = take
        self.fail(self.pos == start, "Expected a number", start)
        if offset_error is not None:
            self.fail(torch.ones_like(self.failed), offset_error, start)
        rng = _RANGES.get(code.lstrip("-"))
        if rng is not None:
            self.fail((value < rng[0]) | (value > rng[1]), rng[2], start)
        if code in ("f", "g", "n"):  # a fraction shorter than its width is padded on the right: .5 is half
            digits = self.pos - start
            value = value * torch.pow(torch.full_like(value, 10), WIDTH[code] - digits)
        return value

    def name(self, code: str) -> torch.Tensor:
        table, message = _NAMES[code]
        found = torch.full_like(self.pos, -1)
        advance = torch.zeros_like(self.pos)
        for i, name in enumerate(table):
            raw = name.lower().encode()
            window = self.pos[:, None] + torch.arange(len(raw), device=self.pos.device)
            got = self.text.gather(1, window.clamp(max=self.text.shape[1] - 1))
            got = torch.where((got >= 65) & (got <= 90), got + 32, got)
            want = torch.tensor(list(raw), dtype=torch.uint8, device=got.device)
            hit = (found < 0) & (self.pos + len(raw) <= self.size) & (got == want).all(dim=1)
            found = torch.where(hit, i, found)
            advance = torch.where(hit, len(raw), advance)
        self.fail(found < 0, message, self.pos)
        self.pos = self.pos + advance
        return found

    def am_pm(self) -> None:
        a, m = self.byte(self.pos) | 32, self.byte(self.pos + 1) | 32
        bad = (self.pos + 2 > self.size) | (m != ord("m")) | ((a != ord("a")) & (a != ord("p")))
        self.fail(bad, "Expected AM/PM", self.pos)
        self.f["ampm"] = torch.where(a == ord("p"), 2, 1)
        self.pos = self.pos + 2


def _parse(text: torch.Tensor, size: torch.Tensor, items) -> tuple[_Parse, torch.Tensor]:
    """Run the parser; (its state, micros since 1970 of each string)."""
    s = _Parse(text, size)
    f = s.f
    offset, seen, has_weekday = "w", set(), False
    for kind, value in items:
        if kind == "lit":
            s.literal(value)
            continue
        code = value.lstrip("-")
        if code in _NAMES:
            found = s.name(code)
            if code in ("b", "B"):
                f["month"] = found + 1
            continue
        if code == "p":
            s.am_pm()
            continue
        offset, error = _offset_step(code, offset, seen)
        seen.add(code)
        v = s.number(value, error)
        target = {"d": "day", "m": "month", "Y": "year", "G": "iso_year", "H": "hour", "I": "hour"}.get(code)
        target = target or {"M": "minute", "S": "second", "V": "iso_week", "u": "iso_weekday", "j": "yearday"}.get(code)
        if target is not None:
            f[target] = v
        elif code == "y":
            f["year"] = torch.where(v >= 69, 1900 + v, 2000 + v)
        elif code in ("U", "W"):
            f["weekno"] = v
        elif code == "w":
            f["weekday"], has_weekday = v, True
        elif code == "f":
            f["micros"] = v
        elif code == "g":
            f["micros"] = v * 1000
    s.skip_spaces()
    s.fail(s.pos != s.size, "Full specifier did not match: trailing characters", s.pos)
    if "p" in {v.lstrip("-") for k, v in items if k == "spec"}:
        s.fail(f["hour"] > 12, "\0hour", None)  # the message names the hour: made when raised
        h, ampm = f["hour"], f["ampm"]
        f["hour12"] = h
        f["hour"] = torch.where(ampm == 1, torch.where(h == 12, 0, h), torch.where(h == 12, h, h + 12))
    day = _date_of(f, offset, has_weekday)
    tod = ((f["hour"] * 60 + f["minute"]) * 60 + f["second"]) * MICROS_PER_SEC + f["micros"]
    return s, day * MICROS_PER_DAY + tod


def _date_of(f: dict, offset: str, has_weekday: bool) -> torch.Tensor:
    """The day number the parsed fields name (DuckDB's offset specifiers:
    ISO year / week / weekday, week of the year, day of the year); NaN-free:
    an invalid year / month / day gives -2**40 (checked by the caller)."""
    ones = torch.ones_like(f["year"])
    if offset in ("G", "V"):
        jan4 = days_from_civil(f["iso_year"], ones, ones * 4)
        week1 = jan4 - (jan4 + 3) % 7
        return week1 + (f["iso_week"] - 1) * 7 + (f["iso_weekday"] - 1)
    if offset in ("U", "W"):
        weekday = f["weekday"]
        if has_weekday:
            weekday = (weekday + 7 - int(offset == "W")) % 7
        jan1 = days_from_civil(f["year"], ones, ones)
        d = jan1 - (jan1 + 3) % 7 - int(offset == "U")
        d = d - 7 * (d >= jan1).long()
        return d + f["weekno"] * 7 + weekday
    if offset == "j":
        return days_from_civil(f["year"], ones, ones) + f["yearday"] - 1
    y, m, d = f["year"], f["month"], f["day"]
    ok = (d <= days_in_month(y, m)) & (y >= -290307) & (y <= 294247)
    f["bad_date"] = ~ok
    return torch.where(ok, days_from_civil(y, m, d), 0)


def _byte_matrix(p: Pieces) -> tuple[torch.Tensor, torch.Tensor]:
    """(strings as rows of a zero-padded uint8 matrix with one spare column, their lengths)."""
    size = p.lengths
    width = int(size.max()) + 1 if len(size) else 1
    idx = p.starts[:, None] + torch.arange(width, device=size.device)[None, :]
    inside = torch.arange(width, device=size.device)[None, :] < size[:, None]
    data = p.data if p.data.numel() else torch.zeros(1, dtype=torch.uint8, device=size.device)
    text = torch.where(inside, data[idx.clamp(max=data.numel() - 1)], 0)
    return text.to(torch.uint8), size


def _specials(text: torch.Tensor, s: _Parse):
    """DuckDB's special values, tried before the format: a string (past
    leading whitespace, more than 4 bytes) that begins with ``infinity``,
    ``epoch`` or ``-infinity`` in any case is that value, and an error when
    anything but whitespace follows. (hit, trailing, micros)."""
    lower = torch.where((text >= 65) & (text <= 90), text + 32, text)
    width = text.shape[1]
    hit = torch.zeros_like(s.failed)
    trailing = torch.zeros_like(s.failed)
    micros = torch.zeros_like(s.pos)
    end = torch.zeros_like(s.pos)
    for word, value in ((b"infinity", TS_INFINITY), (b"epoch", 0), (b"-infinity", -TS_INFINITY)):
        window = (s.start[:, None] + torch.arange(len(word), device=text.device)).clamp(max=width - 1)
        same = (lower.gather(1, window) == torch.tensor(list(word), device=text.device)).all(dim=1)
        new = ~hit & (s.size - s.start > 4) & (s.start + len(word) <= s.size) & same
        after = s.next_solid.gather(1, (s.start + len(word)).clamp(max=width - 1)[:, None]).squeeze(1)
        hit |= new
        micros = torch.where(new, value, micros)
        end = torch.where(new, after, end)
        trailing |= new & (after != s.size)
    return hit, trailing, micros, end


def strptime(col: Column, fmt: str, safe: bool) -> Column:
    """strptime(text, format) (``safe``: try_strptime, NULL where it fails)."""
    items = parse_format(fmt)
    if col.dtype.kind == "NULL":
        return Column.nulls(T.TIMESTAMP, len(col), col.device)
    p, index = work_set(col)
    text, size = _byte_matrix(p)
    s, micros = _parse(text, size, items)
    special, trailing, special_micros, special_end = _specials(text, s)
    s.messages.append("Special timestamp did not match: trailing characters")
    code = torch.where(special, len(s.messages) - 1, s.code)
    where = torch.where(special, special_end - s.start, s.where)
    failed = torch.where(special, trailing, s.failed)
    bad_date = s.f.get("bad_date", torch.zeros_like(failed)) & ~failed & ~special
    # DuckDB's try_strptime never reads the special value it found: it answers the date it began from
    out = torch.where(special, _FIRST_DAY if safe else special_micros, micros)
    row_failed, row_bad_date = to_rows(failed, index), to_rows(bad_date, index)
    bad = row_failed | row_bad_date
    if safe:
        valid = ~bad if col.valid is None else col.valid & ~bad
        return Column(T.TIMESTAMP, torch.where(valid, to_rows(out, index), 0), valid)
    if col.valid is not None:
        bad = bad & col.valid
    if bool(bad.any()):
        row = int(bad.nonzero()[0, 0])
        e = int(index[row])
        raw = bytes(p.data[int(p.starts[e]) : int(p.starts[e]) + int(p.lengths[e])].cpu().tolist()).decode()
        if bool(row_bad_date[row]):
            y, m, d = (int(s.f[k][e]) for k in ("year", "month", "day"))
            raise ExecutionError(f"Conversion Error: Date out of range: {y}-{m}-{d}")
        message = s.messages[int(code[e])]
        if message == "\0hour":
            message = f"Invalid hour: {int(s.f['hour12'][e])} AM/PM, expected an hour within the range [0..12]"
        at = int(where[e])
        caret = f"{raw}\n{' ' * at}^" if at >= 0 else ""
        raise ExecutionError(
            f'Invalid Input Error: Could not parse string "{raw}" according to format specifier "{fmt}"\n'
            f"{caret}\nError: {message}"
        )
    return Column(T.TIMESTAMP, to_rows(out, index), col.valid)
