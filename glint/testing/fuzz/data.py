"""Deterministic fuzzing data: small Arrow tables full of what breaks engines.

Every table is made from one seed, so a run is reproducible. The tables share
join-key columns (``k1`` INTEGER/BIGINT and ``k2`` VARCHAR, both nullable, with
duplicates and skew) so that joins on one or two keys match rows; the other
columns hold NULL-heavy, skewed and extreme values:

- INTEGER min/max (-2147483648, 2147483647), BIGINT min/max;
- DECIMAL(18,2), (15,2) and (4,1) at full precision (e.g. 9999999999999999.99);
- DOUBLE: dyadic fractions (k/4, so that sums are exact in any order, which
  keeps the comparison with DuckDB free of rounding-order noise), negative zero,
  and a separate ``fx`` column of extremes (1e300, 5e-324, ...) marked
  ``nosum`` (their sums would depend on the order of addition);
- VARCHAR: empty, long (300 characters), '%', '_', '\\', quotes, unicode
  (accents, CJK, emoji, a combining accent), leading/trailing blanks;
- DATE from 1900 to 2100 with month ends and leap days, plus ``dx`` in ``t3``
  with 0001-01-01 and 9999-12-31 (the range ends);
- TIMESTAMP: a dense stretch of January 1995 (to the microsecond; many at
  midnight, so they equal DATEs), month ends and the last microsecond of a
  day or of 1969, NULL-heavy in ``t1``; ``tk`` in ``t0`` and ``t2``, a join key
  of few values; ``tx`` in ``t3`` with the ends of TIMESTAMP's range
  (290309-12-22 (BC) and 294247-01-10 04:00:54.775806) and of Python's;
- BOOLEAN; an all-NULL column; an empty table (``t4``) and a one-row table (``t5``).

>>> d = make_data(1, rows=20)
>>> sorted(d.tables), d.tables["t4"].num_rows, d.tables["t5"].num_rows
(['t0', 't1', 't2', 't3', 't4', 't5'], 0, 1)
>>> make_data(1, rows=20).tables["t0"].equals(d.tables["t0"])
True
>>> d.info["t0"].column("k1").key, sql_type(d.tables["t0"].schema.field("d18").type)
('k1', 'DECIMAL(18,2)')
"""

from __future__ import annotations

import datetime as _dt
import random
from dataclasses import dataclass, field
from decimal import Decimal

import pyarrow as pa

INT32_MIN, INT32_MAX = -2147483648, 2147483647
INT64_MIN, INT64_MAX = -9223372036854775808, 9223372036854775807

STRINGS = [
    "",
    "a",
    "b",
    "abc",
    "ABC",
    "Abc",
    "abc ",
    " abc",
    "a b",
    "a%b",
    "100%",
    "%",
    "_",
    "a_c",
    "__",
    "x" * 300,
    "ü",
    "naïve",
    "Ärger",
    "日本語",
    "😀",
    "e\u0301",
    "it's",
    "NULL",
    "null",
    "\\",
    "a\\b",
    "ß",
    "İ",
    "ǅ",
    "zzz",
    "0",
    "-1",
    "1.5",
    "2000-01-01",
    "true",
]
KEY_STRINGS = ["a", "b", "c", "d", "A", "", "a ", "é"]
DATES_EDGE = [
    _dt.date(1900, 1, 1),
    _dt.date(1900, 2, 28),
    _dt.date(1970, 1, 1),
    _dt.date(1999, 12, 31),
    _dt.date(2000, 1, 31),
    _dt.date(2000, 2, 29),
    _dt.date(2024, 2, 29),
    _dt.date(2100, 12, 31),
    _dt.date(2001, 3, 31),
    _dt.date(1969, 12, 31),
]
DATES_FAR = [_dt.date(1, 1, 1), _dt.date(9999, 12, 31), _dt.date(1, 12, 31), _dt.date(9999, 1, 1)]
_US = 86_400_000_000
TS_EDGE = [
    _dt.datetime(2000, 2, 29, 23, 59, 59, 999999),
    _dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
    _dt.datetime(1970, 1, 1),
    _dt.datetime(1999, 12, 31, 12),
    _dt.datetime(2024, 2, 29),
    _dt.datetime(1900, 1, 1, 0, 0, 0, 1),
    _dt.datetime(2001, 3, 31, 23, 30),
    _dt.datetime(1995, 1, 31),
]
# the ends of TIMESTAMP's range (as microseconds: Python's datetime stops at 9999) and of Python's
TS_FAR = [-9223372022400000000, 9223372036854775806, -62135596800000000, 253402300799999999]
FX = [
    1e300,
    -1e300,
    5e-324,
    -5e-324,
    2.2250738585072014e-308,
    1.7976931348623157e308,
    -0.0,
    0.0,
    0.1,
    1 / 3,
    -2.5,
    123456789.125,
    1e-9,
]


@dataclass
class ColumnInfo:
    name: str
    type: str  # SQL type: INTEGER BIGINT DOUBLE DECIMAL(p,s) VARCHAR DATE TIMESTAMP BOOLEAN
    key: str | None = None  # join-key class: columns of one class are meant to be joined
    nosum: bool = False  # SUM/AVG of it depends on the order of addition (extreme doubles)


@dataclass
class TableInfo:
    name: str
    columns: list[ColumnInfo]
    rows: int

    def column(self, name: str) -> ColumnInfo:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


@dataclass
class FuzzData:
    tables: dict[str, pa.Table] = field(default_factory=dict)
    info: dict[str, TableInfo] = field(default_factory=dict)

    def add(self, name: str, table: pa.Table, keys: dict[str, str] | None = None, nosum: tuple[str, ...] = ()) -> None:
        keys = keys or {}
        self.tables[name] = table
        self.info[name] = TableInfo(
            name,
            [ColumnInfo(f.name, sql_type(f.type), keys.get(f.name), f.name in nosum) for f in table.schema],
            table.num_rows,
        )

    def register(self, glint_con=None, duck_con=None) -> None:
        """Register every table into a glint connection and/or a DuckDB connection."""
        for name, t in self.tables.items():
            if glint_con is not None:
                glint_con.register(name, t)
            if duck_con is not None:
                duck_con.register(name, t)


def sql_type(t: pa.DataType) -> str:
    if pa.types.is_int32(t) or pa.types.is_int16(t) or pa.types.is_int8(t):
        return "INTEGER"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_floating(t):
        return "DOUBLE"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "VARCHAR"
    if pa.types.is_date(t):
        return "DATE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMP"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_null(t):
        return "INTEGER"
    raise ValueError(f"no SQL type for {t}")


def arrow_type(sqltype: str) -> pa.DataType:
    s = sqltype.upper()
    if s.startswith("DECIMAL"):
        p, sc = s[s.index("(") + 1 : s.index(")")].split(",")
        return pa.decimal128(int(p), int(sc))
    return {
        "INTEGER": pa.int32(),
        "BIGINT": pa.int64(),
        "DOUBLE": pa.float64(),
        "VARCHAR": pa.string(),
        "DATE": pa.date32(),
        "TIMESTAMP": pa.timestamp("us"),
        "BOOLEAN": pa.bool_(),
    }[s]


# ------------------------------------------------------------------ value makers
class _Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def nullable(self, n: int, null_frac: float, make):
        return [None if self.r.random() < null_frac else make() for _ in range(n)]

    def key_int(self, n, hi=12, null_frac=0.15):
        # skewed: small keys are frequent (duplicates), large ones rare
        return self.nullable(n, null_frac, lambda: int(hi * self.r.random() ** 2))

    def key_str(self, n, null_frac=0.15):
        return self.nullable(n, null_frac, lambda: KEY_STRINGS[int(len(KEY_STRINGS) * self.r.random() ** 1.5)])

    def int32(self, n, null_frac=0.2, extreme=0.08):
        pool = [INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1, 0, -1, 1]

        def one():
            x = self.r.random()
            if x < extreme:
                return self.r.choice(pool)
            if x < 0.5:
                return self.r.randint(-10, 10)
            return self.r.randint(-100000, 100000)

        return self.nullable(n, null_frac, one)

    def int64(self, n, null_frac=0.2, extreme=0.06):
        pool = [INT64_MIN, INT64_MAX, INT64_MIN + 1, INT64_MAX - 1, INT32_MAX + 1, INT32_MIN - 1, 0, -1]

        def one():
            x = self.r.random()
            if x < extreme:
                return self.r.choice(pool)
            if x < 0.4:
                return self.r.randint(-1000, 1000)
            return self.r.randint(-(10**15), 10**15)

        return self.nullable(n, null_frac, one)

    def decimal(self, n, p, s, null_frac=0.2, full=0.25):
        top = 10**p - 1
        q = Decimal(1).scaleb(-s)

        def one():
            x = self.r.random()
            if x < 0.05:
                v = self.r.choice([top, -top, 0, 1, -1])
            elif x < full:
                v = self.r.randint(-top, top)
            elif x < 0.6:
                v = self.r.randint(-(10 ** min(p, 4)), 10 ** min(p, 4))
            else:
                v = self.r.randint(-(10 ** min(p, 8)), 10 ** min(p, 8))
            v = max(-top, min(top, v))  # 10**p itself has p + 1 digits (seed 144 died on it)
            return (Decimal(v) * q).quantize(q)

        return self.nullable(n, null_frac, one)

    def double(self, n, null_frac=0.2):
        def one():
            x = self.r.random()
            if x < 0.05:
                return -0.0
            if x < 0.1:
                return 0.0
            if x < 0.6:
                return self.r.randint(-40, 40) / 4
            return self.r.randint(-4_000_000, 4_000_000) / 4

        return self.nullable(n, null_frac, one)

    def fx(self, n, null_frac=0.2):
        return self.nullable(n, null_frac, lambda: self.r.choice(FX))

    def string(self, n, null_frac=0.2):
        def one():
            if self.r.random() < 0.7:
                return self.r.choice(STRINGS)
            k = self.r.randint(1, 8)
            return "".join(self.r.choice("abcxyzABC _%") for _ in range(k))

        return self.nullable(n, null_frac, one)

    def date(self, n, null_frac=0.2, far=0.0):
        lo, hi = _dt.date(1900, 1, 1).toordinal(), _dt.date(2100, 12, 31).toordinal()

        def one():
            x = self.r.random()
            if x < far:
                return self.r.choice(DATES_FAR)
            if x < far + 0.25:
                return self.r.choice(DATES_EDGE)
            if x < 0.6:  # a dense stretch, so that dates repeat and compare equal
                return _dt.date(1995, 1, 1) + _dt.timedelta(days=self.r.randint(0, 60))
            return _dt.date.fromordinal(self.r.randint(lo, hi))

        return self.nullable(n, null_frac, one)

    def timestamp(self, n, null_frac=0.25, far=0.0, pool: int = 0):
        """Microseconds since 1970 (ints: the far ones do not fit Python's
        datetime). ``pool``: draw from that many values only (a join key)."""
        epoch = _dt.datetime(1970, 1, 1)

        def micros(t: _dt.datetime) -> int:
            return (t - epoch) // _dt.timedelta(microseconds=1)

        start = micros(_dt.datetime(1995, 1, 1))

        def one():
            x = self.r.random()
            if x < far:
                return self.r.choice(TS_FAR)
            if x < far + 0.2:
                return micros(self.r.choice(TS_EDGE))
            if x < 0.45:  # midnights: equal to DATEs of the dense stretch
                return start + self.r.randint(0, 60) * _US
            if x < 0.8:
                return (
                    start
                    + self.r.randint(0, 60) * _US
                    + self.r.choice([self.r.randint(0, 23) * 3_600_000_000, self.r.randint(0, _US - 1), 1, _US - 1])
                )
            return micros(_dt.datetime(1900, 1, 1)) + self.r.randint(0, 200 * 365 * _US)

        if pool:
            values = [one() for _ in range(pool)]
            return self.nullable(n, null_frac, lambda: values[int(pool * self.r.random() ** 2)])
        return self.nullable(n, null_frac, one)

    def boolean(self, n, null_frac=0.25):
        return self.nullable(n, null_frac, lambda: self.r.random() < 0.5)


def _table(cols: dict[str, tuple[str, list]]) -> pa.Table:
    def array(t, vals):
        if t == "TIMESTAMP":  # microseconds: far years do not fit datetime
            return pa.array(vals, pa.int64()).cast(pa.timestamp("us"))
        return pa.array(vals, type=arrow_type(t))

    return pa.table({name: array(t, vals) for name, (t, vals) in cols.items()})


def make_data(seed: int = 0, rows: int = 150, tpch: bool = False) -> FuzzData:
    """The fuzzing tables for ``seed``; each has at most ``rows`` rows. With
    ``tpch``, the 8 TPC-H SF 0.01 tables are added (generated on first use)."""
    g = _Gen(seed)
    n0 = rows
    n1 = max(1, rows * 4 // 5)
    n2 = max(1, rows * 2 // 3)
    n3 = min(rows, 16)
    data = FuzzData()
    keys = {"k1": "k1", "k2": "k2", "tk": "tk"}
    # t0: the wide "fact" table
    data.add(
        "t0",
        _table(
            {
                "k1": ("INTEGER", g.key_int(n0)),
                "k2": ("VARCHAR", g.key_str(n0)),
                "i": ("INTEGER", g.int32(n0)),
                "b": ("BIGINT", g.int64(n0)),
                "d18": ("DECIMAL(18,2)", g.decimal(n0, 18, 2)),
                "d15": ("DECIMAL(15,2)", g.decimal(n0, 15, 2)),
                "d4": ("DECIMAL(4,1)", g.decimal(n0, 4, 1)),
                "f": ("DOUBLE", g.double(n0)),
                "s": ("VARCHAR", g.string(n0)),
                "dt": ("DATE", g.date(n0)),
                "flag": ("BOOLEAN", g.boolean(n0)),
                "ts": ("TIMESTAMP", g.timestamp(n0)),
                "tk": ("TIMESTAMP", g.timestamp(n0, null_frac=0.15, pool=6)),
            }
        ),
        keys,
    )
    # t1: NULL-heavy, an all-NULL column, duplicate keys
    data.add(
        "t1",
        _table(
            {
                "k1": ("INTEGER", g.key_int(n1, hi=8, null_frac=0.3)),
                "k2": ("VARCHAR", g.key_str(n1, null_frac=0.3)),
                "i": ("INTEGER", g.int32(n1, null_frac=0.7)),
                "n": ("INTEGER", [None] * n1),
                "d15": ("DECIMAL(15,2)", g.decimal(n1, 15, 2, null_frac=0.5)),
                "f": ("DOUBLE", g.double(n1, null_frac=0.5)),
                "s": ("VARCHAR", g.string(n1, null_frac=0.5)),
                "dt": ("DATE", g.date(n1, null_frac=0.5)),
                "flag": ("BOOLEAN", g.boolean(n1, null_frac=0.6)),
                "ts": ("TIMESTAMP", g.timestamp(n1, null_frac=0.6)),
            }
        ),
        keys,
    )
    # t2: BIGINT keys (joins across INTEGER/BIGINT), skewed values
    data.add(
        "t2",
        _table(
            {
                "k1": ("BIGINT", g.key_int(n2, hi=20, null_frac=0.1)),
                "k2": ("VARCHAR", g.key_str(n2, null_frac=0.05)),
                "b": ("BIGINT", g.int64(n2)),
                "d4": ("DECIMAL(4,1)", g.decimal(n2, 4, 1, full=0.6)),
                "d18": ("DECIMAL(18,2)", g.decimal(n2, 18, 2, full=0.1)),
                "s": ("VARCHAR", g.string(n2)),
                "dt": ("DATE", g.date(n2)),
                "tk": ("TIMESTAMP", g.timestamp(n2, null_frac=0.1, pool=6)),
            }
        ),
        keys,
    )
    _add_small_tables(data, g, n3, keys)
    if tpch:
        add_tpch(data)
    return data


def _add_small_tables(data: FuzzData, g: _Gen, n3: int, keys: dict) -> None:
    """The small tables: a dimension with (mostly) unique keys (t3), an empty one (t4), one row (t5)."""
    # t3: a small dimension with (mostly) unique keys, extreme doubles and far dates
    k1s = list(range(n3 - 1)) + [None]
    g.r.shuffle(k1s)
    data.add(
        "t3",
        _table(
            {
                "k1": ("INTEGER", k1s),
                "k2": ("VARCHAR", [KEY_STRINGS[i % len(KEY_STRINGS)] for i in range(n3)]),
                "name": ("VARCHAR", g.string(n3, null_frac=0.1)),
                "d18": ("DECIMAL(18,2)", g.decimal(n3, 18, 2)),
                "fx": ("DOUBLE", g.fx(n3)),
                "dx": ("DATE", g.date(n3, far=0.3)),
                "tx": ("TIMESTAMP", g.timestamp(n3, null_frac=0.1, far=0.3)),
            }
        ),
        keys,
        nosum=("fx",),
    )
    # t4: empty
    data.add(
        "t4",
        _table(
            {
                "k1": ("INTEGER", []),
                "k2": ("VARCHAR", []),
                "i": ("INTEGER", []),
                "d15": ("DECIMAL(15,2)", []),
                "s": ("VARCHAR", []),
                "dt": ("DATE", []),
                "ts": ("TIMESTAMP", []),
            }
        ),
        keys,
    )
    # t5: one row
    data.add(
        "t5",
        _table(
            {
                "k1": ("INTEGER", [1]),
                "k2": ("VARCHAR", [None]),
                "i": ("INTEGER", [INT32_MAX]),
                "b": ("BIGINT", [INT64_MIN]),
                "d4": ("DECIMAL(4,1)", [Decimal("-999.9")]),
                "s": ("VARCHAR", ["%"]),
                "ts": ("TIMESTAMP", [_US * 9131 + 1]),
            }
        ),
        keys,
    )


TPCH_KEYS = {
    "c_custkey": "custkey",
    "o_custkey": "custkey",
    "o_orderkey": "orderkey",
    "l_orderkey": "orderkey",
    "p_partkey": "partkey",
    "ps_partkey": "partkey",
    "l_partkey": "partkey",
    "s_suppkey": "suppkey",
    "ps_suppkey": "suppkey",
    "l_suppkey": "suppkey",
    "n_nationkey": "nationkey",
    "c_nationkey": "nationkey",
    "s_nationkey": "nationkey",
    "r_regionkey": "regionkey",
    "n_regionkey": "regionkey",
}


def add_tpch(data: FuzzData, sf: float = 0.01) -> None:
    """Add the TPC-H tables at ``sf`` (string_view columns as plain strings)."""
    import pyarrow.parquet as pq

    from glint.workloads import tpch

    d = tpch.ensure_tpch_data(sf, progress=False)
    found = tpch.tables_in_directory(d)
    for name in tpch.tpch_tables:
        t = pq.read_table(found[name])
        t = t.cast(
            pa.schema([pa.field(f.name, pa.string() if pa.types.is_string_view(f.type) else f.type) for f in t.schema])
        )
        data.add(name, t, {c: TPCH_KEYS[c] for c in t.column_names if c in TPCH_KEYS})
