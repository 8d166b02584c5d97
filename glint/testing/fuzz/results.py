"""The outcome of one generated query in both engines, and the comparison of
their results (the statuses are described in glint.testing.fuzz.runner)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from glint.testing.compare import compare_query_result

STATUSES = (
    "match",
    "mismatch",
    "crash",
    "refusal",
    "error_mismatch",
    "both_error",
    "duck_only_error",
    "eval_order",
    "oracle_bug",
    "known_bug",
    "skipped",
)
FAILURES = ("mismatch", "crash")
MAX_RESULT_ROWS = 200_000


@dataclass
class Outcome:
    status: str
    sql: str
    details: list[str] = field(default_factory=list)
    duck_error: str | None = None
    glint_error: str | None = None  # "Type: message"
    glint_error_type: str | None = None
    construct: str | None = None
    known: str | None = None
    glint_s: float = 0.0
    duck_s: float = 0.0
    glint_table: pa.Table | None = None
    duck_table: pa.Table | None = None

    def summary(self) -> str:
        if self.status in ("mismatch",) and self.details:
            return self.details[0]
        if self.glint_error:
            return self.glint_error
        return self.status

    def to_json(self) -> dict:
        return {
            "status": self.status,
            "sql": self.sql,
            "details": self.details,
            "duck_error": self.duck_error,
            "glint_error": self.glint_error,
            "construct": self.construct,
            "known": self.known,
        }


def normalize(t: pa.Table) -> tuple[pa.Table, list[str]]:
    """Dates as day numbers and timestamps as microseconds (years past 9999
    do not fit Python's datetime). Returns the table and the type classes
    ("date", "timestamp" or None), which must agree between the engines."""
    cols, classes = [], []
    for f, c in zip(t.schema, t.columns):
        typ = f.type
        if pa.types.is_dictionary(typ):
            c = c.cast(typ.value_type)
            typ = typ.value_type
        if pa.types.is_string_view(typ) or pa.types.is_large_string(typ):
            c = c.cast(pa.string())
        if c.null_count == len(c) and not pa.types.is_null(typ):
            # all NULL (or no rows): the type carries no value (DuckDB types NULL || 'x' INTEGER)
            cols.append(pa.nulls(len(c)))
            classes.append(None)
            continue
        if pa.types.is_timestamp(typ):
            c = c.cast(pa.int64())
            classes.append("timestamp")
        elif pa.types.is_date(typ):
            c = c.cast(pa.date32()).cast(pa.int32()).cast(pa.int64())
            classes.append("date")
        else:
            classes.append(None)
        cols.append(c)
    return pa.Table.from_arrays(cols, names=[f"col{i}" for i in range(len(cols))]) if cols else t, classes


def compare_results(sql: str, got: pa.Table, expected: pa.Table) -> list[str]:
    """Differences between glint's result and DuckDB's (none: they match)."""
    if got.num_columns != expected.num_columns:
        return [
            f"column count: glint {got.num_columns} {got.schema.names}, DuckDB {expected.num_columns} "
            f"{expected.schema.names}"
        ]
    g, gc = normalize(got)
    e, ec = normalize(expected)
    diffs = []
    for i, (a, b) in enumerate(zip(gc, ec)):
        if pa.types.is_null(g.schema.types[i]) or pa.types.is_null(e.schema.types[i]):
            continue
        if a != b:
            diffs.append(f"column {i + 1}: glint type {got.schema.types[i]}, DuckDB type {expected.schema.types[i]}")
    if diffs:
        return diffs
    return compare_query_result(sql, g, e, rel_tol=1e-9, check_names=True)
