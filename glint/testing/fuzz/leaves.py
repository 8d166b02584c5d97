"""The leaves of the query generator's expressions (a mixin of
:class:`~glint.testing.fuzz.generator.QueryGenerator`): columns of the scope
(now and then an outer one), and literals of every kind: NULLs (typed and
untyped), integer and DECIMAL extremes, special doubles, the fuzzing strings,
edge dates and timestamps.
"""

from __future__ import annotations

import datetime as _dt

from glint.testing.fuzz.data import DATES_EDGE, KEY_STRINGS, STRINGS
from glint.testing.fuzz.scopes import Scope
from glint.testing.fuzz.sqltypes import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INTEGER,
    VARCHAR,
    E,
    T,
    quote,
)


class Leaves:
    """Mixin: expects the generator's r, chance, feat, and the other mixins'
    agg_leaf and ts_literal."""

    def column(self, kind: str, scope: Scope) -> E | None:
        cols = scope.columns(kind)
        if not cols:
            return None
        s, c = self.r.choice(cols)
        return E(f"{s.alias}.{c[0]}", c[1], key=c[2], nosum=c[3], col=True)

    def literal(self, kind: str) -> E:
        r = self.r
        if kind == "ts":
            return self.ts_literal()
        if self.chance(0.07):
            if self.chance(0.5) and kind not in ("date",):
                return E("NULL", T("NULL"))
            t = {
                "int": INTEGER,
                "dec": T("DECIMAL", 15, 2),
                "dbl": DOUBLE,
                "str": VARCHAR,
                "date": DATE,
                "bool": BOOLEAN,
            }[kind]
            return E(f"CAST(NULL AS {t.sql()})", t)
        if kind == "int":
            x = r.random()
            if x < 0.6:
                return E(str(r.randint(-5, 12)), INTEGER)
            if x < 0.75:
                v = r.choice([2147483647, 100000, -100000, 1000])
                return E(str(v), INTEGER)
            if x < 0.85:
                return E(f"CAST({r.choice([-2147483648, 2147483647, 0])} AS INTEGER)", INTEGER)
            v = r.choice([2147483648, 3000000000, 9223372036854775807, -9223372036854775807, 10**15])
            return E(str(v) if v > 0 else f"({v})", BIGINT)
        if kind == "dec":
            x = r.random()
            if x < 0.2:
                return E("9999999999999999.99", T("DECIMAL", 18, 2))
            if x < 0.3:
                return E("CAST(-999.9 AS DECIMAL(4,1))", T("DECIMAL", 4, 1))
            scale = r.choice([1, 2, 2, 3])
            ip = r.randint(0, 999)
            frac = r.randint(0, 10**scale - 1)
            txt = f"{ip}.{frac:0{scale}d}"
            p = len(str(ip).lstrip("0") or "") + scale
            t = T("DECIMAL", max(p, scale), scale)
            return E(txt if self.chance(0.7) else f"(-{txt})", t)
        if kind == "dbl":
            v = r.choice(["1.5", "-0.25", "0.0", "-0.0", "1e300", "3.0", "0.1", "100.75", "1e-5"])
            if v in ("-0.0",):
                return E(f"CAST('{v}' AS DOUBLE)", DOUBLE, nosum=True)
            txt = f"CAST({v} AS DOUBLE)" if self.chance(0.6) or "e" in v else f"{v}e0"
            return E(txt, DOUBLE, nosum=v in ("0.1", "1e300", "1e-5"))
        if kind == "str":
            pool = STRINGS + KEY_STRINGS
            s = r.choice(pool)
            if len(s) > 40 and self.chance(0.7):
                s = s[:5]
            return E(quote(s), VARCHAR)
        if kind == "date":
            if self.chance(0.5):
                dd = r.choice(DATES_EDGE)
            else:
                dd = _dt.date(1995, 1, 1) + _dt.timedelta(days=r.randint(0, 60))
            return E(f"DATE '{dd.isoformat()}'", DATE)
        if kind == "bool":
            return E(r.choice(["TRUE", "FALSE"]), BOOLEAN)
        raise ValueError(kind)

    def leaf(self, kind: str, scope: Scope) -> E:
        if scope.group is not None:
            return self.agg_leaf(kind, scope, 0, False)
        if self.chance(0.78):
            c = self.column(kind, scope)
            if c is not None:
                return c
        if scope.outer is not None and self.chance(0.05):  # a stray outer reference
            c = self.column(kind, Scope(scope.outer.sources))
            if c is not None:
                self.feat("outer_ref")
                return c
        return self.literal(kind)
