"""A small sqllogictest runner (DuckDB's flavour of the format) for glint.

The pieces, usable without pytest (``conftest.py`` wraps them into pytest items,
``generate.py`` uses them to fill in expected results from DuckDB):

* :func:`parse` / :func:`parse_file` turn a ``.test`` file into :class:`Record` s.
* :func:`format_value` / :func:`table_to_rows` print an Arrow result the way the
  expected results are written (NULL, true/false, ``(empty)``, DuckDB-style
  decimals and dates, shortest-repr doubles).
* :func:`check_query` compares printed rows with a record's expected rows
  (``nosort`` / ``rowsort`` / ``valuesort``, relative tolerance on ``R`` columns,
  ``N values hashing to H``).
* :class:`Session` runs the records of one file against an engine ("glint" or
  "duckdb").  DDL/DML that creates data (CREATE TABLE, INSERT, DROP TABLE, COPY,
  ...) runs in an in-memory DuckDB "table store", so that a file's setup may use
  what glint does not have (``range()``, other types); the session (re)registers
  the store's tables into the engine as Arrow tables before the next statement
  the engine runs.  Everything else (CREATE VIEW, queries) goes to the engine.
  The files under ``tests/sqllogic/tables/`` test glint's own writes: there every
  statement runs in the engine (:data:`ENGINE_WRITES_DIR`).
* ``__TEST_DIR__`` in a record's SQL is replaced by a temporary directory of
  the session (removed when it closes), as in DuckDB's runner.

Format summary::

    # comment
    require <name>            # unknown names skip the rest of the file
    mode skip | mode unskip   # records in between are skipped
    skipif <engine|device>    # applies to the next record only
    onlyif <engine|device>
    halt                      # ignore the rest of the file

    statement ok
    <sql ...>

    statement error
    <sql ...>
    ----
    <substring of the error message>   (optional; checked for glint and the table store only)

    query <TYPES> [nosort|rowsort|valuesort] [label]
    <sql ...>
    ----
    <value>\\t<value>...                (one row per line)
"""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENGINES = ("glint", "duckdb")
SORT_MODES = ("nosort", "rowsort", "valuesort")
REL_TOL = 1e-9  # relative tolerance on R columns
ABS_TOL = 1e-12  # absolute floor, so that 0 vs 1e-17 compares equal

NULL = "NULL"
EMPTY = "(empty)"

_HASH_RE = re.compile(r"^(\d+) values hashing to ([0-9a-f]{32})$")
_TYPES_RE = re.compile(r"^[A-Z]+$")
ENGINE_WRITES_DIR = "tables"  # files in a directory of this name run their writes in the engine
TEST_DIR = "__TEST_DIR__"
# Statements the runner's DuckDB table store runs instead of the engine.
_STORE_RE = re.compile(
    r"^\s*(CREATE\s+(OR\s+REPLACE\s+)?((TEMP|TEMPORARY)\s+)?TABLE|INSERT|DROP\s+TABLE|COPY|UPDATE|DELETE"
    r"|ALTER\s+TABLE|TRUNCATE)\b",
    re.IGNORECASE,
)
_QUERY_RE = re.compile(r"^\s*(\(\s*)*(SELECT|WITH|FROM|VALUES|TABLE|SUMMARIZE|DESCRIBE|SHOW|EXPLAIN)\b", re.IGNORECASE)
# Directives we accept and ignore, and those we cannot honour (the file fails to collect).
_IGNORED = ("hash-threshold",)
_UNSUPPORTED = (
    "loop",
    "foreach",
    "endloop",
    "concurrentloop",
    "concurrentforeach",
    "load",
    "restart",
    "reconnect",
    "sleep",
    "unzip",
    "set",
    "reset",
    "tags",
    "continue",
    "require-env",
    "test-env",
    "template",
    "cache",
)


class SQLLogicParseError(Exception):
    """A .test file that does not follow the format; names file and line."""


class RecordFailure(AssertionError):
    """A record whose outcome differs from the file; the message is the report."""


class RecordSkipped(Exception):
    """A record that does not apply to this engine/device (skipif/onlyif/require/mode skip)."""


# --------------------------------------------------------------------------- parsing


@dataclass
class Record:
    kind: str  # "statement" or "query"
    line: int  # 1-based line of the header
    sql: str = ""
    expect: str = "ok"  # statements: "ok", "error" or "maybe"
    error: str | None = None  # statements: expected error fragment (None: any error)
    types: str | None = None  # queries: column type letters
    sortmode: str = "nosort"
    label: str | None = None
    expected: list[str] | None = None  # queries: result lines; None when there is no ----
    conditions: list[tuple[str, str]] = field(default_factory=list)  # ("skipif"|"onlyif", name)
    skip: str | None = None  # "mode skip"/halt reason, fixed at parse time
    requires: tuple[str, ...] = ()  # require lines seen before this record
    header_index: int = 0  # 0-based index of the header line
    end_index: int = 0  # 0-based index one past the record's last line
    has_separator: bool = False  # whether the record had a ---- line

    @property
    def is_query(self) -> bool:
        return self.kind == "query"

    def describe(self) -> str:
        if self.kind == "statement":
            return f"statement {self.expect}"
        return f"query {self.types or ''} {self.sortmode}".rstrip()


@dataclass
class TestFile:
    path: Path | None
    records: list[Record]
    lines: list[str]

    __test__ = False  # not a pytest test class


def _is_blank(line: str) -> bool:
    return line.strip() == ""


def parse(text: str, path: Path | str | None = None) -> TestFile:
    """Parse the text of a .test file.

    >>> f = parse("statement ok\\nCREATE TABLE t(a INT)\\n\\nquery I rowsort\\nSELECT a FROM t\\n----\\n1\\n2\\n")
    >>> [(r.kind, r.line, r.types, r.sortmode, r.expected) for r in f.records]
    [('statement', 1, None, 'nosort', None), ('query', 4, 'I', 'rowsort', ['1', '2'])]
    """
    where = str(path) if path is not None else "<string>"
    lines = text.splitlines()
    records: list[Record] = []
    conditions: list[tuple[str, str]] = []
    requires: list[str] = []
    skipping = False
    i, n = 0, len(lines)

    def fail(msg: str, idx: int) -> SQLLogicParseError:
        return SQLLogicParseError(f"{where}:{idx + 1}: {msg}")

    while i < n:
        line = lines[i]
        stripped = line.strip()
        if stripped == "" or stripped.startswith("#"):
            i += 1
            continue
        tokens = stripped.split()
        word = tokens[0]
        if word in ("skipif", "onlyif"):
            if len(tokens) < 2:
                raise fail(f"{word} needs an engine or device name", i)
            conditions.append((word, tokens[1].lower()))
            i += 1
            continue
        if word == "mode":
            if len(tokens) < 2 or tokens[1] not in ("skip", "unskip", "output_result", "output_hash", "debug"):
                raise fail(f"unknown mode line {stripped!r}", i)
            if tokens[1] in ("skip", "unskip"):
                skipping = tokens[1] == "skip"
            i += 1
            continue
        if word == "require":
            if len(tokens) < 2:
                raise fail("require needs a name", i)
            requires.append(" ".join(tokens[1:]))
            i += 1
            continue
        if word == "halt":
            break
        if word in _IGNORED:
            i += 1
            continue
        if word in _UNSUPPORTED:
            raise fail(f"the {word!r} directive is not supported by this runner", i)
        if word not in ("statement", "query"):
            raise fail(f"unknown directive {word!r}", i)

        rec = Record(
            kind=word,
            line=i + 1,
            header_index=i,
            conditions=conditions,
            requires=tuple(requires),
            skip="mode skip" if skipping else None,
        )
        conditions = []
        if word == "statement":
            if len(tokens) < 2 or tokens[1] not in ("ok", "error", "maybe"):
                raise fail("expected 'statement ok', 'statement error' or 'statement maybe'", i)
            rec.expect = tokens[1]
        else:
            rest = tokens[1:]
            if rest and _TYPES_RE.match(rest[0]):
                rec.types = rest.pop(0)
            if rest:
                if rest[0] not in SORT_MODES:
                    raise fail(f"unknown sort mode {rest[0]!r} (expected one of {', '.join(SORT_MODES)})", i)
                rec.sortmode = rest.pop(0)
            if rest:
                rec.label = rest.pop(0)
            if rest:
                raise fail(f"unexpected text after the query header: {' '.join(rest)!r}", i)
        i += 1
        sql_lines: list[str] = []
        while i < n and not _is_blank(lines[i]) and lines[i].rstrip() != "----":
            if not lines[i].lstrip().startswith("#"):
                sql_lines.append(lines[i].rstrip())
            i += 1
        rec.sql = "\n".join(sql_lines).strip()
        if not rec.sql:
            raise fail(f"{word} record without SQL", rec.header_index)
        if i < n and lines[i].rstrip() == "----":
            rec.has_separator = True
            i += 1
            out: list[str] = []
            # only an empty line ends the results: a value may be blank (" ")
            while i < n and lines[i].rstrip("\r\n") != "":
                out.append(lines[i].rstrip("\r\n"))
                i += 1
            if word == "query":
                rec.expected = out
            else:
                if rec.expect == "ok":
                    raise fail("'statement ok' cannot have a ---- section", rec.header_index)
                rec.error = "\n".join(out) if out else None
        rec.end_index = i
        records.append(rec)
    return TestFile(Path(path) if path is not None else None, records, lines)


def parse_file(path: Path | str) -> TestFile:
    path = Path(path)
    return parse(path.read_text(encoding="utf-8"), path)


# --------------------------------------------------------------------------- applicability


def skip_reason(rec: Record, engine: str, device: str | None) -> str | None:
    """Why ``rec`` does not run under ``engine``/``device`` (None: it runs).

    ``skipif``/``onlyif`` and ``require`` name an engine ("glint", "duckdb") or a
    device ("cpu", "cuda"); any other ``require`` skips.

    >>> r = Record("query", 1, conditions=[("onlyif", "glint")])
    >>> skip_reason(r, "duckdb", None)
    'onlyif glint'
    >>> skip_reason(r, "glint", "cpu") is None
    True
    """
    if rec.skip:
        return rec.skip
    names = {engine.lower()}
    if device:
        names.add(device.lower())
        names.add(device.lower().split(":")[0])
    for req in rec.requires:
        if req.lower() not in names:
            return f"require {req}: not available here"
    for kind, name in rec.conditions:
        if kind == "skipif" and name in names:
            return f"skipif {name}"
        if kind == "onlyif" and name not in names:
            return f"onlyif {name}"
    return None


# --------------------------------------------------------------------------- value printing


def _fmt_decimal(d: decimal.Decimal) -> str:
    if d.is_nan():
        return "nan"
    if d.is_infinite():
        return "inf" if d > 0 else "-inf"
    return format(d, "f")


def _fmt_float(x: float) -> str:
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(float(x))


def _fmt_float32(x: float) -> str:
    import numpy as np

    if math.isnan(x) or math.isinf(x):
        return _fmt_float(x)
    return str(np.float32(x))


def _fmt_fraction(micros: int) -> str:
    return f".{micros:06d}".rstrip("0") if micros else ""


def _fmt_time(t: _dt.time) -> str:
    return f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}{_fmt_fraction(t.microsecond)}"


def _fmt_timestamp(ts: _dt.datetime) -> str:
    s = f"{ts.date().isoformat()} {_fmt_time(ts.time())}"
    if ts.tzinfo is not None:
        off = ts.utcoffset() or _dt.timedelta(0)
        total = int(off.total_seconds())
        sign = "+" if total >= 0 else "-"
        hh, rem = divmod(abs(total), 3600)
        s += f"{sign}{hh:02d}" + (f":{rem // 60:02d}" if rem else "")
    return s


def _plural(n: int, unit: str) -> str:
    return f"{n} {unit}" + ("" if abs(n) == 1 else "s")


def format_interval(months: int, days: int, nanos: int) -> str:
    """DuckDB's INTERVAL text.

    >>> format_interval(14, 3, 3_723_000_000_000)
    '1 year 2 months 3 days 01:02:03'
    >>> format_interval(0, -1, 0)
    '-1 day'
    >>> format_interval(0, 0, 0)
    '00:00:00'
    """
    parts = []
    years = int(months / 12)  # truncation toward zero, like DuckDB
    months -= years * 12
    if years:
        parts.append(_plural(years, "year"))
    if months:
        parts.append(_plural(months, "month"))
    if days:
        parts.append(_plural(days, "day"))
    micros = int(nanos / 1000)
    if micros or not parts:
        sign = "-" if micros < 0 else ""
        micros = abs(micros)
        secs, frac = divmod(micros, 1_000_000)
        hh, rem = divmod(secs, 3600)
        mm, ss = divmod(rem, 60)
        parts.append(f"{sign}{hh:02d}:{mm:02d}:{ss:02d}{_fmt_fraction(frac)}")
    return " ".join(parts)


def _fmt_nested(v: Any) -> str:
    """Values inside lists/structs/maps (no NULL -> 'NULL' ambiguity games)."""
    if v is None:
        return NULL
    if isinstance(v, dict):
        return "{" + ", ".join(f"'{k}': {_fmt_nested(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return "[" + ", ".join(_fmt_nested(x) for x in v) + "]"
    s = format_value(v)
    return "" if s == EMPTY else s


def format_value(v: Any, arrow_type: Any = None) -> str:
    """Print one value the way expected results are written.

    >>> import decimal, datetime
    >>> [format_value(x) for x in (None, True, False, 42, -7, 0.5, 3.0, 1e20, "", "abc")]
    ['NULL', 'true', 'false', '42', '-7', '0.5', '3.0', '1e+20', '(empty)', 'abc']
    >>> format_value(decimal.Decimal("12.50")), format_value(datetime.date(1995, 3, 15))
    ('12.50', '1995-03-15')
    >>> format_value(datetime.datetime(1995, 3, 15, 1, 2, 3, 500000))
    '1995-03-15 01:02:03.5'
    """
    if v is None:
        return NULL
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if arrow_type is not None:
            import pyarrow as pa

            if pa.types.is_float32(arrow_type) or pa.types.is_float16(arrow_type):
                return _fmt_float32(v)
        return _fmt_float(v)
    if isinstance(v, decimal.Decimal):
        return _fmt_decimal(v)
    if isinstance(v, str):
        return v if v != "" else EMPTY
    if isinstance(v, _dt.datetime):
        return _fmt_timestamp(v)
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, _dt.time):
        return _fmt_time(v)
    if isinstance(v, _dt.timedelta):
        micros = (v.days * 86400 + v.seconds) * 1_000_000 + v.microseconds
        return format_interval(0, 0, micros * 1000)
    if hasattr(v, "months") and hasattr(v, "days") and hasattr(v, "nanoseconds"):
        return format_interval(v.months, v.days, v.nanoseconds)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in bytes(v)) or EMPTY
    if isinstance(v, (list, tuple, dict)):
        return _fmt_nested(v)
    # numpy scalars and anything else
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return format_value(v.item(), arrow_type)
    except ImportError:  # pragma: no cover
        pass
    return str(v)


def to_arrow_table(result: Any):
    """Accept a pyarrow Table, RecordBatchReader, RecordBatch or pandas DataFrame."""
    import pyarrow as pa

    if isinstance(result, pa.Table):
        return result
    if isinstance(result, pa.RecordBatch):
        return pa.Table.from_batches([result])
    if hasattr(result, "read_all"):
        return result.read_all()
    try:
        import pandas as pd

        if isinstance(result, pd.DataFrame):
            return pa.Table.from_pandas(result, preserve_index=False)
    except ImportError:  # pragma: no cover
        pass
    raise TypeError(f"cannot turn {type(result).__name__} into an Arrow table")


def table_to_rows(table: Any) -> list[list[str]]:
    """Print every value of an Arrow table; one list of strings per row."""
    table = to_arrow_table(table)
    cols = []
    for i in range(table.num_columns):
        typ = table.schema.field(i).type
        col = table.column(i)
        try:
            values = col.to_pylist()
        except (OverflowError, ValueError):  # dates/timestamps Python cannot hold (years past 9999, infinity)
            cols.append(_format_far_temporal(col))
            continue
        cols.append([format_value(v, typ) for v in values])
    return [list(r) for r in zip(*cols)] if cols else []


_INT32_MAX, _INT64_MAX = 2**31 - 1, 2**63 - 1


def _civil(days: int) -> str:
    """'YYYY-MM-DD' (with ' (BC)' for years <= 0) of a day count, DuckDB's format."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (m <= 2)
    return f"{y:04d}-{m:02d}-{d:02d}" if y > 0 else f"{1 - y:04d}-{m:02d}-{d:02d} (BC)"


def _format_far_temporal(col) -> list[str]:
    """DATE / TIMESTAMP values printed from their integers (infinities included)."""
    import pyarrow as pa

    if pa.types.is_timestamp(col.type):
        per_unit = {"s": 1_000_000, "ms": 1000, "us": 1, "ns": None}[col.type.unit]
        out = []
        for v in col.cast(pa.int64()).to_pylist():
            if v is None:
                out.append(NULL)
            elif abs(v) == _INT64_MAX:
                out.append("infinity" if v > 0 else "-infinity")
            else:
                us = v * per_unit if per_unit else int(v / 1000)
                days, tod = divmod(us, 86_400_000_000)
                secs, frac = divmod(tod, 1_000_000)
                out.append(
                    f"{_civil(days)} {secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_fmt_fraction(frac)}"
                )
        return out
    days = (
        col.cast(pa.int32()).to_pylist()
        if pa.types.is_date32(col.type)
        else [None if v is None else v // 86_400_000 for v in col.cast(pa.int64()).to_pylist()]
    )
    return [
        NULL if v is None else ("infinity" if v == _INT32_MAX else "-infinity" if v == -_INT32_MAX else _civil(v))
        for v in days
    ]


def infer_types(table: Any) -> str:
    """Type letters for a result: I for integers (and DECIMAL(p,0), which is how
    DuckDB's HUGEINT reaches Arrow), R for floating point, T for everything else."""
    import pyarrow as pa

    table = to_arrow_table(table)
    letters = []
    for f in table.schema:
        t = f.type
        if pa.types.is_integer(t) or (pa.types.is_decimal(t) and t.scale == 0):
            letters.append("I")
        elif pa.types.is_floating(t):
            letters.append("R")
        else:
            letters.append("T")
    return "".join(letters)


# --------------------------------------------------------------------------- comparison


def _as_float(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def values_equal(expected: str, actual: str, real: bool) -> bool:
    """Exact text match, or, for R columns, numbers within the relative tolerance.

    >>> values_equal("0.3", "0.30000000000000004", True), values_equal("0.3", "0.30000000000000004", False)
    (True, False)
    >>> values_equal("1.0", "1.000001", True), values_equal("NULL", "nan", True)
    (False, False)
    """
    if expected == actual:
        return True
    if not real:
        return False
    e, a = _as_float(expected), _as_float(actual)
    if e is None or a is None:
        return False
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a)
    if math.isinf(e) or math.isinf(a):
        return e == a
    return math.isclose(e, a, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _norm(value: str, real: bool) -> str:
    """Sort key of one value: R values rounded to 9 significant digits, so that
    values equal within the tolerance sort alike on both sides."""
    if real:
        f = _as_float(value)
        if f is not None and math.isfinite(f):
            return format(f, ".9g")
    return value


def sort_rows(rows: list[list[str]], types: str | None, mode: str) -> list[list[str]]:
    """Apply a sort mode. rowsort sorts rows, valuesort sorts all values (one per row).

    >>> sort_rows([["b", "2"], ["a", "10"]], "TI", "rowsort")
    [['a', '10'], ['b', '2']]
    >>> sort_rows([["b", "2"], ["a", "10"]], "TI", "valuesort")
    [['10'], ['2'], ['a'], ['b']]
    """
    if mode == "nosort":
        return [list(r) for r in rows]
    reals = [c == "R" for c in (types or "")]
    if mode == "rowsort":

        def key(row: list[str]):
            return tuple(_norm(v, reals[i] if i < len(reals) else False) for i, v in enumerate(row))

        return sorted((list(r) for r in rows), key=key)
    if mode == "valuesort":
        any_real = any(reals)
        flat = [v for r in rows for v in r]
        return [[v] for v in sorted(flat, key=lambda v: _norm(v, any_real))]
    raise ValueError(f"unknown sort mode {mode!r}")


def split_expected(rec: Record, ncols: int) -> list[list[str]]:
    """Expected lines as rows: tab-separated rows, or DuckDB's one-value-per-line
    layout when a multi-column result is written without tabs."""
    lines = rec.expected or []
    if ncols > 1 and lines and not any("\t" in ln for ln in lines) and len(lines) % ncols == 0:
        return [lines[i : i + ncols] for i in range(0, len(lines), ncols)]
    return [ln.split("\t") for ln in lines]


def result_hash(rows: list[list[str]]) -> str:
    """md5 of every value followed by a newline (sqllogictest's hashing)."""
    h = hashlib.md5()
    for r in rows:
        for v in r:
            h.update((v + "\n").encode("utf-8"))
    return h.hexdigest()


def _render(rows: list[list[str]], limit: int = 40) -> str:
    out = ["\t".join(r) for r in rows[:limit]]
    if len(rows) > limit:
        out.append(f"... ({len(rows) - limit} more rows)")
    return "\n".join(out) if out else "(no rows)"


def check_query(rec: Record, actual: list[list[str]], where: str = "") -> None:
    """Raise :class:`RecordFailure` unless ``actual`` (printed rows) matches ``rec``."""
    head = f"{where}:{rec.line}: " if where else f"line {rec.line}: "
    if rec.expected is None:
        raise RecordFailure(
            f"{head}query has no expected results (no ---- section); fill them in with tests/sqllogic/generate.py"
        )
    if not rec.types:
        raise RecordFailure(f"{head}query has no column types; fill them in with tests/sqllogic/generate.py")
    ncols = len(actual[0]) if actual else len(rec.types)
    if actual and ncols != len(rec.types):
        raise RecordFailure(
            f"{head}query returned {ncols} columns, the record declares "
            f"{len(rec.types)} ({rec.types})\nSQL:\n{rec.sql}\nActual:\n{_render(actual)}"
        )
    got = sort_rows(actual, rec.types, rec.sortmode)
    lines = rec.expected
    if len(lines) == 1 and (m := _HASH_RE.match(lines[0].strip())):
        count, digest = int(m.group(1)), m.group(2)
        nvalues = sum(len(r) for r in got)
        if nvalues != count or result_hash(got) != digest:
            raise RecordFailure(
                f"{head}result hash mismatch: expected {count} values hashing to {digest}, "
                f"got {nvalues} values hashing to {result_hash(got)}\nSQL:\n{rec.sql}\n"
                f"Actual:\n{_render(got)}"
            )
        return
    want = sort_rows(split_expected(rec, len(rec.types)), rec.types, rec.sortmode)
    problem = None
    if rec.sortmode == "valuesort":
        reals = "R" in rec.types
        if len(want) != len(got):
            problem = f"expected {len(want)} values, got {len(got)}"
        else:
            for i, (w, g) in enumerate(zip(want, got)):
                if not values_equal(w[0], g[0], reals):
                    problem = f"sorted value {i + 1}: expected {w[0]!r}, got {g[0]!r}"
                    break
    else:
        if len(want) != len(got):
            problem = f"expected {len(want)} rows, got {len(got)}"
        else:
            for i, (w, g) in enumerate(zip(want, got)):
                if len(w) != len(g):
                    problem = f"row {i + 1}: expected {len(w)} values, got {len(g)}"
                    break
                for j, (ev, av) in enumerate(zip(w, g)):
                    if not values_equal(ev, av, j < len(rec.types) and rec.types[j] == "R"):
                        problem = f"row {i + 1}, column {j + 1}: expected {ev!r}, got {av!r}"
                        break
                if problem:
                    break
    if problem:
        raise RecordFailure(
            f"{head}wrong result ({rec.sortmode}): {problem}\nSQL:\n{rec.sql}\n"
            f"Expected:\n{_render(want)}\nActual:\n{_render(got)}"
        )


def check_error(rec: Record, message: str, where: str = "", check_fragment: bool = True) -> None:
    """A statement error happened; check its message against the record's fragment.
    A fragment starting with ``<REGEX>:`` is a regular expression (searched)."""
    if not check_fragment or not rec.error:
        return
    head = f"{where}:{rec.line}: " if where else f"line {rec.line}: "
    frag = rec.error
    if frag.startswith("<REGEX>:"):
        if re.search(frag[len("<REGEX>:") :], message, re.DOTALL):
            return
    elif frag in message:
        return
    raise RecordFailure(
        f"{head}error message does not contain the expected fragment\nSQL:\n{rec.sql}\n"
        f"Expected fragment: {frag!r}\nActual message: {message!r}"
    )


# --------------------------------------------------------------------------- engines


def _strip_leading_comments(sql: str) -> str:
    s = sql.lstrip()
    while True:
        if s.startswith("--"):
            nl = s.find("\n")
            s = "" if nl < 0 else s[nl + 1 :].lstrip()
        elif s.startswith("/*"):
            end = s.find("*/")
            s = "" if end < 0 else s[end + 2 :].lstrip()
        else:
            return s


def is_store_statement(sql: str) -> bool:
    """Whether the table store (DuckDB) runs this statement instead of the engine.

    >>> is_store_statement("create or replace table t AS SELECT 1"), is_store_statement("INSERT INTO t VALUES (1)")
    (True, True)
    >>> is_store_statement("CREATE VIEW v AS SELECT 1"), is_store_statement("SELECT 1")
    (False, False)
    """
    return bool(_STORE_RE.match(_strip_leading_comments(sql)))


def is_query_text(sql: str) -> bool:
    return bool(_QUERY_RE.match(_strip_leading_comments(sql)))


class DuckDBEngine:
    """The oracle: a DuckDB connection that sees the store's tables only through
    ``register`` (the same path glint gets them by)."""

    name = "duckdb"

    def __init__(self, device: str | None = None):
        import duckdb

        self._duckdb = duckdb
        self.con = duckdb.connect(":memory:")
        # as the fuzz oracle (glint.testing.fuzz.runner): DuckDB 1.4's join filter
        # pushdown below a LIMIT changes the rows the LIMIT keeps (duckdb/duckdb#22924);
        # tests/sqllogic/fuzz/regressions.test holds a record of it
        self.con.execute("SET disabled_optimizers = 'join_filter_pushdown'")
        # one thread: the last digit of a floating-point aggregate depends on the order
        # DuckDB's threads combine partial states in (var_pop over DISTINCT differed
        # between the 2-core CI machine and this one), and a checked-in answer must not
        self.con.execute("SET threads = 1")
        self.error_types: tuple[type[BaseException], ...] = (duckdb.Error,)

    def register(self, name: str, table) -> None:
        self.con.register(name, table)

    def unregister(self, name: str) -> None:
        self.con.unregister(name)

    def execute(self, sql: str) -> None:
        self.con.execute(sql)
        if is_query_text(sql):
            self.con.fetchall()

    def query(self, sql: str):
        return to_arrow_table(self.con.execute(sql).arrow())

    def close(self) -> None:
        self.con.close()


class GlintEngine:
    name = "glint"

    def __init__(self, device: str | None = "cpu"):
        import glint

        self.con = glint.connect(device=device or "cpu")
        self.error_types = (glint.GlintError,)

    def register(self, name: str, table) -> None:
        self.con.register(name, table)

    def unregister(self, name: str) -> None:
        fn = getattr(self.con, "unregister", None)
        if fn is not None:
            fn(name)

    def execute(self, sql: str) -> None:
        res = self.con.sql(sql)
        if res is not None and is_query_text(sql):
            res.fetchall()

    def query(self, sql: str):
        res = self.con.sql(sql)
        if res is None:
            raise RecordFailure("con.sql() returned None for a query")
        return to_arrow_table(res.arrow())

    def close(self) -> None:
        fn = getattr(self.con, "close", None)
        if fn is not None:
            fn()


def make_engine(engine: str, device: str | None):
    if engine == "duckdb":
        return DuckDBEngine(device)
    if engine == "glint":
        return GlintEngine(device)
    raise ValueError(f"unknown sqllogic engine {engine!r} (expected one of {', '.join(ENGINES)})")


# --------------------------------------------------------------------------- running


def _quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Session:
    """Runs the records of one file, in order, against one engine/device."""

    def __init__(self, test_file: TestFile, engine: str = "glint", device: str | None = "cpu"):
        import duckdb

        self.file = test_file
        self.engine_name = engine
        self.device = device
        self.where = str(test_file.path) if test_file.path is not None else "<string>"
        self.store = duckdb.connect(":memory:")
        if test_file.path is not None:
            base = str(Path(test_file.path).resolve().parent).replace("'", "''")
            self.store.execute(f"SET file_search_path = '{base}'")
        self._store_errors = (duckdb.Error,)
        self.engine = None
        self.engine_error: BaseException | None = None
        try:
            self.engine = make_engine(engine, device)
        except Exception as e:  # reported by every record that needs the engine
            self.engine_error = e
        self.registered: set[str] = set()
        self.dirty = False
        self.engine_writes = test_file.path is not None and Path(test_file.path).parent.name == ENGINE_WRITES_DIR
        self._test_dir: str | None = None
        self.done: dict[int, BaseException | None] = {}  # record index -> outcome (None: passed)

    # -- table store -> engine
    def _need_engine(self):
        if self.engine is None:
            raise RecordFailure(
                f"could not open a {self.engine_name} connection "
                f"(device={self.device}): {type(self.engine_error).__name__}: {self.engine_error}"
            )
        return self.engine

    def sync(self) -> None:
        """(Re)register every table of the store into the engine; unregister dropped ones."""
        if not self.dirty:
            return
        engine = self._need_engine()
        names = [
            r[0] for r in self.store.execute("SELECT table_name FROM duckdb_tables() ORDER BY table_name").fetchall()
        ]
        for gone in sorted(self.registered - set(names)):
            try:
                engine.unregister(gone)
            except Exception as e:
                raise RecordFailure(
                    f"unregistering dropped table {gone!r} from {self.engine_name} failed: {type(e).__name__}: {e}"
                ) from e
        for name in names:
            table = to_arrow_table(self.store.execute(f"SELECT * FROM {_quote_ident(name)}").arrow())
            try:
                engine.register(name, table)
            except Exception as e:
                raise RecordFailure(
                    f"registering table {name!r} ({table.schema.to_string(show_schema_metadata=False)!r})"
                    f" into {self.engine_name} failed: {type(e).__name__}: {e}"
                ) from e
        self.registered = set(names)
        self.dirty = False

    def sql(self, rec: Record) -> str:
        """The record's SQL with __TEST_DIR__ replaced by the session's directory."""
        if TEST_DIR not in rec.sql:
            return rec.sql
        if self._test_dir is None:
            import tempfile

            self._test_dir = tempfile.mkdtemp(prefix="glint-sqllogic-")
        return rec.sql.replace(TEST_DIR, self._test_dir)

    # -- records
    def run_statement(self, rec: Record) -> None:
        store = is_store_statement(rec.sql) and not self.engine_writes
        if store:
            runner, errors = self.store.execute, self._store_errors
            self.dirty = True  # even a failing statement may have done something
        else:
            engine = self._need_engine()
            self.sync()
            runner, errors = engine.execute, engine.error_types
        try:
            runner(self.sql(rec))
        except errors as e:
            if rec.expect == "ok":
                raise RecordFailure(
                    f"{self.where}:{rec.line}: statement failed: {type(e).__name__}: {e}\nSQL:\n{rec.sql}"
                ) from e
            if rec.expect == "error":
                # glint's fragments are glint's messages: DuckDB (as engine) is only held to failing.
                check_error(rec, str(e), self.where, check_fragment=store or self.engine_name != "duckdb")
            return
        except RecordFailure:
            raise
        except Exception as e:
            if rec.expect == "maybe":
                return
            raise RecordFailure(
                f"{self.where}:{rec.line}: statement raised an internal error "
                f"(not a {'/'.join(t.__name__ for t in errors)}): {type(e).__name__}: {e}\n"
                f"SQL:\n{rec.sql}"
            ) from e
        if rec.expect == "error":
            raise RecordFailure(f"{self.where}:{rec.line}: statement should have failed but succeeded\nSQL:\n{rec.sql}")

    def query_table(self, rec: Record):
        engine = self._need_engine()
        self.sync()
        try:
            return engine.query(self.sql(rec))
        except RecordFailure:
            raise
        except Exception as e:
            raise RecordFailure(
                f"{self.where}:{rec.line}: query failed: {type(e).__name__}: {e}\nSQL:\n{rec.sql}"
            ) from e

    def run_query(self, rec: Record) -> None:
        check_query(rec, table_to_rows(self.query_table(rec)), self.where)

    def run_record(self, rec: Record) -> None:
        reason = skip_reason(rec, self.engine_name, self.device)
        if reason:
            raise RecordSkipped(reason)
        if rec.kind == "statement":
            self.run_statement(rec)
        else:
            self.run_query(rec)

    def run_index(self, index: int) -> None:
        """Run record ``index`` after replaying the statements before it that have
        not run yet (deselected items); a statement already run reports its outcome."""
        for j in range(index):
            if j in self.done:
                continue
            prev = self.file.records[j]
            if prev.kind != "statement" or skip_reason(prev, self.engine_name, self.device):
                continue
            try:
                self.run_statement(prev)
                self.done[j] = None
            except Exception as e:  # its own item (if selected) reports it
                self.done[j] = e
        if index in self.done:
            outcome = self.done[index]
            if outcome is not None:
                raise outcome
            return
        try:
            self.run_record(self.file.records[index])
        except RecordSkipped:
            raise
        except Exception as e:
            self.done[index] = e
            raise
        self.done[index] = None

    def run_all(self) -> list[tuple[Record, BaseException | None]]:
        """Run every record; return (record, outcome) pairs (outcome None: passed)."""
        results = []
        for i, rec in enumerate(self.file.records):
            try:
                self.run_index(i)
                results.append((rec, None))
            except RecordSkipped as e:
                results.append((rec, e))
            except Exception as e:
                results.append((rec, e))
        return results

    def close(self) -> None:
        if self.engine is not None:
            try:
                self.engine.close()
            except Exception:
                pass
        try:
            self.store.close()
        except Exception:
            pass
        if self._test_dir is not None:
            import shutil

            shutil.rmtree(self._test_dir, ignore_errors=True)


def run_file(path: Path | str, engine: str = "duckdb", device: str | None = None):
    """Run a whole file; returns (record, outcome) pairs. Handy from a REPL."""
    sess = Session(parse_file(path), engine, device)
    try:
        return sess.run_all()
    finally:
        sess.close()


def iter_test_files(paths: Iterable[Path | str]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            out.extend(sorted(p.rglob("*.test")))
        else:
            out.append(p)
    return out
