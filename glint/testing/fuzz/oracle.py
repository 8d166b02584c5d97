"""What DuckDB, the oracle, does differently from glint without either being
wrong: its limitations (errors that are no property of the query), and the
probes that tell an evaluation-order difference (DuckDB raised on a value
glint never computed) from a missing check in glint."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

# DuckDB errors that are DuckDB's own limitation, not a property of the query:
# glint answering these is recorded (duck_only_error), not a mismatch.
DUCKDB_LIMITATIONS = [
    (
        re.compile(r"Overflow in (addition|subtract\w*|multiplication) of DECIMAL\(18\)"),
        "DuckDB keeps a DECIMAL(<=18) result at width 18 and overflows where the exact result needs 19+ digits",
    ),
    (
        re.compile(r"Casting value \"[^\"]*\" to type DECIMAL\(18,\d+\) failed: value is out of range!"),
        "DuckDB casts a DECIMAL operand to a DECIMAL(18,s) that cannot hold it",
    ),
    (re.compile(r"Not implemented", re.I), "not implemented in DuckDB"),
    # DuckDB rewrites NOT (x IN (...)) before matching select expressions against the
    # GROUP BY list, so an expression built on a grouped one can fail to match; glint
    # matches the grouped expression inside it, as SQL allows (seed 21 q1987)
    (
        re.compile(r"must appear in the GROUP BY clause"),
        "DuckDB does not find a grouped expression inside a larger one",
    ),
    # the generated tables have no BLOB column: DuckDB resolves a string function of an
    # untyped NULL to its BLOB overload (repeat(NULL || s, 2) is a BLOB, since NULL || s
    # folds to an untyped NULL) and then refuses to compare it with a VARCHAR; glint types
    # it VARCHAR, as PostgreSQL does (seed 604 q947)
    # (also "No function matches ... replace(BLOB, VARCHAR, ...)": seed 613 q173)
    (re.compile(r"Binder Error: .*\bBLOB\b"), "DuckDB types a string function of an untyped NULL as a BLOB"),
]


RUNTIME_ERROR = re.compile(r"(OutOfRangeException|ConversionException|InvalidInputException)")


_INT_TYPES = {
    "INT8": "TINYINT",
    "INT16": "SMALLINT",
    "INT32": "INTEGER",
    "INT64": "BIGINT",
    "INT128": "HUGEINT",
    "TINYINT": "TINYINT",
    "SMALLINT": "SMALLINT",
    "INTEGER": "INTEGER",
    "BIGINT": "BIGINT",
    "HUGEINT": "HUGEINT",
}
_CAST_TYPES = dict(_INT_TYPES, DOUBLE="DOUBLE", FLOAT="FLOAT")
_OVERFLOW = re.compile(
    r"Overflow in (?:addition|subtract(?:ion)?|multiplication|division) of (\w+) "
    r"\((-?\d+) ([-+*/]) (-?\d+)\)"
)
_CAST_RANGE = re.compile(
    r"Type (\w+) with value (\S+) can't be cast because the value is out of range for "
    r"the destination type (\w+)"
)
_CAST_DECIMAL = re.compile(r'Casting value "(-?\d+(?:\.\d+)?)" to type (DECIMAL\(\d+,\d+\)) failed')
_CAST_STRING = re.compile(r"Could not convert string '([^']*)' to (\w+)")
_CAST_DECIMAL_VALUE = re.compile(r"Failed to cast decimal value (-?\d+) to type (\w+)")
_CAST_VALUE = re.compile(r"Could not cast value (-?\d+(?:\.\d+)?) to (DECIMAL\(\d+,\d+\))")
_TIME_RANGE = re.compile(r"Time out of range: (-?\d+):(-?\d+):(-?\d+(?:\.\d+)?)")
_DATE_RANGE = re.compile(r"Date out of range: (-?\d+)-(-?\d+)-(-?\d+)\b")
_ABS = re.compile(r"Overflow on abs\((-?\d+)\)")
_INT_MIN = {-(2**31): "INTEGER", -(2**63): "BIGINT"}  # the types glint computes in


def error_probe(duck_error: str) -> str | None:
    """A query without tables that computes exactly the operation a DuckDB
    run-time error names, or None when the message does not say enough.

    >>> error_probe("Out of Range Error: Overflow in subtraction of INT64 (-9223372036854775808 - 9)!")
    'SELECT CAST(-9223372036854775808 AS BIGINT) - CAST(9 AS BIGINT)'
    >>> error_probe("Conversion Error: Type INT64 with value -9223372036854775808 can't be cast because "
    ...             "the value is out of range for the destination type INT32")
    'SELECT CAST(CAST(-9223372036854775808 AS BIGINT) AS INTEGER)'
    >>> error_probe("Overflow in division of INT32 (-2147483648 / -1)!")
    'SELECT CAST(-2147483648 AS INTEGER) // CAST(-1 AS INTEGER)'
    >>> error_probe("Out of Range Error: Overflow on abs(-9223372036854775808)")
    'SELECT ABS(CAST(-9223372036854775808 AS BIGINT))'
    >>> error_probe("Conversion Error: Date out of range: 2021-2-30")
    'SELECT make_date(2021, 2, 30)'
    >>> error_probe("Conversion Error: Time out of range: 25:1:7.500000")
    'SELECT make_timestamp(2000, 1, 1, 25, 1, 7.500000)'
    >>> error_probe("Conversion Error: Unimplemented type for cast") is None
    True
    """
    m = _OVERFLOW.search(duck_error)
    if m and m.group(1) in _INT_TYPES:
        t = _INT_TYPES[m.group(1)]
        op = "//" if m.group(3) == "/" else m.group(3)
        return f"SELECT CAST({m.group(2)} AS {t}) {op} CAST({m.group(4)} AS {t})"
    m = _CAST_RANGE.search(duck_error)
    if m and m.group(1) in _CAST_TYPES and m.group(3) in _CAST_TYPES:
        v = m.group(2)
        try:
            float(v)
        except ValueError:
            return None
        return f"SELECT CAST(CAST({v} AS {_CAST_TYPES[m.group(1)]}) AS {_CAST_TYPES[m.group(3)]})"
    m = _CAST_DECIMAL.search(duck_error)
    if m:
        return f"SELECT CAST({m.group(1)} AS {m.group(2)})"
    m = _CAST_STRING.search(duck_error)
    if m and m.group(2) in _CAST_TYPES:
        return f"SELECT CAST('{m.group(1)}' AS {_CAST_TYPES[m.group(2)]})"
    # the messages below name the value without its type: the probe casts a
    # value of the same magnitude (the unscaled one is at least as large)
    m = _CAST_DECIMAL_VALUE.search(duck_error)
    if m and m.group(2) in _INT_TYPES and abs(int(m.group(1))) < 2**63:
        return f"SELECT CAST(CAST({m.group(1)} AS BIGINT) AS {_INT_TYPES[m.group(2)]})"
    m = _CAST_VALUE.search(duck_error)
    if m:
        return f"SELECT CAST({float(m.group(1))!r} AS {m.group(2)})"
    if "Overflow in negation of integer" in duck_error:
        return "SELECT -CAST(-2147483648 AS INTEGER)"
    m = _ABS.search(duck_error)
    if m and int(m.group(1)) in _INT_MIN:
        return f"SELECT ABS(CAST({m.group(1)} AS {_INT_MIN[int(m.group(1))]}))"
    m = _DATE_RANGE.search(duck_error)  # make_date / make_timestamp of a day that does not exist
    if m:
        return f"SELECT make_date({m.group(1)}, {m.group(2)}, {m.group(3)})"
    m = _TIME_RANGE.search(duck_error)  # make_timestamp of a time that does not exist
    if m:
        return f"SELECT make_timestamp(2000, 1, 1, {m.group(1)}, {m.group(2)}, {m.group(3)})"
    return None


_FRAMELESS = re.compile(r"\b(?:RANK|DENSE_RANK|PERCENT_RANK|CUME_DIST|ROW_NUMBER)\(\s*\)|\bNTILE\(\s*\d+\s*\)", re.I)


def frame_probe(sql: str, duck_error: str) -> str | None:
    """DuckDB computes a RANGE frame's bounds (key ± INTERVAL) also for the
    ranking functions, which ignore the frame, and fails where a bound leaves
    the TIMESTAMP range (seeds 607 q119, 610 q488, 614 q1639); glint does not
    compute them. The probe: the same query with those functions as COUNT(*),
    which reads the frame, so glint computes the bounds and must raise too.

    >>> frame_probe("SELECT CUME_DIST() OVER (ORDER BY t RANGE BETWEEN INTERVAL 3 HOUR PRECEDING "
    ...             "AND CURRENT ROW) FROM x", "Conversion Error: Date and time not in timestamp range")
    'SELECT COUNT(*) OVER (ORDER BY t RANGE BETWEEN INTERVAL 3 HOUR PRECEDING AND CURRENT ROW) FROM x'
    """
    if "not in timestamp range" not in duck_error or not re.search(r"\bRANGE\s+BETWEEN\b[^)]*\bINTERVAL\b", sql, re.I):
        return None
    probe = _FRAMELESS.sub("COUNT(*)", sql)
    return probe if probe != sql else None


def _before_caret(msg: str) -> str:
    """The query text DuckDB quotes before its ^ marker ('' without one)."""
    lines = msg.splitlines()
    for i, line in enumerate(lines[1:], 1):
        if line.strip() == "^" and lines[i - 1].startswith("LINE"):
            return lines[i - 1][: line.index("^")]
    return ""


def duckdb_limitation(msg: str) -> str | None:
    """Why DuckDB's error ``msg`` is DuckDB's limitation, or None.

    >>> duckdb_limitation('Conversion Error: Casting value "-999.900" to type DECIMAL(4,1) failed')[:40]
    'DuckDB rejects a DECIMAL cast whose roun'
    >>> duckdb_limitation('Conversion Error: Casting value "1000.0" to type DECIMAL(4,1) failed') is None
    True
    """
    m = _CAST_DECIMAL.search(msg)
    if m:
        # DuckDB 1.4 rejects some scale-reducing casts whose rounded value fits,
        # e.g. CAST(999.90 AS DECIMAL(4,1)); the message has all it takes to check
        p, s = map(int, re.findall(r"\d+", m.group(2)))
        rounded = Decimal(m.group(1)).quantize(Decimal(1).scaleb(-s), rounding=ROUND_HALF_UP)
        if abs(rounded) < 10 ** (p - s):
            return f"DuckDB rejects a DECIMAL cast whose rounded value {rounded} fits {m.group(2)}"
    m = re.search(r'Referenced table "(\w+)" not found', msg)
    if m and "HAVING" in _before_caret(msg):
        # DuckDB rewrites NOT (...) in HAVING before matching it against the
        # GROUP BY expressions, then binds the table it came from out of scope
        # (seed 53 q1759, seed 95 q973); glint matches the grouped expression
        return "DuckDB loses a grouped expression's table under NOT in HAVING"
    for pat, why in DUCKDB_LIMITATIONS:
        if pat.search(msg):
            return why
    return None
