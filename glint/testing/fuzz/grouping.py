"""The fuzz generator's grouping sets and the aggregates beyond COUNT / SUM /
AVG / MIN / MAX.

- GROUP BY ROLLUP / CUBE / GROUPING SETS (lists with the empty set, sets
  listed twice, a plain key crossed with a ROLLUP) over the query's group
  keys, and GROUPING(...) of some of them in the select list;
- VAR_SAMP / VAR_POP / STDDEV_* / VARIANCE / STDDEV over numbers whose sums
  are exact enough (not the extreme doubles), MEDIAN and QUANTILE_CONT over
  numbers, QUANTILE_DISC over every type (a negative q orders descending),
  BOOL_AND / BOOL_OR, STRING_AGG ordered by its own argument (so that ties
  do not make the string depend on the engine's row order), and FILTER
  (WHERE ...) on any aggregate.

Their choices draw from streams of their own (seeded from the query's seed),
so the rest of a query is drawn as before where they are not chosen.

>>> import random
>>> from glint.testing.fuzz.sqltypes import E, INTEGER
>>> g = random.Random(1)
>>> grouping_text(g, [E("a.x", INTEGER), E("a.y", INTEGER)]).startswith(("ROLLUP", "CUBE", "GROUPING", "a.x"))
True
"""

from __future__ import annotations

import random
import re

from glint.testing.fuzz.sqltypes import BOOLEAN, DOUBLE, VARCHAR, E

QUANTILES = ["0.5", "0.25", "0.1", "0.9", "0.75", "0", "1", "-0.5", "-0.25", "0.3::DOUBLE", "0.333", "0.6::DOUBLE"]
SEPARATORS = ["','", "''", "'|'", "' - '", "'→'"]


def grouping_text(r: random.Random, group) -> str:
    """The GROUP BY text over the group keys ``group`` (at most three) using
    ROLLUP, CUBE or GROUPING SETS; every key is in some set."""
    keys = [g.sql for g in group]
    x = r.random()
    if x < 0.3 or len(keys) == 1 and x < 0.5:
        return f"ROLLUP ({', '.join(keys)})"
    if x < 0.5:
        return f"CUBE ({', '.join(keys)})"
    if x < 0.7 and len(keys) > 1:
        # a plain key in every set, crossed with a rollup of the others
        return f"{keys[0]}, ROLLUP ({', '.join(keys[1:])})"
    sets = [[k for k in keys if r.random() < 0.5] for _ in range(r.choice([1, 2, 2, 3]))]
    if r.random() < 0.5:
        sets.append([])
    if r.random() < 0.15:
        sets.append(sets[0])  # a set listed twice: its rows twice
    missing = [k for k in keys if not any(k in s for s in sets)]
    if missing:
        sets.append(missing)
    return "GROUPING SETS (" + ", ".join("(" + ", ".join(s) + ")" for s in sets) + ")"


def grouping_call(r: random.Random, keys) -> str:
    """GROUPING(...) of one or more of the keys (a key may repeat)."""
    args = [r.choice(keys).sql for _ in range(r.choice([1, 1, 2, 3]))]
    return f"{r.choice(['GROUPING', 'GROUPING', 'GROUPING_ID'])}({', '.join(args)})"


def aggregate_call(gen, kind: str, row, d: int):
    """One of the aggregates above, of ``kind``'s type, its arguments row
    expressions of ``row`` (None when none fits)."""
    r = gen.ra
    if kind == "dbl":
        a = gen.row_expr(r.choice(["int", "int", "dec", "dbl"]), row, d, False)
        if not a.nosum and r.random() < 0.7:
            fn = r.choice(["var_samp", "var_pop", "stddev_samp", "stddev_pop", "variance", "stddev"])
            gen.feat("agg:" + fn)
            return E(f"{fn.upper()}({_distinct(gen)}{a.sql})", DOUBLE, agg=True, nosum=True)
        if a.t.kind == "DECIMAL":
            return None
        if r.random() < 0.5:
            gen.feat("agg:median")
            return E(f"MEDIAN({_distinct(gen)}{a.sql})", DOUBLE, agg=True, nosum=True)
        gen.feat("agg:quantile_cont")
        return E(f"QUANTILE_CONT({a.sql}, {r.choice(QUANTILES)})", DOUBLE, agg=True, nosum=True)
    if kind == "bool":
        if r.random() < 0.8:
            a = gen.row_expr("bool", row, d, False)
            fn = r.choice(["BOOL_AND", "BOOL_OR"])
            gen.feat("agg:" + fn.lower())
            return E(f"{fn}({_distinct(gen)}{a.sql})", BOOLEAN, agg=True)
        a = gen.row_expr("bool", row, d, False)
        gen.feat("agg:quantile_disc")
        return E(f"QUANTILE_DISC({a.sql}, {r.choice(QUANTILES)})", BOOLEAN, agg=True)
    if kind == "str" and r.random() < 0.7:
        a = gen.row_expr(r.choice(["str", "str", "int", "dec", "date", "bool"]), row, d, False)
        sep = r.choice(SEPARATORS)
        # ordered by the argument itself (ties are equal strings); DuckDB rejects ORDER BY a constant
        order = (
            ""
            if _constant(a.sql)
            else " ORDER BY " + a.sql + r.choice(["", " DESC", " ASC NULLS FIRST", " DESC NULLS LAST"])
        )
        name = r.choice(["STRING_AGG", "STRING_AGG", "LISTAGG", "GROUP_CONCAT"])
        distinct = "DISTINCT " if r.random() < 0.25 else ""
        gen.feat("agg:string_agg")
        return E(f"{name}({distinct}{a.sql}, {sep}{order})", VARCHAR, agg=True)
    if kind in ("int", "dec", "str", "date") and (kind in ("dec", "str") or r.random() < 0.5):
        a = gen.row_expr(kind, row, d, False)
        if a.t.kind == "NULL":
            return None
        if kind == "dec" and r.random() < 0.5:
            if r.random() < 0.5:
                gen.feat("agg:median")
                return E(f"MEDIAN({_distinct(gen)}{a.sql})", a.t, agg=True)
            gen.feat("agg:quantile_cont")
            return E(f"QUANTILE_CONT({a.sql}, {r.choice(QUANTILES)})", a.t, agg=True)
        gen.feat("agg:quantile_disc")
        if kind == "str" and r.random() < 0.3:
            return E(f"MEDIAN({_distinct(gen)}{a.sql})", a.t, agg=True)
        fn = r.choice(["QUANTILE_DISC", "QUANTILE"])
        return E(f"{fn}({_distinct(gen)}{a.sql}, {r.choice(QUANTILES)})", a.t, agg=True)
    return None


def _constant(sql: str) -> bool:
    return not re.search(r"\b[aq]\d+\.\w", sql)


def _distinct(gen) -> str:
    if gen.ra.random() < 0.15:
        gen.feat("agg:distinct")
        return "DISTINCT "
    return ""


def with_filter(gen, e, row):
    """``e`` with FILTER (WHERE a row condition), now and then."""
    if gen.ra.random() >= 0.12:
        return e
    cond = gen.row_expr("bool", row, 1, False)
    gen.feat("agg:filter")
    return type(e)(f"{e.sql} FILTER (WHERE {cond.sql})", e.t, agg=True, nosum=e.nosum)
