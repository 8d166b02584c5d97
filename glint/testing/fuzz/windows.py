"""Window functions of the query generator (a mixin of
:class:`~glint.testing.fuzz.generator.QueryGenerator`) whose value does not
depend on how ties are broken: RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST, and
COUNT / SUM / AVG / MIN / MAX over the default frame (whose peers come in
whole) or a RANGE frame by INTERVALs over a DATE or TIMESTAMP key. They draw
from a stream of their own (``rw``); BIT_* , ARG_MAX / ARG_MIN of a column by
itself and CORR / COVAR_* / REGR_* over such windows from ``rx``.
"""

from __future__ import annotations

from glint.testing.fuzz.scopes import Scope
from glint.testing.fuzz.sqltypes import BIGINT, DOUBLE, HUGEINT, E, T


class Windows:
    """Mixin: expects the generator's rw, feat and range_frame (temporal)."""

    def window_item(self, kind: str, scope: Scope) -> E | None:
        """A window call of ``kind``'s type over columns of ``scope`` whose
        value is the same however an engine breaks ties in the ORDER BY."""
        rw = self.rw
        cols = scope.columns()
        if not cols:
            return None

        def col(k=None):
            pool = scope.columns(k) if k else cols
            if not pool:
                return None
            s, c = rw.choice(pool)
            return E(f"{s.alias}.{c[0]}", c[1], nosum=c[3])

        over = []
        if rw.random() < 0.6:
            over.append("PARTITION BY " + ", ".join(col().sql for _ in range(rw.choice([1, 1, 2]))))
        frame = ""
        if rw.random() < 0.75:
            keys = []
            for _ in range(rw.choice([1, 1, 2])):
                keys.append(
                    col().sql + rw.choice(["", " ASC", " DESC"]) + rw.choice(["", " NULLS FIRST", " NULLS LAST"])
                )
            over.append("ORDER BY " + ", ".join(keys))
        elif rw.random() < 0.5 and (scope.columns("ts") or scope.columns("date")):
            # RANGE frames by INTERVALs over one DATE / TIMESTAMP key (the frame takes whole peer groups)
            key = col(rw.choice(["ts", "ts", "date"])) or col("ts") or col("date")
            over.append(f"ORDER BY {key.sql}{rw.choice(['', ' DESC'])}{rw.choice(['', ' NULLS FIRST'])}")
            frame = self.range_frame(key.t)
            self.feat("window:range_interval")
        spec = " OVER (" + " ".join(over) + frame + ")"
        if self.rx.random() < 0.2:
            e = self._stat_window(kind, spec, col)
            if e is not None:
                self.feat("window")
                return e
        if kind == "int":
            x = rw.random()
            if x < 0.4 and "ORDER BY" in spec:
                fn = rw.choice(["RANK()", "DENSE_RANK()"])
                e = E(fn + spec, BIGINT)
            elif x < 0.7:
                a = col()
                e = E("COUNT(*)" + spec if a is None or rw.random() < 0.4 else f"COUNT({a.sql}){spec}", BIGINT)
            else:
                a = col("int")
                if a is None:
                    return None
                fn = rw.choice(["SUM", "MIN", "MAX"])
                e = E(f"{fn}({a.sql}){spec}", HUGEINT if fn == "SUM" else a.t)
        elif kind == "dbl":
            a = col(rw.choice(["int", "dec"]))
            if "ORDER BY" in spec and (a is None or rw.random() < 0.5):
                e = E(rw.choice(["PERCENT_RANK()", "CUME_DIST()"]) + spec, DOUBLE, nosum=True)
            elif a is not None:
                e = E(f"AVG({a.sql}){spec}", DOUBLE, nosum=True)
            else:
                return None
        else:
            a = col(kind)
            if a is None:
                return None
            if kind == "dec" and rw.random() < 0.5:
                e = E(f"SUM({a.sql}){spec}", T("DECIMAL", 38, a.t.s))
            else:
                e = E(f"{rw.choice(['MIN', 'MAX'])}({a.sql}){spec}", a.t, nosum=a.nosum)
        self.feat("window")
        return e

    def _stat_window(self, kind: str, spec: str, col) -> E | None:
        """BIT_* and ARG_MAX / ARG_MIN of a column by itself, or CORR / COVAR_* /
        REGR_SLOPE of two numeric columns, over the window (draws from ``rx``)."""
        rx = self.rx
        if kind == "dbl":
            y, x = col(rx.choice(["int", "dec"])), col(rx.choice(["int", "dec"]))
            if y is None or x is None:
                return None
            fn = rx.choice(["CORR", "COVAR_POP", "COVAR_SAMP", "REGR_SLOPE", "REGR_SXY"])
            self.feat("window:" + fn.lower())
            return E(f"{fn}({y.sql}, {x.sql}){spec}", DOUBLE, nosum=True)
        a = col(kind)
        if a is None:
            return None
        if kind == "int" and rx.random() < 0.5:
            fn = rx.choice(["BIT_AND", "BIT_OR", "BIT_XOR"])
            self.feat("window:" + fn.lower())
            return E(f"{fn}({a.sql}){spec}", a.t)
        fn = rx.choice(["ARG_MAX", "ARG_MIN"])
        self.feat("window:" + fn.lower())
        return E(f"{fn}({a.sql}, {a.sql}){spec}", a.t, nosum=a.nosum)
