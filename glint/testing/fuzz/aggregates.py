"""Aggregated expressions of the query generator (a mixin of
:class:`~glint.testing.fuzz.generator.QueryGenerator`): in a scope with a
GROUP BY, columns appear only as group keys or inside aggregates: COUNT(*),
COUNT, SUM, AVG, MIN, MAX with DISTINCT, and those of
glint.testing.fuzz.grouping and glint.testing.fuzz.stat_aggregates, with
FILTER now and then.
"""

from __future__ import annotations

from dataclasses import replace

from glint.testing.fuzz.grouping import aggregate_call, with_filter
from glint.testing.fuzz.scopes import Scope
from glint.testing.fuzz.sqltypes import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    HUGEINT,
    INTEGER,
    TIMESTAMP,
    VARCHAR,
    E,
    T,
    matches,
)
from glint.testing.fuzz.stat_aggregates import stat_aggregate_call


class Aggregates:
    """Mixin: expects the generator's r, ra, chance, feat, random_kind, and
    the other mixins' row_expr, comparison, literal, scalar_subquery and gen_<kind>."""

    _agg_type_hint: T = BIGINT

    def agg_call(self, kind: str, scope: Scope, d: int) -> E:
        """An aggregate of ``kind``'s type; its argument is a row expression."""
        row = Scope(scope.sources, scope.outer)
        distinct = "DISTINCT " if self.chance(0.15) else ""
        if distinct:
            self.feat("agg:distinct")
        arg_d = max(0, min(d, 2))
        if self.rx.random() < 0.15:
            e = stat_aggregate_call(self, kind, row, arg_d)
            if e is not None:
                e = with_filter(self, e, row)
                self._agg_type_hint = e.t
                return e
        if self.ra.random() < 0.25:
            e = aggregate_call(self, kind, row, arg_d)
            if e is not None:
                e = with_filter(self, e, row)
                self._agg_type_hint = e.t
                return e
        if kind == "int":
            x = self.r.random()
            if x < 0.45:
                self.feat("agg:count")
                if self.chance(0.35):
                    e = E("COUNT(*)", BIGINT, agg=True)
                else:
                    a = self.row_expr(self.random_kind(), row, arg_d, False)
                    e = E(f"COUNT({distinct}{a.sql})", BIGINT, agg=True)
            elif x < 0.75:
                a = self.row_expr("int", row, arg_d, False)
                self.feat("agg:sum")
                e = E(f"SUM({distinct}{a.sql})", HUGEINT, agg=True)
            else:
                a = self.row_expr("int", row, arg_d, False)
                fn = self.r.choice(["MIN", "MAX"])
                self.feat("agg:" + fn.lower())
                e = E(f"{fn}({distinct}{a.sql})", a.t if a.t.kind != "NULL" else INTEGER, agg=True)
        elif kind == "dec":
            a = self.row_expr("dec", row, arg_d, False)
            t = a.t if a.t.kind == "DECIMAL" else T("DECIMAL", 18, 2)
            if self.chance(0.55):
                self.feat("agg:sum")
                e = E(f"SUM({distinct}{a.sql})", T("DECIMAL", 38, t.s), agg=True)
            else:
                fn = self.r.choice(["MIN", "MAX"])
                self.feat("agg:" + fn.lower())
                e = E(f"{fn}({distinct}{a.sql})", t, agg=True)
        elif kind == "dbl":
            a = self.row_expr(self.r.choice(["int", "dec", "dbl"]), row, arg_d, False)
            x = self.r.random()
            if a.nosum:
                x = 0.9
            if x < 0.55:
                self.feat("agg:avg")
                e = E(f"AVG({distinct}{a.sql})", DOUBLE, agg=True, nosum=True)
            elif x < 0.75 and a.t.kind == "DOUBLE":
                self.feat("agg:sum")
                e = E(f"SUM({distinct}{a.sql})", DOUBLE, agg=True)
            else:
                a = self.row_expr("dbl", row, arg_d, False)
                fn = self.r.choice(["MIN", "MAX"])
                self.feat("agg:" + fn.lower())
                e = E(f"{fn}({distinct}{a.sql})", DOUBLE, agg=True, nosum=a.nosum)
        else:
            a = self.row_expr(kind, row, arg_d, False)
            fn = self.r.choice(["MIN", "MAX"])
            self.feat("agg:" + fn.lower())
            t = a.t if a.t.kind != "NULL" else {"str": VARCHAR, "date": DATE, "ts": TIMESTAMP, "bool": BOOLEAN}[kind]
            e = E(f"{fn}({distinct}{a.sql})", t, agg=True)
        e = with_filter(self, e, row)
        self._agg_type_hint = e.t
        return e

    def agg_leaf(self, kind: str, scope: Scope, d: int, sub: bool) -> E:
        x = self.r.random()
        keys = [g for g in (scope.group or []) if matches(g.t, kind)]
        if keys and x < 0.35:
            g = self.r.choice(keys)
            return replace(g, sql=g.sql if g.col else f"({g.sql})")
        if kind == "bool":
            if self.ra.random() < 0.25:
                row = Scope(scope.sources, scope.outer)
                e = aggregate_call(self, "bool", row, max(0, min(d, 2)))
                if e is not None:
                    return with_filter(self, e, row)
            if x < 0.5:
                return self.comparison(scope, 0, False)
            return self.literal("bool")
        if x < 0.9:
            return self.agg_call(kind, scope, d)
        if sub and self.chance(0.5):
            return self.scalar_subquery(kind, scope, corr=False)
        return self.literal(kind)

    def agg_expr(self, kind: str, scope: Scope, d: int, sub: bool) -> E:
        if d <= 0 or self.chance(0.45):
            return self.agg_leaf(kind, scope, d, sub)
        f = getattr(self, f"gen_{kind}")
        return f(scope, d - 1, sub)
