"""Date and time expressions for the query generator (a mixin of
:class:`~glint.testing.fuzz.generator.QueryGenerator`): TIMESTAMP values
(columns, literals, casts, DATE or TIMESTAMP ± INTERVAL of every unit and of
compound strings, date_trunc below a day, make_timestamp, epoch_ms), and
what DATE and TIMESTAMP give to the other kinds: EXTRACT / date_part of every
specifier, date_diff / date_sub, epoch values, date_trunc to a DATE,
CAST to DATE and VARCHAR, strftime, strptime / try_strptime, time_bucket,
last_day, dayname / monthname.

Types follow DuckDB 1.4 (date ± INTERVAL is a TIMESTAMP; date_trunc gives a
DATE for parts of a day or more).

>>> from glint.testing.fuzz.data import make_data
>>> from glint.testing.fuzz.generator import QueryGenerator
>>> from glint.testing.fuzz.scopes import Scope
>>> g = QueryGenerator(make_data(0, rows=10).info, seed=3)
>>> all(g.gen_ts(Scope([g.base_source()]), 2, False).t.kind in ("TIMESTAMP", "NULL") for _ in range(20))
True
"""

from __future__ import annotations

from glint.testing.fuzz.sqltypes import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    TIMESTAMP,
    VARCHAR,
    E,
)

# units an INTERVAL literal takes, with amounts that keep most results in range
_UNITS = {
    "DAY": [1, 2, 30, 365, -1, 0],
    "MONTH": [1, 3, 12, -1, 13],
    "YEAR": [1, -1, 10, 5000],
    "HOUR": [1, 24, 36, -5],
    "MINUTE": [1, 90, -30],
    "SECOND": [1, 59, 86400, -1],
    "MILLISECOND": [1, 1500, -999],
    "MICROSECOND": [1, -1, 999999],
    "WEEK": [1, 2, -1],
    "QUARTER": [1, -2],
}
_COMPOUND = [
    "'1 month 2 hours'",
    "'1 day 04:05:06.789'",
    "'-1 year 3 days'",
    "'2 hours 30 minutes'",
    "'1 day -1 microsecond'",
    "'00:00:00.5'",
]
_PARTS_INT = [
    "year",
    "month",
    "day",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "quarter",
    "dow",
    "isodow",
    "doy",
    "week",
    "yearweek",
    "isoyear",
    "decade",
    "century",
    "millennium",
    "era",
]
_PARTS_DIFF = [
    "year",
    "quarter",
    "month",
    "week",
    "day",
    "hour",
    "minute",
    "second",
    "millisecond",
    "microsecond",
    "decade",
    "century",
    "isoyear",
    "dow",
    "doy",
]
_TRUNC_DATE = ["year", "quarter", "month", "week", "day", "decade", "century", "isoyear"]
_TRUNC_TS = ["hour", "minute", "second", "millisecond", "microsecond"]
_FORMATS = [
    "%Y-%m-%d %H:%M:%S",
    "%d/%m/%Y",
    "%Y%m%d",
    "%b %-d, %Y %I:%M %p",
    "%A %B %j",
    "%y-%-m-%-d %-H:%M",
    "%G-W%V-%u",
    "%Y %U %w",
    "%S.%f",
]
_OFFSETS = ["6 HOURS", "1 DAY", "'-90 minutes'"]
_BUCKETS = ["15 MINUTES", "1 HOUR", "1 DAY", "7 DAYS", "1 MONTH", "3 MONTHS", "1 YEAR", "'2 days 3 hours'"]
_TS_TEXT = [
    "1995-01-15 10:30:00",
    "2000-02-29 23:59:59.999999",
    "1969-12-31 23:59:59",
    "1995-01-01",
    "1995-01-31 00:00:00.000001",
    "2024-02-29 12:00",
    "1900-01-01 00:00:00",
]


class TemporalExpressions:
    """DATE / TIMESTAMP expressions; mixed into the query generator."""

    # -------------------------------------------------------------- leaves
    def ts_literal(self) -> E:
        r = self.r
        if self.chance(0.07):
            return E("CAST(NULL AS TIMESTAMP)", TIMESTAMP)
        text = r.choice(_TS_TEXT)
        if self.chance(0.2):
            return E(f"CAST('{text}' AS TIMESTAMP)", TIMESTAMP)
        return E(f"TIMESTAMP '{text}'", TIMESTAMP)

    def interval(self) -> str:
        if self.chance(0.15):
            return f"INTERVAL {self.r.choice(_COMPOUND)}"
        unit = self.r.choice(list(_UNITS))
        n = self.r.choice(_UNITS[unit])
        amount = f"'{n}'" if n < 0 or self.chance(0.3) else str(n)  # DuckDB reads INTERVAL -3 DAY as an error
        return f"INTERVAL {amount} {unit}"

    def time_operand(self, scope, d: int, sub: bool) -> E:
        """A DATE or TIMESTAMP expression."""
        return self.sub_e("ts" if self.chance(0.6) else "date", scope, d, sub)

    # -------------------------------------------------------------- TIMESTAMP values
    def gen_ts(self, scope, d: int, sub: bool) -> E:
        c = self.common_forms("ts", scope, d, sub)
        if c is not None:
            return c
        x = self.r.random()
        if x < 0.35:
            a = self.time_operand(scope, d, sub)
            op = self.r.choice(["+", "-"])
            self.feat("ts:interval")
            if op == "+" and self.chance(0.15):
                return self._m(f"({self.interval()} + {a.sql})", TIMESTAMP, a)
            if self.chance(0.1):
                return self._m(f"date_add({a.sql}, {self.interval()})", TIMESTAMP, a)
            return self._m(f"({a.sql} {op} {self.interval()})", TIMESTAMP, a)
        if x < 0.45:
            a = self.time_operand(scope, d, sub)
            self.feat("ts:date_trunc")
            return self._m(f"date_trunc('{self.r.choice(_TRUNC_TS)}', {a.sql})", TIMESTAMP, a)
        if x < 0.55:
            a = self.sub_e("date", scope, d, sub)
            self.feat("ts:cast")
            return self._m(f"CAST({a.sql} AS TIMESTAMP)", TIMESTAMP, a)
        if x < 0.6:
            self.feat("ts:make_timestamp")
            if self.chance(0.5):
                v = self.r.choice([0, 788918400123456, -1, 253402300799999999, 10**15])
                return E(f"make_timestamp({v})", TIMESTAMP)
            y, mo, dd = self.r.choice([(1995, 1, 15), (2000, 2, 29), (1969, 12, 31), (2021, 2, 30)])
            h, mi = self.r.choice([(10, 30), (23, 59), (24, 0), (0, 0), (25, 1)])
            s = self.r.choice(["0", "59.999999", "7.5", "60"])
            return E(f"make_timestamp({y}, {mo}, {dd}, {h}, {mi}, {s})", TIMESTAMP)
        if x < 0.64:
            self.feat("ts:epoch_ms")
            v = self.r.choice(["0", "1614834367891", "(-1)", "CAST(9223372036854 AS BIGINT)"])
            return E(f"epoch_ms({v})", TIMESTAMP)
        if x < 0.72:
            a = self.sub_e("ts", scope, d, sub)
            return self._m(self.time_bucket(a.sql), TIMESTAMP, a)
        if x < 0.8:
            fmt = self.r.choice(_FORMATS)
            self.feat("ts:strptime")
            if self.chance(0.6):  # what strftime wrote, read back
                a = self.time_operand(scope, d, sub)
                fn = self.r.choice(["strptime", "try_strptime"])
                return self._m(f"{fn}(strftime({a.sql}, '{fmt}'), '{fmt}')", TIMESTAMP, a)
            a = self.sub_e("str", scope, d, sub)
            return self._m(f"try_strptime({a.sql}, '{fmt}')", TIMESTAMP, a)
        return self.leaf("ts", scope)

    def time_bucket(self, value: str) -> str:
        """time_bucket(width, value [, offset | origin])."""
        width = f"INTERVAL {self.r.choice(_BUCKETS)}"
        self.feat("ts:time_bucket")
        x = self.r.random()
        if x < 0.6:
            return f"time_bucket({width}, {value})"
        if x < 0.8:
            offset = self.r.choice(_OFFSETS)
            return f"time_bucket({width}, {value}, INTERVAL {offset})"
        return f"time_bucket({width}, {value}, TIMESTAMP '{self.r.choice(_TS_TEXT)}')"

    # -------------------------------------------------------------- other kinds from dates and times
    def temporal_int(self, scope, d: int, sub: bool) -> E:
        x = self.r.random()
        if x < 0.45:
            a = self.time_operand(scope, d, sub)
            part = self.r.choice(_PARTS_INT)
            self.feat("ts:extract")
            form = self.r.random()
            if form < 0.5:
                return self._m(f"EXTRACT({part} FROM {a.sql})", BIGINT, a)
            if form < 0.8:
                return self._m(f"date_part('{part}', {a.sql})", BIGINT, a)
            fn = self.r.choice(["hour", "minute", "second", "millisecond", "microsecond", "yearweek", "decade"])
            return self._m(f"{fn}({a.sql})", BIGINT, a)
        if x < 0.85:
            a, b = self.time_operand(scope, d, sub), self.time_operand(scope, d, sub)
            part = self.r.choice(_PARTS_DIFF)
            fn = self.r.choice(["date_diff", "datediff", "date_sub"])
            self.feat(f"ts:{fn.replace('datediff', 'date_diff')}")
            return self._m(f"{fn}('{part}', {a.sql}, {b.sql})", BIGINT, a, b)
        a = self.time_operand(scope, d, sub)
        fn = self.r.choice(["epoch_ms", "epoch_us", "epoch_ns"])
        self.feat("ts:epoch")
        return self._m(f"{fn}({a.sql})", BIGINT, a)

    def temporal_dbl(self, scope, d: int, sub: bool) -> E:
        a = self.time_operand(scope, d, sub)
        self.feat("ts:epoch")
        form = self.r.choice([f"EXTRACT(epoch FROM {a.sql})", f"epoch({a.sql})", f"date_part('julian', {a.sql})"])
        return self._m(form, DOUBLE, a, nosum=True)

    def temporal_str(self, scope, d: int, sub: bool) -> E:
        a = self.time_operand(scope, d, sub)
        if self.chance(0.6):
            self.feat("cast")
            return self._m(f"CAST({a.sql} AS VARCHAR)", VARCHAR, a)
        if self.chance(0.5):
            self.feat("ts:strftime")
            return self._m(f"strftime({a.sql}, '{self.r.choice(_FORMATS)}')", VARCHAR, a)
        self.feat("ts:names")
        return self._m(f"{self.r.choice(['dayname', 'monthname'])}({a.sql})", VARCHAR, a)

    def temporal_date(self, scope, d: int, sub: bool) -> E:
        a = self.time_operand(scope, d, sub)
        x = self.r.random()
        if x < 0.5:
            self.feat("ts:date_trunc")
            return self._m(f"date_trunc('{self.r.choice(_TRUNC_DATE)}', {a.sql})", DATE, a)
        if x < 0.8:
            if a.t == DATE:
                return a
            self.feat("ts:cast")
            return self._m(f"CAST({a.sql} AS DATE)", DATE, a)
        if a.t == DATE and self.chance(0.4):
            return self._m(self.time_bucket(a.sql).replace("TIMESTAMP '", "DATE '"), DATE, a)
        self.feat("ts:last_day")
        return self._m(f"last_day({a.sql})", DATE, a)

    def time_comparison(self, scope, d: int, sub: bool) -> E:
        """A DATE or TIMESTAMP compared with a DATE or TIMESTAMP (the DATE cast to TIMESTAMP)."""
        a, b = self.time_operand(scope, d, sub), self.time_operand(scope, d, sub)
        if self.chance(0.15):
            b = E(f"'{self.r.choice(_TS_TEXT)}'", VARCHAR)  # text cast to the other side's type
        op = self.r.choice(["=", "<>", "<", "<=", ">", ">="])
        self.feat("ts:compare")
        return self._m(f"({a.sql} {op} {b.sql})", BOOLEAN, a, b)

    # -------------------------------------------------------------- windows
    def range_frame(self, key_type) -> str:
        """A RANGE frame over one DATE / TIMESTAMP ORDER BY key (peers come in whole)."""

        def bound(side):
            if self.rw.random() < 0.3:
                return "CURRENT ROW"
            unit = self.rw.choice(["DAY", "HOUR", "MINUTE", "MONTH"])
            return f"INTERVAL {self.rw.choice([1, 2, 12, 30])} {unit} {side}"

        start = bound("PRECEDING")
        end = bound("FOLLOWING") if start != "CURRENT ROW" or self.rw.random() < 0.5 else "CURRENT ROW"
        return f" RANGE BETWEEN {start} AND {end}"
