"""VALUES lists as FROM items of generated queries.

A list has 1 to 3 columns of one kind each and 1 to 6 rows of literals:
integers (INTEGER, or BIGINT once one is past 32 bits; join keys of class
``k1`` now and then), DECIMALs of mixed precision (1.5 and 12.25 make
DECIMAL(4,2)), dyadic DOUBLEs, strings (``k2`` join keys, or the fuzzing
strings), DATEs and BOOLEANs, with NULLs. A later row sometimes writes an
integer as a string literal ('7'), which DuckDB casts to the type the rows
before it have. The types are tracked as DuckDB gives them, so a query that
reads the list is typed like any other.

>>> import random
>>> src, sql = values_source(random.Random(3), "v1")
>>> sql.startswith("(VALUES (") and sql.endswith(f") AS v1({', '.join(c[0] for c in src.cols)})")
True
"""

from __future__ import annotations

import random

from glint.testing.fuzz.data import DATES_EDGE, KEY_STRINGS, STRINGS
from glint.testing.fuzz.scopes import Source
from glint.testing.fuzz.sqltypes import T, unify

KINDS = {"int": 3.0, "dec": 2.0, "dbl": 1.0, "str": 2.5, "date": 1.0, "bool": 0.8}
_INTS = [0, 1, -1, 7, 42, -2147483648, 2147483647, 3000000000, -9223372036854775807]
_DOUBLES = ["0.5", "-0.25", "1.5", "1e3", "-0.0", "2.75", "1024.125"]


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _column(r: random.Random, kind: str, rows: int):
    """(literals, type name, key class) of one column."""
    key = None
    if kind == "int" and r.random() < 0.6:
        key = "k1"
    elif kind == "str" and r.random() < 0.6:
        key = "k2"
    lits, t, seen = [], None, False
    scale = r.choice([1, 2])
    for i in range(rows):
        if (i > 0 or rows > 1) and r.random() < 0.2 and (i < rows - 1 or seen):
            lits.append("NULL")
            continue
        if kind == "int":
            v = r.randrange(0, 14) if key else r.choice(_INTS)
            vt = T("INTEGER") if -(2**31) <= v < 2**31 else T("BIGINT")
            if seen and vt.kind == "INTEGER" and r.random() < 0.15:
                lits.append(_quote(str(v)))  # cast to the column's type by DuckDB
                continue
            lit = str(v)
        elif kind == "dec":
            whole = r.choice([0, 1, 12, 999, 123456])
            frac = r.randrange(10**scale)
            neg = "-" if r.random() < 0.3 else ""
            lit = f"{neg}{whole}.{frac:0{scale}d}"
            vt = T("DECIMAL", max(1, len(str(whole))) + scale, scale)
        elif kind == "dbl":
            lit, vt = f"{r.choice(_DOUBLES)}::DOUBLE", T("DOUBLE")
        elif kind == "str":
            lit, vt = _quote(r.choice(KEY_STRINGS if key else STRINGS)), T("VARCHAR")
        elif kind == "date":
            lit, vt = f"DATE '{r.choice(DATES_EDGE).isoformat()}'", T("DATE")
        else:
            lit, vt = r.choice(["true", "false"]), T("BOOLEAN")
        lits.append(lit)
        t = vt if t is None else unify(t, vt)
        seen = True
    return lits, t, key


def values_source(r: random.Random, alias: str):
    """(a Source over a VALUES list, its FROM-clause SQL)."""
    ncols = r.choice([1, 2, 2, 3])
    nrows = r.choice([1, 2, 3, 4, 6])
    kinds = list(KINDS)
    cols, columns = [], []
    for j in range(ncols):
        lits, t, key = _column(r, r.choices(kinds, weights=list(KINDS.values()))[0], nrows)
        cols.append((f"v{j}", t, key, False))
        columns.append(lits)
    rows = ", ".join("(" + ", ".join(c[i] for c in columns) + ")" for i in range(nrows))
    return Source(alias, cols, nrows), f"(VALUES {rows}) AS {alias}({', '.join(c[0] for c in cols)})"
