"""Row expressions of the query generator (a mixin of
:class:`~glint.testing.fuzz.generator.QueryGenerator`) over the leaves of
glint.testing.fuzz.leaves: CASE / COALESCE / NULLIF, arithmetic with
DuckDB's result types, casts and TRY_CAST, the math functions (rounding,
logarithms, trigonometry, gcd / lcm, greatest / least), EXTRACT and date
arithmetic, and the string forms that are not in gen_strings. In an aggregated scope an expression
goes through the aggregates mixin instead (glint.testing.fuzz.aggregates).
"""

from __future__ import annotations

from glint.testing.fuzz.scopes import Scope
from glint.testing.fuzz.sqltypes import (
    BIGINT,
    DATE,
    DOUBLE,
    INTEGER,
    VARCHAR,
    E,
    T,
    arith_type,
    unify,
)


class RowExpressions:
    """Mixin: expects the generator's r, chance, pick, feat, random_kind, and
    the other mixins' leaf, literal, agg_expr, scalar_subquery, gen_bool and
    the temporal and string forms."""

    def expr(self, kind: str, scope: Scope, d: int, sub: bool = False, top: bool = False) -> E:
        """An expression of ``kind`` over ``scope``. In an aggregated scope
        (``scope.group`` not None) columns appear only as group keys or inside
        aggregates."""
        agg_mode = scope.group is not None
        if agg_mode:
            return self.agg_expr(kind, scope, d, sub)
        return self.row_expr(kind, scope, d, sub)

    def row_expr(self, kind: str, scope: Scope, d: int, sub: bool) -> E:
        if d <= 0 or self.chance(0.1 if kind == "bool" else 0.35):
            if sub and kind != "bool" and self.chance(0.06):
                return self.scalar_subquery(kind, scope, corr=self.chance(0.5))
            return self.leaf(kind, scope)
        f = getattr(self, f"gen_{kind}")
        return f(scope, d - 1, sub)

    def sub_e(self, kind: str, scope: Scope, d: int, sub: bool) -> E:
        return self.expr(kind, scope, d, sub)

    def num_operand(self, scope, d, sub, kinds=("int", "dec", "dbl")) -> E:
        return self.sub_e(self.r.choice(kinds), scope, d, sub)

    def common_forms(self, kind: str, scope: Scope, d: int, sub: bool) -> E | None:
        """CASE / COALESCE / NULLIF for any kind (None: not chosen)."""
        x = self.r.random()
        if x < 0.07:
            cond = self.sub_e("bool", scope, d, sub)
            a, b = self.sub_e(kind, scope, d, sub), self.sub_e(kind, scope, d, sub)
            self.feat("case")
            if self.chance(0.3):
                return E(
                    f"CASE WHEN {cond.sql} THEN {a.sql} END",
                    a.t,
                    nosum=a.nosum,
                    agg=cond.agg or a.agg,
                    gk=cond.gk or a.gk,
                )
            return E(
                f"CASE WHEN {cond.sql} THEN {a.sql} ELSE {b.sql} END",
                unify(a.t, b.t),
                nosum=a.nosum or b.nosum,
                agg=a.agg or b.agg or cond.agg,
                gk=a.gk or b.gk or cond.gk,
            )
        if x < 0.10 and kind not in ("bool",):
            op = self.sub_e(kind, scope, d, sub)
            v1, v2 = self.literal(kind), self.sub_e(kind, scope, d, sub)
            self.feat("case")
            return E(
                f"CASE {op.sql} WHEN {v1.sql} THEN {v2.sql} ELSE {op.sql} END",
                unify(op.t, v2.t),
                nosum=op.nosum or v2.nosum,
                agg=op.agg or v2.agg,
                gk=op.gk or v2.gk,
            )
        if x < 0.16:
            args = [self.sub_e(kind, scope, d, sub) for _ in range(self.r.choice([2, 2, 3]))]
            if self.chance(0.5):
                args.append(self.literal(kind))
            t = args[0].t
            for a in args[1:]:
                t = unify(t, a.t)
            self.feat("coalesce")
            return E(
                f"COALESCE({', '.join(a.sql for a in args)})",
                t,
                nosum=any(a.nosum for a in args),
                agg=any(a.agg for a in args),
                gk=any(a.gk for a in args),
            )
        if x < 0.19:
            a, b = self.sub_e(kind, scope, d, sub), self.sub_e(kind, scope, d, sub)
            self.feat("nullif")
            return E(
                f"NULLIF({a.sql}, {b.sql})",
                a.t if a.t.kind != "NULL" else b.t,
                nosum=a.nosum,
                agg=a.agg or b.agg,
                gk=a.gk or b.gk,
            )
        return None

    @staticmethod
    def _m(sql: str, t: T, *parts: E, nosum: bool = False) -> E:
        return E(
            sql,
            t,
            nosum=nosum or any(p.nosum for p in parts),
            agg=any(p.agg for p in parts),
            gk=any(p.gk for p in parts),
        )

    def gen_int(self, scope, d, sub) -> E:
        c = self.common_forms("int", scope, d, sub)
        if c is not None:
            return c
        x = self.r.random()
        if x < 0.35:
            a, b = self.sub_e("int", scope, d, sub), self.sub_e("int", scope, d, sub)
            op = self.pick({"+": 3, "-": 3, "*": 2, "//": 1, "%": 1})
            self.feat("arith:" + op)
            return self._m(f"({a.sql} {op} {b.sql})", arith_type(op, a.t, b.t), a, b)
        if x < 0.42:
            a = self.sub_e("int", scope, d, sub)
            fn = self.r.choice(["ABS", "-"])
            if fn == "-":
                return self._m(f"(- {a.sql})", a.t if a.t.kind != "NULL" else INTEGER, a)
            return self._m(f"ABS({a.sql})", a.t if a.t.kind != "NULL" else INTEGER, a)
        if x < 0.55:
            src = self.r.choice(["dec", "dbl", "int", "bool", "strnum"])
            target = self.r.choice(["INTEGER", "INTEGER", "BIGINT"])
            self.feat("cast")
            if src == "strnum":
                v = self.r.choice(["'42'", "' 7'", "'-2147483648'", "'2147483648'", "'1.5'", "'x'", "''"])
                return E(f"CAST({v} AS {target})", T(target))
            a = self.sub_e(src, scope, d, sub)
            return self._m(f"CAST({a.sql} AS {target})", T(target), a)
        if x < 0.68 and self.chance(0.5):
            return self.temporal_int(scope, d, sub)
        if x < 0.68:
            a = self.sub_e("date", scope, d, sub)
            field_ = self.r.choice(
                [
                    "year",
                    "month",
                    "day",
                    "quarter",
                    "dow",
                    "doy",
                    "week",
                    "isodow",
                    "dayofweek",
                    "dayofyear",
                    "yearweek",
                    "decade",
                    "century",
                ]
            )
            self.feat("extract")
            if self.chance(0.7):
                return self._m(f"EXTRACT({field_} FROM {a.sql})", BIGINT, a)
            fn = self.r.choice(["year", "month", "day", "quarter", "dayofweek"])
            return self._m(f"{fn}({a.sql})", BIGINT, a)
        if x < 0.76:
            if self.chance(0.5):
                return self.gen_string_number(scope, d, sub)
            a = self.sub_e("str", scope, d, sub)
            self.feat("fn:length")
            return self._m(f"LENGTH({a.sql})", BIGINT, a)
        if x < 0.84:
            a = self.sub_e("date", scope, d, sub)
            b = self.sub_e("date", scope, d, sub)
            if a.t == DATE and b.t == DATE:
                self.feat("date_diff")
                return self._m(f"({a.sql} - {b.sql})", BIGINT, a, b)
        if x < 0.94:
            return self.math_int(scope, d, sub)
        return self.leaf("int", scope)

    def math_int(self, scope, d, sub) -> E:
        """round / trunc to tens, sign, gcd / lcm, greatest / least, TRY_CAST of integers."""
        a = self.sub_e("int", scope, d, sub)
        t = a.t if a.t.kind != "NULL" else INTEGER
        x = self.r.random()
        if x < 0.25:
            fn, n = self.r.choice(["ROUND", "TRUNC"]), self.r.choice([-1, -2, -5, 0, 2])
            self.feat("fn:" + fn.lower())
            return self._m(f"{fn}({a.sql}, {n})", t if t.kind != "NULL" else BIGINT, a)
        if x < 0.35:
            self.feat("fn:sign")  # DuckDB's TINYINT result, kept out of arithmetic
            return self._m(f"CAST(SIGN({a.sql}) AS INTEGER)", INTEGER, a)
        if x < 0.55:
            b = self.sub_e("int", scope, d, sub)
            fn = self.r.choice(["GCD", "LCM"])
            self.feat("fn:" + fn.lower())
            out = T("HUGEINT") if "HUGEINT" in (a.t.kind, b.t.kind) else BIGINT
            return self._m(f"{fn}({a.sql}, {b.sql})", out, a, b)
        if x < 0.8:
            args = [a] + [self.sub_e("int", scope, d, sub) for _ in range(self.r.choice([1, 2]))]
            fn = self.r.choice(["GREATEST", "LEAST"])
            self.feat("fn:" + fn.lower())
            t = args[0].t
            for e in args[1:]:
                t = unify(t, e.t)
            return self._m(f"{fn}({', '.join(e.sql for e in args)})", t if t.kind != "NULL" else INTEGER, *args)
        src = self.r.choice(["dec", "dbl", "strnum"])
        target = self.r.choice(["INTEGER", "BIGINT"])
        self.feat("try_cast")
        if src == "strnum":
            v = self.r.choice(["'42'", "' 7'", "'2147483648'", "'1.5'", "'x'", "''", "'1e3'"])
            return E(f"TRY_CAST({v} AS {target})", T(target))
        b = self.sub_e(src, scope, d, sub)
        return self._m(f"TRY_CAST({b.sql} AS {target})", T(target), b)

    def gen_dec(self, scope, d, sub) -> E:
        c = self.common_forms("dec", scope, d, sub)
        if c is not None:
            return c
        x = self.r.random()
        if x < 0.45:
            a = self.sub_e("dec", scope, d, sub)
            b = self.sub_e(self.r.choice(["dec", "dec", "int"]), scope, d, sub)
            if self.chance(0.5):
                a, b = b, a
            op = self.pick({"+": 3, "-": 3, "*": 2, "%": 0.5})
            if op == "*" and (a.t.dec_ps()[1] + b.t.dec_ps()[1] > 8 or a.t.dec_ps()[0] + b.t.dec_ps()[0] > 38):
                op = "+"
            self.feat("arith:dec" + op)
            t = arith_type(op, a.t, b.t)
            if t.kind != "DECIMAL":
                t = T("DECIMAL", 18, 2)
            return self._m(f"({a.sql} {op} {b.sql})", t, a, b)
        if x < 0.55:
            a = self.sub_e("dec", scope, d, sub)
            t = a.t if a.t.kind == "DECIMAL" else T("DECIMAL", 15, 2)
            if self.chance(0.5):
                return self._m(f"ABS({a.sql})", t, a)
            n = self.r.choice([0, 1, 2])
            self.feat("fn:round")
            return self._m(f"ROUND({a.sql}, {n})", T("DECIMAL", t.p, min(t.s, n)) if n < t.s else t, a)
        if x < 0.7:
            src = self.r.choice(["int", "dec", "dbl"])
            a = self.sub_e(src, scope, d, sub)
            p, s = self.r.choice([(18, 2), (15, 2), (4, 1), (10, 0), (18, 6), (12, 3), (38, 2), (5, 4)])
            self.feat("cast")
            return self._m(f"CAST({a.sql} AS DECIMAL({p},{s}))", T("DECIMAL", p, s), a)
        if x < 0.75:
            a = self.sub_e("dec", scope, d, sub)
            return self._m(f"(- {a.sql})", a.t if a.t.kind == "DECIMAL" else T("DECIMAL", 18, 2), a)
        if x < 0.88:
            return self.math_dec(scope, d, sub)
        return self.leaf("dec", scope)

    def math_dec(self, scope, d, sub) -> E:
        """floor / ceil / round / trunc (negative digits too), greatest / least and TRY_CAST of DECIMALs."""
        a = self.sub_e("dec", scope, d, sub)
        t = a.t if a.t.kind == "DECIMAL" else T("DECIMAL", 18, 2)
        x = self.r.random()
        if x < 0.3:
            fn = self.r.choice(["FLOOR", "CEIL", "CEILING"])
            self.feat("fn:" + fn.lower())
            return self._m(f"{fn}({a.sql})", T("DECIMAL", t.p, 0), a)
        if x < 0.65:
            fn = self.r.choice(["ROUND", "TRUNC"])
            # DuckDB gives 0 (for NULL too) at as many digits before the point as the type has
            n = self.r.choice([v for v in (-2, -1, 0, 1, 3) if v > t.s - t.p])
            self.feat("fn:" + fn.lower())
            out = t if n >= t.s else T("DECIMAL", t.p, max(n, 0))
            return self._m(f"{fn}({a.sql}, {n})", out, a)
        if x < 0.85:
            b = self.sub_e(self.r.choice(["dec", "int"]), scope, d, sub)
            fn = self.r.choice(["GREATEST", "LEAST"])
            self.feat("fn:" + fn.lower())
            out = unify(a.t, b.t)
            return self._m(f"{fn}({a.sql}, {b.sql})", out if out.kind == "DECIMAL" else t, a, b)
        p, sc = self.r.choice([(4, 1), (10, 2), (18, 6), (5, 4)])
        self.feat("try_cast")
        return self._m(f"TRY_CAST({a.sql} AS DECIMAL({p},{sc}))", T("DECIMAL", p, sc), a)

    def gen_dbl(self, scope, d, sub) -> E:
        c = self.common_forms("dbl", scope, d, sub)
        if c is not None:
            return c
        x = self.r.random()
        if x < 0.3:
            a = self.num_operand(scope, d, sub)
            b = self.num_operand(scope, d, sub)
            self.feat("arith:/")
            return self._m(f"({a.sql} / {b.sql})", DOUBLE, a, b, nosum=True)
        if x < 0.55:
            a = self.sub_e("dbl", scope, d, sub)
            b = self.num_operand(scope, d, sub, kinds=("int", "dbl"))
            op = self.pick({"+": 3, "-": 3, "*": 2})
            if self.chance(0.5):
                a, b = b, a
            return self._m(f"({a.sql} {op} {b.sql})", DOUBLE, a, b, nosum=op == "*")
        if x < 0.7:
            a = self.num_operand(scope, d, sub, kinds=("int", "dec"))
            self.feat("cast")
            return self._m(f"CAST({a.sql} AS DOUBLE)", DOUBLE, a)
        if x < 0.74:
            return self.temporal_dbl(scope, d, sub)
        if x < 0.8:
            a = self.sub_e("dbl", scope, d, sub)
            if self.chance(0.5):
                return self._m(f"ABS({a.sql})", DOUBLE, a)
            self.feat("fn:round")
            return self._m(f"ROUND({a.sql}, {self.r.choice([0, 1, 2])})", DOUBLE, a, nosum=True)
        if x < 0.92:
            return self.math_dbl(scope, d, sub)
        return self.leaf("dbl", scope)

    _MATH_DBL = (
        "SQRT(ABS({a}))",
        "CBRT({a})",
        "EXP({a} / 1000)",
        "LN(ABS({a}) + 1)",
        "LOG(ABS({a}) + 1)",
        "LOG10(ABS({a}) + 1)",
        "LOG2(ABS({a}) + 1)",
        "LOG(2, ABS({a}) + 1)",
        "POWER({a}, 2)",
        "({a} ** 0.5)",
        "SIN({a})",
        "COS({a})",
        "TAN({a})",
        "ATAN({a})",
        "ATAN2({a}, {b})",
        "ASIN({a} / (ABS({a}) + 1))",
        "DEGREES({a})",
        "RADIANS({a})",
        "EVEN({a})",
        "FLOOR({a})",
        "CEIL({a})",
        "TRUNC({a})",
        "ROUND({a}, -1)",
        "TRUNC({a}, 1)",
        "({a} * PI())",
        "GREATEST({a}, {b})",
        "LEAST({a}, {b})",
        "SQRT({a})",
        "LN({a})",
    )

    def math_dbl(self, scope, d, sub) -> E:
        """The math functions of DOUBLE (some of them with arguments that raise, as DuckDB raises)."""
        a = self.num_operand(scope, d, sub)
        b = self.num_operand(scope, d, sub, kinds=("int", "dbl"))
        form = self.r.choice(self._MATH_DBL)
        a_sql, b_sql = a.sql, b.sql
        if form.startswith(("FLOOR", "CEIL", "TRUNC", "ROUND", "GREATEST", "LEAST")):  # these keep the type
            a_sql = a.sql if a.t == DOUBLE else f"CAST({a.sql} AS DOUBLE)"
            b_sql = b.sql if b.t == DOUBLE else f"CAST({b.sql} AS DOUBLE)"
        self.feat("fn:math")
        return self._m(form.format(a=a_sql, b=b_sql), DOUBLE, a, b, nosum=True)

    def gen_str(self, scope, d, sub) -> E:
        c = self.common_forms("str", scope, d, sub)
        if c is not None:
            return c
        x = self.r.random()
        if x < 0.2:
            return self.gen_str_function(scope, d, sub)
        x = (x - 0.2) / 0.8
        if x < 0.22:
            a, b = self.sub_e("str", scope, d, sub), self.sub_e("str", scope, d, sub)
            self.feat("fn:concat")
            if self.chance(0.7):
                return self._m(f"({a.sql} || {b.sql})", VARCHAR, a, b)
            return self._m(f"CONCAT({a.sql}, {b.sql})", VARCHAR, a, b)
        if x < 0.45:
            a = self.sub_e("str", scope, d, sub)
            fn = self.r.choice(["UPPER", "LOWER", "TRIM"])
            self.feat("fn:" + fn.lower())
            return self._m(f"{fn}({a.sql})", VARCHAR, a)
        if x < 0.62:
            a = self.sub_e("str", scope, d, sub)
            start = self.r.choice([1, 1, 2, 3, 0, -1, -3])
            self.feat("fn:substring")
            if self.chance(0.6):
                n = self.r.choice([1, 2, 3, 0, 5, -1])
                if self.chance(0.5):
                    return self._m(f"SUBSTRING({a.sql}, {start}, {n})", VARCHAR, a)
                return self._m(f"SUBSTRING({a.sql} FROM {start} FOR {n})", VARCHAR, a)
            return self._m(f"SUBSTRING({a.sql}, {start})", VARCHAR, a)
        if x < 0.68:
            src = self.pick({"int": 3, "dec": 3, "date": 1.5, "bool": 1, "dbl": 0.5})
            a = self.sub_e(src, scope, d, sub)
            self.feat("cast")
            return self._m(f"CAST({a.sql} AS VARCHAR)", VARCHAR, a)
        if x < 0.75:
            return self.temporal_str(scope, d, sub)
        return self.leaf("str", scope)

    def gen_date(self, scope, d, sub) -> E:
        c = self.common_forms("date", scope, d, sub)
        if c is not None:
            return c
        x = self.r.random()
        if x < 0.35:
            return self.temporal_date(scope, d, sub)
        if x < 0.55:
            a = self.sub_e("date", scope, d, sub)
            n = self.r.choice([1, 7, 30, -1, 0, 1000])
            return self._m(f"({a.sql} + {n})", DATE, a)
        if x < 0.62:
            v = self.r.choice(["'1995-01-15'", "'2000-02-29'", "'1900-01-01'", "'2100-12-31'"])
            self.feat("cast")
            return E(f"CAST({v} AS DATE)", DATE)
        return self.leaf("date", scope)
