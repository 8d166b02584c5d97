"""The fuzz generator's aggregates of DuckDB's wider set, written so that
their value does not depend on row order or on how ties break:

- ARG_MAX / ARG_MIN / MAX_BY / MIN_BY and the _NULL forms of a value that is
  a function of the key (the key itself, or the key where it passes a
  bound and NULL elsewhere): rows with equal keys carry equal values;
- FIRST / LAST / ANY_VALUE and MODE ordered by their own argument (ties are
  equal values; MODE's equally frequent values then go to the first in
  that order);
- BIT_AND / BIT_OR / BIT_XOR and COUNT_IF;
- CORR, COVAR_*, the REGR_* family (REGR_COUNT cast to BIGINT: DuckDB's is
  UINTEGER), PRODUCT and ENTROPY over integers and DECIMALs;
- SKEWNESS and KURTOSIS over small integers only: DuckDB sums the powers of
  the values, which loses digits on larger ones.

The approximate aggregates are left out: their answers are not DuckDB's.
They draw from a stream of their own (``rx``), so the rest of a query is
drawn as before where they are not chosen.

>>> import random
>>> from glint.testing.fuzz.sqltypes import INTEGER
>>> class G:
...     rx = random.Random(3)
...     def row_expr(self, kind, scope, d, sub):
...         return E("a1.c", INTEGER)
...     def feat(self, name):
...         pass
>>> stat_aggregate_call(G(), "int", None, 1).sql.startswith(("ARG", "MAX", "MIN", "FIRST", "LAST", "ANY", "MODE", "BIT", "COUNT"))
True
"""

from __future__ import annotations

import re

from glint.testing.fuzz.sqltypes import BIGINT, DOUBLE, HUGEINT, E

_PAIRS = [
    "CORR",
    "COVAR_POP",
    "COVAR_SAMP",
    "REGR_SLOPE",
    "REGR_INTERCEPT",
    "REGR_R2",
    "REGR_AVGX",
    "REGR_AVGY",
    "REGR_SXX",
    "REGR_SYY",
    "REGR_SXY",
]
_BOUNDS = {"int": "3", "dec": "1.5", "dbl": "0.5", "str": "'m'", "date": "DATE '2000-01-01'", "bool": "false"}
_ORDERS = ["", " DESC", " NULLS FIRST", " DESC NULLS LAST", " ASC NULLS LAST"]


def _constant(sql: str) -> bool:
    return not re.search(r"\b[aqv]\d+\.\w", sql)


def stat_aggregate_call(gen, kind: str, row, d: int) -> E | None:
    """One of the aggregates above of ``kind``'s type over row expressions of
    ``row`` (None when none fits)."""
    r = gen.rx
    if kind == "dbl":
        return _numeric(gen, r, row, d)
    x = r.random()
    if kind == "int" and x < 0.3:
        return _bits(gen, r, row, d)
    if x < 0.65:
        return _arg(gen, r, kind, row, d)
    return _ordered(gen, r, kind, row, d)


def _arg(gen, r, kind, row, d) -> E | None:
    k = gen.row_expr(kind, row, d, False)
    if k.t.kind == "NULL":
        return None
    fn = r.choice(["ARG_MAX", "ARG_MIN", "MAX_BY", "MIN_BY", "ARGMAX", "ARG_MAX_NULL", "ARG_MIN_NULL"])
    bound = _BOUNDS.get(kind)
    value = k.sql
    if bound is not None and r.random() < 0.4:
        value = f"CASE WHEN {k.sql} > {bound} THEN {k.sql} END"
    gen.feat("agg:" + fn.lower())
    return E(f"{fn}({value}, {k.sql})", k.t, agg=True, nosum=k.nosum)


def _ordered(gen, r, kind, row, d) -> E | None:
    a = gen.row_expr(kind, row, d, False)
    if a.t.kind == "NULL" or _constant(a.sql):
        return None
    fn = r.choice(["FIRST", "LAST", "ANY_VALUE", "ARBITRARY", "MODE"])
    gen.feat("agg:" + fn.lower())
    return E(f"{fn}({a.sql} ORDER BY {a.sql}{r.choice(_ORDERS)})", a.t, agg=True, nosum=a.nosum)


def _bits(gen, r, row, d) -> E | None:
    if r.random() < 0.25:
        b = gen.row_expr("bool", row, d, False)
        gen.feat("agg:count_if")
        return E(f"COUNT_IF({b.sql})", HUGEINT, agg=True)
    a = gen.row_expr("int", row, d, False)
    t = a.t if a.t.kind in ("INTEGER", "BIGINT", "HUGEINT") else BIGINT
    fn = r.choice(["BIT_AND", "BIT_OR", "BIT_XOR"])
    distinct = "DISTINCT " if r.random() < 0.15 else ""
    gen.feat("agg:" + fn.lower())
    return E(f"{fn}({distinct}{a.sql})", t, agg=True)


def _numeric(gen, r, row, d) -> E | None:
    x = r.random()
    if x < 0.55:
        y = gen.row_expr(r.choice(["int", "dec"]), row, d, False)
        z = gen.row_expr(r.choice(["int", "dec"]), row, d, False)
        if y.nosum or z.nosum:
            return None
        if r.random() < 0.15:
            gen.feat("agg:regr_count")
            return E(f"CAST(REGR_COUNT({y.sql}, {z.sql}) AS BIGINT)", BIGINT, agg=True)
        fn = r.choice(_PAIRS)
        gen.feat("agg:" + fn.lower())
        return E(f"{fn}({y.sql}, {z.sql})", DOUBLE, agg=True, nosum=True)
    if x < 0.75:
        # small integers: sums of their fourth powers stay exact in DuckDB's doubles
        a = gen.row_expr("int", row, d, False)
        fn = r.choice(["SKEWNESS", "KURTOSIS", "KURTOSIS_POP"])
        gen.feat("agg:" + fn.lower())
        return E(f"{fn}(CAST({a.sql} AS BIGINT) % 100)", DOUBLE, agg=True, nosum=True)
    if x < 0.88:
        a = gen.row_expr(r.choice(["int", "str", "date", "bool", "dec"]), row, d, False)
        gen.feat("agg:entropy")
        return E(f"ENTROPY({a.sql})", DOUBLE, agg=True, nosum=True)
    a = gen.row_expr("int", row, d, False)
    gen.feat("agg:product")
    return E(f"PRODUCT(CAST({a.sql} AS BIGINT) % 7)", DOUBLE, agg=True, nosum=True)
