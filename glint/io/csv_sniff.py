"""DuckDB's detection of a CSV file's column types and header (DuckDB 1.4's
sniffer), on the file's fields read as text.

Each column starts with the candidate types, most specific last: NULL,
BOOLEAN, TIME, DATE, TIMESTAMP, TIMESTAMP WITH TIME ZONE, BIGINT, DOUBLE,
VARCHAR. Over the first 2,048 rows (the first row left out: it may be the
header), a value that the column's current type does not accept (the
strict casts of glint.io.csv_values) drops the types down to one that does;
a column that was BOOLEAN, DATE, TIME or TIMESTAMP WITH TIME ZONE since an
earlier row becomes VARCHAR at once (``true`` then ``1`` is VARCHAR, not
BIGINT). Over the rows up to 20,480 (``sample_size``) each block of 2,048
rows must fit the type as a whole, or it drops. A column of only NULLs is
VARCHAR. Dates and timestamps written with a separator other than ISO's
(``05/01/2024``, ``31.12.2023``) get a format: the first of DuckDB's
candidates (``%d/%m/%Y``, ``%m/%d/%Y``...) that parses them, kept while
later values parse.

The first row is a header unless every column is of a type other than
VARCHAR and the row's fields are values of those types (or all of them are
empty): ``a,b`` over numbers is a header, ``1,2`` over numbers is not, and a
file whose columns are all text has one.

>>> s = sniff([pa.array(["zip", "02139", "10001"]), pa.array(["n", "1", "2.5"]), pa.array(["d", "2024-01-05", None])])
>>> s.types, s.header
(['VARCHAR', 'DOUBLE', 'DATE'], True)
>>> sniff([pa.array(["a", "1", "2"]), pa.array(["b", "true", "1"])]).types
['BIGINT', 'VARCHAR']
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from glint.io.csv_values import castable, format_parses

CANDIDATES = ("VARCHAR", "DOUBLE", "BIGINT", "TIMESTAMPTZ", "TIMESTAMP", "DATE", "TIME", "BOOLEAN", "NULL")
SNIFF_ROWS = 2048  # the first block: value by value
SAMPLE_ROWS = 20480  # DuckDB's sample_size: the rows the detection looks at
_GIVE_UP = ("BOOLEAN", "DATE", "TIME", "TIMESTAMPTZ")  # a later value that fails one: VARCHAR at once
# DuckDB's format candidates (the separator replaces "-"; the ISO form is its own parser's)
_TEMPLATES = {
    "DATE": ("%m-%d-%Y", "%m-%d-%y", "%d-%m-%Y", "%d-%m-%y", "%Y-%m-%d", "%y-%m-%d"),
    "TIMESTAMP": (
        "%Y-%m-%d %H:%M:%S.%f",
        "%m-%d-%Y %I:%M:%S %p",
        "%m-%d-%y %I:%M:%S %p",
        "%d-%m-%Y %H:%M:%S",
        "%d-%m-%y %H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
        "%y-%m-%d %H:%M:%S",
    ),
}
_SPACES = " \t\n\x0b\f\r"


@dataclass
class Sniffed:
    """What the detection found in one file: the types (kinds of
    glint.io.csv_values), whether the first row is a header, that row, the
    DATE and TIMESTAMP formats (None: ISO), and the data rows it saw."""

    types: list[str]
    header: bool
    first_row: list
    formats: dict = field(default_factory=dict)
    rows: int = 0


def numeric_date_separator(value: str) -> str | None:
    """The separator of a value that starts like a date of three numbers
    (``12/31/2023 ...``), or None (DuckDB's StartsWithNumericDate).

    >>> numeric_date_separator("31.12.2023"), numeric_date_separator("2024-01-05 10:00"), numeric_date_separator("1.5")
    ('.', '-', None)
    """
    s = value.lstrip(_SPACES)
    i = _digits(s, 0)
    if i == 0 or i == len(s):
        return None
    j = _non_digits(s, i)
    if j == len(s):
        return None
    k = _digits(s, j)
    if k == len(s):
        return None
    m = _non_digits(s, k)
    if m == len(s) or s[k:m] != s[i:j]:
        return None
    return s[i:j]


def _digits(s: str, i: int) -> int:
    while i < len(s) and s[i].isdigit() and s[i].isascii():
        i += 1
    return i


def _non_digits(s: str, i: int) -> int:
    while i < len(s) and not (s[i].isdigit() and s[i].isascii()):
        i += 1
    return i


class _Formats:
    """The DATE and TIMESTAMP formats under detection, shared by the
    columns (DuckDB's format_candidates): for each type the candidates still
    in play (the current one last) and whether one has parsed a value."""

    def __init__(self):
        self.current: dict[str, str | None] = {"DATE": None, "TIMESTAMP": None}
        self.candidates: dict[str, list[str]] = {}
        self.initialized: dict[str, bool] = {}
        self.had_match: dict[str, bool] = {}
        self.original: dict[str, int] = {}  # candidates' count when the type's detection (re)started

    def detect(self, kind: str, separator: str, value: str) -> None:
        """DetectDateAndTimeStampFormats: keeps the first candidate (from the
        end) that parses ``value``; none: the ones that did before, or ISO."""
        if separator not in ("-", ".", "/", " "):
            return
        if not self.initialized.get(kind):
            self.initialized[kind] = True
            made = [t.replace("-", separator) for t in _TEMPLATES[kind]]
            self.candidates[kind] = [f for f in made if "%Y-%m-%d" not in f]
            self.original = {k: len(v) for k, v in self.candidates.items()}
        cands = self.candidates[kind]
        if cands:
            self.current[kind] = cands[-1]
        saved = list(cands)
        initial = len(saved) == self.original.get(kind, -1)
        while cands:
            if format_parses(self.current[kind], value):
                self.had_match[kind] = True
                break
            cands.pop()
            if cands:
                self.current[kind] = cands[-1]
        if not cands and saved:
            if initial and not self.had_match.get(kind):
                self.initialized[kind] = False
                self.current[kind] = None
                return
            cands[:] = saved
            self.current[kind] = cands[-1]


class _Column:
    """One column of the first block: its values, and which of them each
    (type, format) accepts, computed for the whole block when first asked."""

    def __init__(self, values: pa.Array):
        self.values = values
        self.text = values.to_pylist()
        self._ok: dict = {}

    def accepts(self, kind: str, fmt: str | None, row: int) -> bool:
        key = (kind, fmt if kind in ("DATE", "TIMESTAMP") else None)
        ok = self._ok.get(key)
        if ok is None:
            ok = self._ok[key] = castable(kind, self.values, key[1])
        return bool(ok[row])


def _fits(kind: str, value, formats: _Formats) -> bool:
    if value is None:
        return True
    fmt = formats.current.get(kind)
    return bool(castable(kind, pa.array([value], pa.string()), fmt)[0])


def sniff(columns: list[pa.Array], header: bool | None = None, sample_rows: int = SAMPLE_ROWS) -> Sniffed:
    """The types and header of a file whose rows (all of them, or at least
    its first ``sample_rows``; the first row included) are ``columns``,
    string arrays of equal length. ``header``: given by the user (None:
    detected). ``sample_rows`` < 0: every row."""
    n = len(columns[0]) if columns else 0
    if sample_rows >= 0:
        n = min(n, sample_rows)
    if n == 0:
        return Sniffed(["VARCHAR"] * len(columns), False, [], {}, 0)
    first = min(n, SNIFF_ROWS)
    start = 1 if first > 1 and header is not False else 0
    formats = _Formats()
    stacks = []
    has = {"DATE": False, "TIMESTAMP": False}
    for values in columns:
        col = _Column(values.slice(0, first))
        stack = list(CANDIDATES)
        for r in range(start, first):
            top = stack[-1]
            v = col.text[r]
            while len(stack) > 1:
                kind = stack[-1]
                if v is not None and kind in has and not has[kind]:
                    sep = numeric_date_separator(v)
                    if sep is not None:
                        formats.detect(kind, sep, v)
                if col.accepts(kind, formats.current.get(kind), r):
                    break
                if r != start and (top in _GIVE_UP or (top == "TIMESTAMP" and stack[-2] != "TIMESTAMPTZ")):
                    del stack[1:]
                    break
                stack.pop()
        if stack[-1] in has:
            has[stack[-1]] = True
        stacks.append(stack)
    for lo in range(first, n, SNIFF_ROWS):  # DuckDB's refinement: each block as a whole
        hi = min(n, lo + SNIFF_ROWS)
        for values, stack in zip(columns, stacks):
            block = values.slice(lo, hi - lo)
            was_bool = stack[-1] == "BOOLEAN"
            while len(stack) > 1:
                kind = stack[-1]
                if np.all(castable(kind, block, formats.current.get(kind))):
                    break
                if kind == "BOOLEAN" and was_bool:
                    del stack[1:]
                    break
                stack.pop()
    types = [s[-1] for s in stacks]
    row0 = [c[0].as_py() for c in columns]
    if header is None:
        all_text = all(t == "VARCHAR" for t in types)
        all_null = all(v is None for v in row0)
        consistent = all(t == "VARCHAR" or _fits(t, v, formats) for t, v in zip(types, row0))
        header = all_text or all_null or not consistent
    types = ["VARCHAR" if t == "NULL" else t for t in types]
    used = {k: formats.current[k] for k in ("DATE", "TIMESTAMP") if formats.current.get(k)}
    return Sniffed(types, bool(header), row0, used, n - (1 if header else 0))


# ------------------------------------------------------------------ several files
def _castable_to(source: str, target: str) -> bool:
    """CSVSchema::CanWeCastIt: a detected type that widens to another."""
    if target == "VARCHAR" or source == target or source == "NULL":
        return True
    if source == "BIGINT":
        return target == "DOUBLE"
    return False


def merge_types(a: list[str], b: list[str]) -> list[str]:
    """The types of two files' columns merged as DuckDB merges its sniffed
    files' schemas: the wider where one widens to the other, else the
    first of BOOLEAN, BIGINT, DOUBLE, VARCHAR both widen to.

    >>> merge_types(["BIGINT", "DATE", "BOOLEAN"], ["DOUBLE", "VARCHAR", "BIGINT"])
    ['DOUBLE', 'VARCHAR', 'VARCHAR']
    """
    out = list(a)
    for i, (x, y) in enumerate(zip(a, b)):
        if x == y:
            continue
        if _castable_to(x, y):
            out[i] = y
        elif not _castable_to(y, x):
            out[i] = next(
                t for t in ("BOOLEAN", "BIGINT", "DOUBLE", "VARCHAR") if _castable_to(x, t) and _castable_to(y, t)
            )
    return out
