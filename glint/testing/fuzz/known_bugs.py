"""glint's known bugs: filters that count matching failures apart (``glint
fuzz --known-bugs``), so that one frequent bug does not drown a run."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from glint.testing.compare import compare_tables
from glint.testing.fuzz.results import Outcome, normalize


@dataclass
class KnownBug:
    """A temporary filter: failures whose SQL matches ``predicate`` are counted
    as this known bug (and not reduced) when ``known_bugs`` is on, so that one
    frequent bug does not drown a run. Remove the entry once the bug is fixed."""

    name: str
    description: str
    predicate: Callable[[str, Outcome], bool]


def _same_rows(o: Outcome) -> bool:
    """The results hold the same rows (as multisets): only the order differs."""
    if o.glint_table is None or o.duck_table is None:
        return False
    try:
        g, e = normalize(o.glint_table)[0], normalize(o.duck_table)[0]
        return not compare_tables(g, e, ordered=False)
    except Exception:  # noqa: BLE001
        return False


def _msg(o: Outcome) -> str:
    return (o.glint_error or "") + "\n" + "\n".join(o.details)


# Bugs the fuzzer found (reported to the engine's owner), each keyed by a
# predicate on the query text and the outcome. Used only with known_bugs=True
# (``glint fuzz --known-bugs``); remove an entry when its bug is fixed.
KNOWN_BUGS: list[KnownBug] = [
    KnownBug(
        "int-overflow-unchecked",
        "BIGINT + - * and negation/ABS of any integer wrap around instead of raising DuckDB's overflow error",
        lambda sql, o: (
            o.status == "mismatch"
            and o.duck_error is not None
            and bool(
                re.search(
                    r"Overflow in (addition|subtraction|multiplication|negation) of (INT64|integer)|Overflow on abs",
                    o.duck_error,
                )
            )
        ),
    ),
    KnownBug(
        "integer-division-sigfpe",
        "INT_MIN // -1 (and % -1) kills the process with SIGFPE",
        lambda sql, o: o.status == "crash" and "SIGFPE" in (o.glint_error or ""),
    ),
    KnownBug(
        "join-double-key-empty-crash",
        "an equi-join between a DOUBLE key and a key of another type crashes when a side is empty/NULL-only "
        "(RuntimeError: cannot reshape tensor of 0 elements)",
        lambda sql, o: o.status == "crash" and "cannot reshape tensor of 0 elements" in _msg(o),
    ),
    KnownBug(
        "wide-decimal-indexerror",
        "arithmetic / COALESCE / set operations mixing a wide DECIMAL (a SUM, DECIMAL(38,s)) with another "
        "DECIMAL crash with IndexError: list index out of range",
        lambda sql, o: (
            o.status == "crash"
            and (o.glint_error_type == "IndexError" or ("Sizes of tensors must match except in dimension 0" in _msg(o)))
        ),
    ),
    KnownBug(
        "decimal-scale-tensor-size",
        "COALESCE / IN lists over DECIMALs of different scales crash (The size of tensor a (3) must match "
        "the size of tensor b (2))",
        lambda sql, o: o.status == "crash" and bool(re.search(r"The size of tensor a \(\d+\) must match", _msg(o))),
    ),
    KnownBug(
        "decimal-rescale-int64-overflow",
        "a DECIMAL literal/value rescaled past 18 digits crashes (value cannot be converted to int64_t / "
        "int too big to convert / Overflow when unpacking long long) instead of NotSupported or a result",
        lambda sql, o: (
            o.status == "crash"
            and bool(
                re.search(
                    r"cannot be converted to type int64_t|int too big to convert|Overflow when unpacking long"
                    r"|can't convert negative int to unsigned",
                    _msg(o),
                )
            )
        ),
    ),
    KnownBug(
        "null-literal-typemismatch",
        "an untyped NULL in arithmetic / ROUND / SUBSTRING(MAX(NULL)) raises TypeMismatch where DuckDB answers",
        lambda sql, o: (
            o.status == "error_mismatch" and o.glint_error_type == "TypeMismatch" and "NULL" in (o.glint_error or "")
        ),
    ),
    KnownBug(
        "setop-null-literal-type",
        "UNION/INTERSECT/EXCEPT with an untyped NULL column types the column INTEGER (casts strings to INT32)",
        lambda sql, o: (
            bool(re.search(r"\b(UNION|INTERSECT|EXCEPT)\b", sql))
            and (
                (o.status in ("error_mismatch", "crash") and "Could not convert string" in _msg(o))
                or (o.status == "mismatch" and "actual type" in _msg(o))
            )
        ),
    ),
    KnownBug(
        "in-subquery-null-semantics",
        "x [NOT] IN (SELECT ...) is TRUE/FALSE where DuckDB says NULL (no match, NULLs in the subquery): "
        "with a constant or NULL on the left, a subquery of only NULLs, or sides of different types",
        lambda sql, o: (
            o.status == "mismatch"
            and bool(re.search(r"\bIN\s*\(\s*SELECT", sql))
            and (
                bool(re.search(r"\bNULL\s+(NOT\s+)?IN\s*\(\s*SELECT", sql))
                or bool(re.search(r"actual (True|False), expected NULL", _msg(o)))
            )
        ),
    ),
    KnownBug(
        "bigint-decimal-arith-wrap",
        "BIGINT +/- DECIMAL (result wider than 18 digits) wraps the BIGINT around when rescaling: "
        "b - 1.5 with b = -9223372036854775808 gives -1.5",
        lambda sql, o: o.status == "mismatch" and bool(re.search(r"expected -?92\d{17}", _msg(o))),
    ),
    KnownBug(
        "round-double",
        "ROUND(x, n) on DOUBLE: overflows to inf for huge x, loses the sign of negative zero",
        lambda sql, o: (
            o.status == "mismatch"
            and "ROUND(" in sql
            and bool(re.search(r"actual inf|expected -inf|'-0\.0'|expected -0\.0", _msg(o)))
        ),
    ),
    KnownBug(
        "min-max-nan",
        "MIN/MAX over DOUBLEs with NaN: DuckDB orders NaN above every number (MIN ignores it), glint returns NaN",
        lambda sql, o: o.status == "mismatch" and bool(re.search(r"actual nan, expected", _msg(o))),
    ),
    KnownBug(
        "order-by-null-garbage",
        "ORDER BY a computed key (x - NULL, f / k, d4 - d15, ...): its NULL rows are ordered by the "
        "undefined values stored under the NULLs instead of by the next keys",
        lambda sql, o: o.status == "mismatch" and "ORDER BY" in sql and _same_rows(o),
    ),
]
