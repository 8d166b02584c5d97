"""Predicates and subqueries of the query generator (a mixin of
:class:`~glint.testing.fuzz.generator.QueryGenerator`): AND / OR / NOT,
comparisons (numbers of mixed kinds included), IS [NOT] NULL, [NOT] BETWEEN,
[NOT] IN lists, [NOT] [I]LIKE [ESCAPE], IS [NOT] DISTINCT FROM, and
subqueries: [NOT] IN, [NOT] EXISTS and scalar ones, correlated on equality
of join keys.
"""

from __future__ import annotations

from glint.testing.fuzz.scopes import Scope, Source
from glint.testing.fuzz.sqltypes import BOOLEAN, E, parse_type


class Predicates:
    """Mixin: expects the generator's r, chance, pick, feat, alias, info,
    random_kind, and the other mixins' expr, sub_e, leaf, literal, _m,
    num_operand, from_clause, agg_call and the string and temporal forms."""

    def gen_bool(self, scope, d, sub) -> E:
        x = self.r.random()
        if x < 0.28:
            return self.comparison(scope, d, sub)
        if x < 0.43:
            a, b = self.sub_e("bool", scope, d, sub), self.sub_e("bool", scope, d, sub)
            op = self.r.choice(["AND", "OR"])
            self.feat("bool:" + op.lower())
            return self._m(f"({a.sql} {op} {b.sql})", BOOLEAN, a, b)
        if x < 0.49:
            a = self.sub_e("bool", scope, d, sub)
            self.feat("bool:not")
            return self._m(f"(NOT {a.sql})", BOOLEAN, a)
        if x < 0.56:
            a = self.sub_e(self.random_kind(), scope, d, sub)
            self.feat("is_null")
            return self._m(f"({a.sql} IS {'NOT ' if self.chance(0.4) else ''}NULL)", BOOLEAN, a)
        if x < 0.62:
            k = self.r.choice(["int", "dec", "dbl", "str", "date", "ts"])
            a, lo, hi = (self.sub_e(k, scope, d, sub) for _ in range(3))
            self.feat("between")
            neg = "NOT " if self.chance(0.3) else ""
            return self._m(f"({a.sql} {neg}BETWEEN {lo.sql} AND {hi.sql})", BOOLEAN, a, lo, hi)
        if x < 0.69:
            k = self.r.choice(["int", "dec", "dbl", "str", "date", "ts"])
            a = self.sub_e(k, scope, d, sub)
            items = [self.literal(k) for _ in range(self.r.choice([1, 2, 3, 4]))]
            if self.chance(0.3):
                items.append(self.sub_e(k, scope, 0, False))
            neg = "NOT " if self.chance(0.35) else ""
            self.feat("in_list")
            return self._m(f"({a.sql} {neg}IN ({', '.join(i.sql for i in items)}))", BOOLEAN, a, *items)
        if x < 0.77:
            a = self.sub_e("str", scope, d, sub)
            pat = self.r.choice(
                [
                    "'%'",
                    "'a%'",
                    "'%a%'",
                    "'%b'",
                    "'_'",
                    "'a_c'",
                    "'%\\%%'",
                    "'%\\_%'",
                    "''",
                    "'ABC'",
                    "'%ü%'",
                    "'__%'",
                    "'%.%'",
                    "'x%'",
                    "'%' || 'a'",
                ]
            )
            op = self.r.choice(["LIKE", "LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"])
            esc = ""
            if "\\" in pat and self.chance(0.8):
                esc = " ESCAPE '\\'"
            self.feat("like")
            return self._m(f"({a.sql} {op} {pat}{esc})", BOOLEAN, a)
        if x < 0.81:
            if self.chance(0.7):
                return self.gen_string_predicate(scope, d, sub)
            k = self.r.choice(["int", "dec", "str", "date", "ts", "bool"])
            a, b = self.sub_e(k, scope, d, sub), self.sub_e(k, scope, d, sub)
            neg = "NOT " if self.chance(0.5) else ""
            self.feat("is_distinct")
            return self._m(f"({a.sql} IS {neg}DISTINCT FROM {b.sql})", BOOLEAN, a, b)
        if x < 0.93 and sub and scope.group is None:
            return self.subquery_predicate(scope)
        if x < 0.96 and scope.group is None:
            return self.leaf("bool", scope)
        return self.comparison(scope, d, sub)

    def comparison(self, scope, d, sub) -> E:
        k = self.pick(
            {
                "int": 3,
                "dec": 2,
                "dbl": 1,
                "str": 2,
                "date": 1,
                "ts": 1,
                "time": 1,
                "bool": 0.3 if d > 0 else 0,
                "mixnum": 1,
            }
        )
        if k == "time":
            return self.time_comparison(scope, d, sub)
        if k == "mixnum":
            a = self.num_operand(scope, d, sub)
            b = self.num_operand(scope, d, sub)
        else:
            a, b = self.sub_e(k, scope, d, sub), self.sub_e(k, scope, d, sub)
        op = self.r.choice(["=", "<>", "<", "<=", ">", ">=", "!="])
        return self._m(f"({a.sql} {op} {b.sql})", BOOLEAN, a, b)

    def correlation(self, inner: Scope, outer: Scope) -> str | None:
        pairs = []
        for s in inner.sources:
            for c in s.cols:
                if not c[2]:
                    continue
                for os_, oc in outer.columns():
                    if oc[2] == c[2]:
                        pairs.append(f"{s.alias}.{c[0]} = {os_.alias}.{oc[0]}")
        if not pairs:
            return None
        self.r.shuffle(pairs)
        return " AND ".join(pairs[: 1 if self.chance(0.8) else 2])

    def sub_select(
        self, scope: Scope, want: list[str] | None, correlated: bool, agg_item: bool = False, exists: bool = False
    ) -> str:
        """SELECT for a subquery: FROM one or two tables, an optional WHERE
        with a correlation on equality, and the wanted item(s)."""
        inner_scope, from_sql, conds = self.from_clause(0 if self.chance(0.7) else 1, None)
        inner_scope = Scope(inner_scope.sources, scope)
        where = list(conds)
        if correlated:
            c = self.correlation(inner_scope, scope)
            if c is not None:
                where.append(c)
                self.feat("correlated")
        if self.chance(0.4):
            where.append(self.expr("bool", Scope(inner_scope.sources), 1, sub=False).sql)
        if exists:
            items = self.r.choice(["1", "*", "NULL"])
        elif agg_item:
            gscope = Scope(inner_scope.sources, None, group=[])
            items = self.agg_call(want[0], gscope, 1).sql + " AS c0"
        else:
            items = self.expr(want[0], Scope(inner_scope.sources), 1, sub=False).sql + " AS c0"
        sql = f"SELECT {items} FROM {from_sql}"
        if where:
            sql += " WHERE " + " AND ".join(f"({w})" for w in where)
        return sql

    def subquery_predicate(self, scope: Scope) -> E:
        x = self.r.random()
        corr = self.chance(0.5)
        if x < 0.5:
            k = self.r.choice(["int", "int", "dec", "str", "date", "ts"])
            lhs = self.leaf(k, scope)
            neg = "NOT " if self.chance(0.4) else ""
            self.feat("subquery:" + ("not_in" if neg else "in"))
            return E(f"({lhs.sql} {neg}IN ({self.sub_select(scope, [k], corr)}))", BOOLEAN)
        neg = "NOT " if self.chance(0.4) else ""
        self.feat("subquery:" + ("not_exists" if neg else "exists"))
        return E(f"({neg}EXISTS ({self.sub_select(scope, None, corr or self.chance(0.5), exists=True)}))", BOOLEAN)

    def scalar_subquery(self, kind: str, scope: Scope, corr: bool) -> E:
        self.feat("subquery:scalar")
        if self.chance(0.8) or "t5" not in self.info:
            sql = self.sub_select(scope if corr else Scope([]), [kind], corr, agg_item=True)
            t = self._agg_type_hint
        else:  # one row by construction: the one-row table
            ti = self.info["t5"]
            s = Source(
                self.alias("a"), [(c.name, parse_type(c.type), c.key, c.nosum) for c in ti.columns], 1, base="t5"
            )
            e = self.expr(kind, Scope([s]), 1)
            sql = f"SELECT {e.sql} FROM t5 AS {s.alias}"
            t = e.t
        return E(f"({sql})", t, nosum=True)
