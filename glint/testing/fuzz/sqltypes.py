"""The fuzzer's model of SQL types: DuckDB's typing rules where the
generator needs them (integer literals, DECIMAL precision and scale, ``/``
giving DOUBLE), and the generated expression :class:`E`.

>>> unify(T("DECIMAL", 15, 2), INTEGER), arith_type("*", T("DECIMAL", 4, 1), T("DECIMAL", 4, 1)).sql()
(T(kind='DECIMAL', p=15, s=2), 'DECIMAL(8,2)')
"""

from __future__ import annotations

from dataclasses import dataclass

# ------------------------------------------------------------------ types
NUMERIC = ("INTEGER", "BIGINT", "HUGEINT", "DECIMAL", "DOUBLE")
INTS = ("INTEGER", "BIGINT", "HUGEINT")
# requested "kinds": int (INTEGER/BIGINT/HUGEINT), dec, dbl, str, date, ts (TIMESTAMP), bool
KIND_OF = {
    "INTEGER": "int",
    "BIGINT": "int",
    "HUGEINT": "int",
    "DECIMAL": "dec",
    "DOUBLE": "dbl",
    "VARCHAR": "str",
    "DATE": "date",
    "TIMESTAMP": "ts",
    "BOOLEAN": "bool",
}
KIND_WEIGHTS = {"int": 3.0, "dec": 2.5, "dbl": 1.2, "str": 2.5, "date": 1.1, "ts": 1.1, "bool": 1.0}


@dataclass(frozen=True)
class T:
    kind: str  # INTEGER BIGINT HUGEINT DECIMAL DOUBLE VARCHAR DATE TIMESTAMP BOOLEAN NULL
    p: int = 0  # DECIMAL precision
    s: int = 0  # DECIMAL scale

    @property
    def family(self) -> str:
        """What compares with what: numbers, and DATE with TIMESTAMP."""
        if self.kind in NUMERIC:
            return "num"
        return "time" if self.kind in ("DATE", "TIMESTAMP") else self.kind

    def dec_ps(self) -> tuple[int, int]:
        """(precision, scale) of the type as a DECIMAL operand."""
        if self.kind == "DECIMAL":
            return self.p, self.s
        return {"INTEGER": (10, 0), "BIGINT": (19, 0), "HUGEINT": (38, 0)}.get(self.kind, (18, 0))

    def sql(self) -> str:
        if self.kind == "DECIMAL":
            return f"DECIMAL({self.p},{self.s})"
        return self.kind


def parse_type(s: str) -> T:
    s = s.upper()
    if s.startswith("DECIMAL"):
        p, sc = s[s.index("(") + 1 : s.index(")")].split(",")
        return T("DECIMAL", int(p), int(sc))
    return T(s)


INTEGER, BIGINT, HUGEINT, DOUBLE, VARCHAR, DATE, TIMESTAMP, BOOLEAN = (
    T(k) for k in ("INTEGER", "BIGINT", "HUGEINT", "DOUBLE", "VARCHAR", "DATE", "TIMESTAMP", "BOOLEAN")
)


def matches(t: T, kind: str) -> bool:
    return KIND_OF.get(t.kind) == kind


def unify(a: T, b: T) -> T:
    """DuckDB's common type of two types of one family (approximately)."""
    if a.kind == "NULL":
        return b
    if b.kind == "NULL":
        return a
    if a.family == "time":
        return TIMESTAMP if TIMESTAMP in (a, b) else a  # a DATE with a TIMESTAMP is a TIMESTAMP
    if a.family != "num":
        return a
    if "DOUBLE" in (a.kind, b.kind):
        return DOUBLE
    if "DECIMAL" in (a.kind, b.kind):
        (p1, s1), (p2, s2) = a.dec_ps(), b.dec_ps()
        s = max(s1, s2)
        return T("DECIMAL", min(38, max(p1 - s1, p2 - s2) + s), s)
    order = {"INTEGER": 0, "BIGINT": 1, "HUGEINT": 2}
    return a if order[a.kind] >= order[b.kind] else b


def arith_type(op: str, a: T, b: T) -> T:
    if op == "/":
        return DOUBLE
    if a.kind == "NULL":
        a = b
    if b.kind == "NULL":
        b = a
    if "DOUBLE" in (a.kind, b.kind):
        return DOUBLE
    if "DECIMAL" in (a.kind, b.kind):
        (p1, s1), (p2, s2) = a.dec_ps(), b.dec_ps()
        if op in "+-":
            s = max(s1, s2)
            p = max(p1 - s1, p2 - s2) + s + 1
            if p1 <= 18 and p2 <= 18 and p > 18:
                p = 18
        elif op == "*":
            s = s1 + s2
            p = p1 + p2
            if p1 <= 18 and p2 <= 18 and p > 18:
                p = 18
        else:  # %
            s = max(s1, s2)
            p = max(p1, p2)
        return T("DECIMAL", min(38, p), s)
    return unify(a, b)


@dataclass
class E:
    """A generated expression: its SQL text and type, and what we know about it."""

    sql: str
    t: T
    key: str | None = None  # join-key class, for a plain key column
    nosum: bool = False  # summing it is order dependent (inexact doubles)
    agg: bool = False  # contains an aggregate
    gk: bool = False  # refers to a group key (aggregated queries)
    col: bool = False  # a plain column reference


def quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"
