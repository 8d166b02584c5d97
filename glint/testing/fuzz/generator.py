"""A type-aware random SQL query generator (DuckDB dialect) for differential fuzzing.

It tracks the type of every expression it builds (with DuckDB's typing rules
where they matter: integer literals, DECIMAL precision/scale, ``/`` giving
DOUBLE, ``date ± INTERVAL`` giving TIMESTAMP), so that almost every query it
writes is valid in DuckDB; glint then either answers it, or refuses it.

What it writes: filters (AND/OR/NOT, comparisons with NULLs, IS [NOT] NULL,
[NOT] BETWEEN, [NOT] IN lists, [NOT] [I]LIKE [ESCAPE], IS [NOT] DISTINCT FROM),
joins of every kind (inner, left, right, full, cross, comma, SEMI/ANTI, USING)
on nullable one- and two-column keys with residual conditions, GROUP BY [ALL]
with and without HAVING, ROLLUP / CUBE / GROUPING SETS with GROUPING(),
aggregates (COUNT(*), COUNT, SUM, AVG, MIN, MAX, and those of grouping.py:
VAR_* / STDDEV_*, MEDIAN, QUANTILE_*, BOOL_AND / BOOL_OR, ordered STRING_AGG;
with DISTINCT and FILTER), DISTINCT, ORDER BY with NULLS FIRST/LAST and LIMIT/OFFSET (ordering
by every output column, so that the result is deterministic), subqueries ([NOT]
IN, [NOT] EXISTS, scalar, correlated on equality), UNION/INTERSECT/EXCEPT
[ALL], CASE, COALESCE, NULLIF, CAST, arithmetic (on DECIMALs and integer
extremes, division by zero included), string functions and regular expressions
(glint.testing.fuzz.gen_strings), date ± INTERVAL /
integer, EXTRACT, CTEs and derived tables, VALUES lists in FROM
(glint.testing.fuzz.values), and window functions whose value
does not depend on how ties are broken (RANK, DENSE_RANK, PERCENT_RANK,
CUME_DIST, and COUNT / SUM / AVG / MIN / MAX over the default frame, whose
peers come in whole). Depth is bounded.

>>> from glint.testing.fuzz.data import make_data
>>> info = make_data(0, rows=10).info
>>> q1 = QueryGenerator(info, seed=7).generate(); q2 = QueryGenerator(info, seed=7).generate()
>>> q1.sql == q2.sql
True
>>> import sqlglot; sqlglot.parse_one(q1.sql, read="duckdb") is not None
True
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, replace

from glint.testing.fuzz.data import DATES_EDGE, KEY_STRINGS, STRINGS, TableInfo
from glint.testing.fuzz.sqltypes import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    HUGEINT,
    INTEGER,
    KIND_OF,
    KIND_WEIGHTS,
    TIMESTAMP,
    VARCHAR,
    E,
    T,
    arith_type,
    matches,
    parse_type,
    quote,
    unify,
)
from glint.testing.fuzz.temporal import TemporalExpressions
from glint.testing.fuzz.grouping import aggregate_call, grouping_call, grouping_text, with_filter
from glint.testing.fuzz.gen_strings import StringFunctions

_COLREF = re.compile(r"\b[aqv]\d+\.\w")

VALUES_SHARE = 0.025     # FROM items that are a VALUES list (about one query in nine has one)
CTAS_SHARE = 0.05        # queries glint answers by CREATE TABLE AS and a scan of the table


@dataclass
class Source:
    alias: str
    cols: list[tuple[str, T, str | None, bool]]    # (name, type, key class, nosum)
    rows: int
    base: str | None = None                        # the table name, for base tables

    def columns_of(self, kind: str):
        return [c for c in self.cols if matches(c[1], kind)]


@dataclass
class Scope:
    sources: list[Source]
    outer: "Scope | None" = None
    group: list[E] | None = None     # group keys, when aggregated

    def columns(self, kind: str | None = None):
        out = []
        for s in self.sources:
            for c in s.cols:
                if kind is None or matches(c[1], kind):
                    out.append((s, c))
        return out


@dataclass
class Select:
    sql: str
    types: list[T]
    keys: list[str | None]
    nosum: list[bool]


@dataclass
class GeneratedQuery:
    sql: str
    ordered: bool                      # the outer ORDER BY fixes the row order
    features: set[str] = field(default_factory=set)
    ctas: bool = False                 # glint stores the result in a table and reads it back


class QueryGenerator(TemporalExpressions, StringFunctions):
    """``QueryGenerator(info, seed).generate()`` -> a :class:`GeneratedQuery`.

    ``info``: table name -> :class:`~glint.testing.fuzz.data.TableInfo`.
    ``max_depth`` bounds the nesting of subqueries, derived tables and set
    operations; ``max_expr_depth`` the nesting of expressions.
    """

    def __init__(self, info: dict[str, TableInfo], seed: int = 0, max_depth: int = 2, max_expr_depth: int = 3,
                 max_rows_product: int = 40_000):
        self.info = info
        self.r = random.Random(seed)
        # window items draw from their own stream: the rest of each query stays what it was before them
        self.rw = random.Random(seed ^ 0x5EED)
        # so do grouping sets and the aggregates beyond COUNT / SUM / AVG / MIN / MAX (grouping.py)
        self.rg = random.Random(seed ^ 0x6E75)
        self.ra = random.Random(seed ^ 0xA66)
        # so do VALUES lists in FROM (glint.testing.fuzz.values) and CREATE TABLE AS round trips
        self.rv = random.Random(seed ^ 0x7A1E5)
        self.ctas = random.Random(seed ^ 0xC7A5).random() < CTAS_SHARE
        self.max_depth = max_depth
        self.max_expr_depth = max_expr_depth
        self.max_rows_product = max_rows_product
        self.tables = sorted(info)
        self.n = 0
        self.ctes: list[Source] = []
        self.features: set[str] = set()

    # -------------------------------------------------------------- helpers
    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, weighted: dict):
        keys = list(weighted)
        return self.r.choices(keys, weights=[weighted[k] for k in keys])[0]

    def alias(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def feat(self, name: str) -> None:
        self.features.add(name)

    def random_kind(self) -> str:
        return self.pick(KIND_WEIGHTS)

    # -------------------------------------------------------------- top level
    def generate(self) -> GeneratedQuery:
        self.n = 0
        self.ctes = []
        self.features = set()
        depth = self.max_depth
        with_sql = ""
        if self.chance(0.12):
            parts = []
            for _ in range(self.r.choice([1, 1, 2])):
                sel = self.select(depth - 1, None, None)
                name = self.alias("w")
                cols = [(f"c{i}", t, k, ns) for i, (t, k, ns) in enumerate(zip(sel.types, sel.keys, sel.nosum))]
                parts.append(f"{name} AS ({sel.sql})")
                self.ctes.append(Source(name, cols, 50))
            with_sql = "WITH " + ", ".join(parts) + " "
            self.feat("cte")
        body = self.body(depth, None, None)
        sql = with_sql + body.sql
        ordered = False
        if self.chance(0.45):
            keys = []
            for i in range(len(body.types)):
                k = str(i + 1) if self.chance(0.8) else f"c{i}"
                if self.chance(0.5):
                    k += self.r.choice([" ASC", " DESC"])
                if self.chance(0.5):
                    k += self.r.choice([" NULLS FIRST", " NULLS LAST"])
                keys.append(k)
            order = list(range(len(keys)))
            self.r.shuffle(order)
            sql += " ORDER BY " + ", ".join(keys[i] for i in order)
            ordered = True
            self.feat("order_by")
            if self.chance(0.5):
                sql += f" LIMIT {self.r.choice([0, 1, 2, 3, 5, 10, 50])}"
                self.feat("limit")
                if self.chance(0.4):
                    sql += f" OFFSET {self.r.choice([0, 1, 3, 20])}"
                    self.feat("offset")
        if self.ctas:
            self.feat("ctas")
        return GeneratedQuery(sql, ordered, set(self.features), self.ctas)

    def body(self, depth: int, want: list[str] | None, outer: Scope | None) -> Select:
        """A SELECT, or a set operation of two."""
        if depth > 0 and self.chance(0.12):
            op = self.pick({"UNION": 2, "UNION ALL": 2, "INTERSECT": 1, "INTERSECT ALL": 0.7, "EXCEPT": 1,
                            "EXCEPT ALL": 0.7})
            left = self.select(depth - 1, want, outer)
            want2 = [self._compatible_kind(t) for t in left.types]
            right = self.select(depth - 1, want2, outer)
            self.feat("setop:" + op.split()[0].lower())
            types = [unify(a, b) for a, b in zip(left.types, right.types)]
            return Select(f"{left.sql} {op} {right.sql}", types, left.keys,
                          [a or b for a, b in zip(left.nosum, right.nosum)])
        return self.select(depth, want, outer)

    def _compatible_kind(self, t: T) -> str:
        k = KIND_OF.get(t.kind, "int")
        if k in ("int", "dec", "dbl") and self.chance(0.25):
            return self.r.choice(["int", "dec", "dbl"])
        return k

    # -------------------------------------------------------------- SELECT
    def select(self, depth: int, want: list[str] | None, outer: Scope | None, allow_agg: bool = True,
               one_row: bool = False) -> Select:
        scope, from_sql, conds = self.from_clause(depth, outer)
        where = list(conds)
        if self.chance(0.6):
            where.append(self.expr("bool", scope, self.r.choice([1, 2, self.max_expr_depth]), sub=depth > 0).sql)
        aggregated = allow_agg and (one_row or self.chance(0.33))
        group: list[E] = []
        if aggregated and not one_row and self.chance(0.75):
            for _ in range(self.r.choice([1, 1, 2, 3])):
                k = self.random_kind()
                e = self.expr(k, scope, 1 if self.chance(0.7) else 2, sub=False)
                if not _COLREF.search(e.sql):     # a constant would read as an ordinal
                    e = self.column(k, scope) or self.column("int", scope)
                if e is not None and _COLREF.search(e.sql) and not any(g.sql == e.sql for g in group):
                    group.append(e)
        if aggregated:
            self.feat("aggregate")
            scope = Scope(scope.sources, scope.outer, group=[replace(g, gk=True) for g in group])
        sets = grouping_text(self.rg, group) if aggregated and group and self.rg.random() < 0.25 else None
        n = len(want) if want else self.r.choice([1, 1, 2, 2, 3, 4])
        kinds = want or [self.random_kind() for _ in range(n)]
        items = [self.expr(k, scope, self.r.choice([1, 2, 2, self.max_expr_depth]), sub=depth > 0, top=True)
                 for k in kinds]
        if not aggregated and outer is None and self.rw.random() < 0.15:
            i = self.rw.randrange(len(items))
            items[i] = self.window_item(kinds[i], scope) or items[i]
        if aggregated and not group and not one_row and any(it.gk for it in items):
            raise AssertionError("group key without GROUP BY")
        if sets is not None and want is None and self.rg.random() < 0.6:
            items.append(E(grouping_call(self.rg, group), BIGINT, gk=True))
            self.feat("grouping")
        distinct = not one_row and self.chance(0.1)
        sql = "SELECT " + ("DISTINCT " if distinct else "")
        if distinct:
            self.feat("distinct")
        sql += ", ".join(f"{it.sql} AS c{i}" for i, it in enumerate(items))
        sql += " FROM " + from_sql
        if where:
            sql += " WHERE " + " AND ".join(f"({w})" if len(where) > 1 else w for w in where)
        if aggregated:
            group_all = (group and self.chance(0.15) and all(not (it.agg and it.gk) for it in items)
                         and any(it.gk and not it.agg for it in items)) and sets is None
            if sets is not None:
                sql += " GROUP BY " + sets
                self.feat("grouping_sets")
            elif group_all:
                sql += " GROUP BY ALL"
                self.feat("group_by_all")
            elif group:
                sql += " GROUP BY " + ", ".join(g.sql for g in group)
                self.feat("group_by")
            if self.chance(0.35) and not group_all:
                sql += " HAVING " + self.expr("bool", scope, 2, sub=depth > 0).sql
                self.feat("having")
        return Select(sql, [it.t for it in items], [it.key if it.col else None for it in items],
                      [it.nosum for it in items])

    # -------------------------------------------------------------- FROM
    def base_source(self, max_rows: int | None = None) -> Source:
        names = [t for t in self.tables if max_rows is None or self.info[t].rows <= max_rows] or \
            sorted(self.tables, key=lambda t: self.info[t].rows)[:1]
        # the fuzzing tables (t*) are the interesting ones; TPC-H tables now and then
        weights = [1.0 if n.startswith("t") and n[1:].isdigit() else 0.25 for n in names]
        name = self.r.choices(names, weights=weights)[0]
        ti = self.info[name]
        cols = [(c.name, parse_type(c.type), c.key, c.nosum) for c in ti.columns]
        return Source(self.alias("a"), cols, ti.rows, base=name)

    def source(self, depth: int, max_rows: int | None = None) -> tuple[Source, str]:
        if self.rv.random() < VALUES_SHARE:
            from glint.testing.fuzz.values import values_source
            self.feat("values")
            return values_source(self.rv, self.alias("v"))
        x = self.r.random()
        if self.ctes and x < 0.25:
            c = self.r.choice(self.ctes)
            s = Source(self.alias("a"), c.cols, c.rows)
            return s, f"{c.alias} AS {s.alias}"
        if depth > 0 and x < 0.3:
            sel = self.body(depth - 1, None, None)
            sql = sel.sql
            if self.chance(0.2):   # a deterministic ORDER BY ... LIMIT inside
                sql += " ORDER BY " + ", ".join(str(i + 1) for i in range(len(sel.types)))
                sql += f" LIMIT {self.r.choice([1, 3, 10])}"
                self.feat("derived_limit")
            a = self.alias("q")
            cols = [(f"c{i}", t, k, ns) for i, (t, k, ns) in enumerate(zip(sel.types, sel.keys, sel.nosum))]
            self.feat("derived_table")
            return Source(a, cols, 50), f"({sql}) AS {a}"
        s = self.base_source(max_rows)
        return s, f"{s.base} AS {s.alias}"

    def key_pairs(self, left: list[Source], right: Source) -> list[tuple[str, str]]:
        pairs = []
        for ls in left:
            for lc in ls.cols:
                for rc in right.cols:
                    if lc[2] and lc[2] == rc[2]:
                        pairs.append((f"{ls.alias}.{lc[0]}", f"{right.alias}.{rc[0]}"))
        return pairs

    def same_kind_pairs(self, left: list[Source], right: Source) -> list[tuple[str, str]]:
        pairs = []
        for ls in left:
            for lc in ls.cols:
                for rc in right.cols:
                    if lc[1].family == rc[1].family and lc[1].family != "BOOLEAN":
                        pairs.append((f"{ls.alias}.{lc[0]}", f"{right.alias}.{rc[0]}"))
        return pairs

    def from_clause(self, depth: int, outer: Scope | None) -> tuple[Scope, str, list[str]]:
        n = self.pick({1: 45, 2: 40, 3: 15})
        first, sql = self.source(depth)
        visible = [first]
        conds: list[str] = []
        product = max(1, first.rows)      # a bound on the rows of the join so far
        for _ in range(n - 1):
            src, ssql = self.source(depth)
            pairs = self.key_pairs(visible, src)
            if not pairs and product * max(1, src.rows) > self.max_rows_product:
                src, ssql = self.source(0, max_rows=max(1, self.max_rows_product // product))
                pairs = self.key_pairs(visible, src)
            equi = bool(pairs)
            if not pairs:
                pairs = self.same_kind_pairs(visible, src)
            kind = self.pick({"JOIN": 30, "LEFT JOIN": 18, "RIGHT JOIN": 10, "FULL JOIN": 10, "CROSS JOIN": 5,
                              ",": 8, "SEMI JOIN": 3, "ANTI JOIN": 3, "USING": 5})
            small = product * max(1, src.rows) <= self.max_rows_product
            if kind in ("CROSS JOIN", ",") and not small:
                kind = "JOIN"
            if not pairs and not small:
                # nothing to join on and too big for a nested loop: leave this source out
                continue
            if kind == "USING":
                common = [c[0] for c in src.cols if c[2] and any(
                    c[0] == vc[0] and c[2] == vc[2] for v in visible for vc in v.cols)]
                # USING needs the name to be unambiguous on the left
                common = [c for c in common if sum(c == vc[0] for v in visible for vc in v.cols) == 1]
                if not common:
                    kind = "JOIN"
                else:
                    self.r.shuffle(common)
                    cols = common[:self.r.choice([1, 1, 2])]
                    jt = self.pick({"JOIN": 3, "LEFT JOIN": 2, "RIGHT JOIN": 1, "FULL JOIN": 1})
                    sql += f" {jt} {ssql} USING ({', '.join(cols)})"
                    self.feat("join:using")
                    visible.append(src)
                    product = max(product, src.rows) * 4
                    continue
            self.feat("join:" + kind.split()[0].lower().replace(",", "comma"))
            scope = Scope(visible + [src], outer)
            if kind == "CROSS JOIN":
                sql += f" CROSS JOIN {ssql}"
            elif kind == ",":
                sql += f", {ssql}"
                if pairs and (self.chance(0.8) or not small):
                    conds.append(self.join_condition(pairs, scope, equi or not small))
                    self.feat("join:comma_where")
            else:
                if pairs and (equi or not small or self.chance(0.7)):
                    on = self.join_condition(pairs, scope, small)
                else:
                    on = self.expr("bool", scope, 2, sub=False).sql
                    self.feat("join:nonequi")
                sql += f" {kind} {ssql} ON {on}"
            if kind in ("SEMI JOIN", "ANTI JOIN"):
                continue      # the right side is not visible afterwards
            visible.append(src)
            product = product * max(1, src.rows) if small else max(product, src.rows) * 4
        return Scope(visible, outer), sql, conds

    def join_condition(self, pairs: list[tuple[str, str]], scope: Scope, extra_ok: bool = True) -> str:
        self.r.shuffle(pairs)
        k = 1 if len(pairs) == 1 or self.chance(0.6) else 2
        parts = []
        for lhs, rhs in pairs[:k]:
            if self.chance(0.08):
                parts.append(f"{lhs} IS NOT DISTINCT FROM {rhs}")
            else:
                parts.append(f"{lhs} = {rhs}")
        if k == 2:
            self.feat("join:multikey")
        if self.chance(0.25):
            parts.append(self.expr("bool", scope, 1, sub=False).sql)
            self.feat("join:residual")
        cond = " AND ".join(parts)
        if extra_ok and self.chance(0.05):
            cond = f"({cond}) OR {self.expr('bool', scope, 1, sub=False).sql}"
            self.feat("join:or")
        return cond

    # -------------------------------------------------------------- expressions
    def expr(self, kind: str, scope: Scope, d: int, sub: bool = False, top: bool = False) -> E:
        """An expression of ``kind`` over ``scope``. In an aggregated scope
        (``scope.group`` not None) columns appear only as group keys or inside
        aggregates."""
        agg_mode = scope.group is not None
        if agg_mode:
            return self.agg_expr(kind, scope, d, sub)
        return self.row_expr(kind, scope, d, sub)

    # leaves ------------------------------------------------------------
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
            t = {"int": INTEGER, "dec": T("DECIMAL", 15, 2), "dbl": DOUBLE, "str": VARCHAR, "date": DATE,
                 "bool": BOOLEAN}[kind]
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
            v = r.choice([2147483648, 3000000000, 9223372036854775807, -9223372036854775807, 10 ** 15])
            return E(str(v) if v > 0 else f"({v})", BIGINT)
        if kind == "dec":
            x = r.random()
            if x < 0.2:
                return E("9999999999999999.99", T("DECIMAL", 18, 2))
            if x < 0.3:
                return E("CAST(-999.9 AS DECIMAL(4,1))", T("DECIMAL", 4, 1))
            scale = r.choice([1, 2, 2, 3])
            ip = r.randint(0, 999)
            frac = r.randint(0, 10 ** scale - 1)
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
                import datetime as _dt
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
        if scope.outer is not None and self.chance(0.05):   # a stray outer reference
            c = self.column(kind, Scope(scope.outer.sources))
            if c is not None:
                self.feat("outer_ref")
                return c
        return self.literal(kind)

    # row expressions ---------------------------------------------------
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
                return E(f"CASE WHEN {cond.sql} THEN {a.sql} END", a.t, nosum=a.nosum, agg=cond.agg or a.agg,
                         gk=cond.gk or a.gk)
            return E(f"CASE WHEN {cond.sql} THEN {a.sql} ELSE {b.sql} END", unify(a.t, b.t),
                     nosum=a.nosum or b.nosum, agg=a.agg or b.agg or cond.agg, gk=a.gk or b.gk or cond.gk)
        if x < 0.10 and kind not in ("bool",):
            op = self.sub_e(kind, scope, d, sub)
            v1, v2 = self.literal(kind), self.sub_e(kind, scope, d, sub)
            self.feat("case")
            return E(f"CASE {op.sql} WHEN {v1.sql} THEN {v2.sql} ELSE {op.sql} END", unify(op.t, v2.t),
                     nosum=op.nosum or v2.nosum, agg=op.agg or v2.agg, gk=op.gk or v2.gk)
        if x < 0.16:
            args = [self.sub_e(kind, scope, d, sub) for _ in range(self.r.choice([2, 2, 3]))]
            if self.chance(0.5):
                args.append(self.literal(kind))
            t = args[0].t
            for a in args[1:]:
                t = unify(t, a.t)
            self.feat("coalesce")
            return E(f"COALESCE({', '.join(a.sql for a in args)})", t, nosum=any(a.nosum for a in args),
                     agg=any(a.agg for a in args), gk=any(a.gk for a in args))
        if x < 0.19:
            a, b = self.sub_e(kind, scope, d, sub), self.sub_e(kind, scope, d, sub)
            self.feat("nullif")
            return E(f"NULLIF({a.sql}, {b.sql})", a.t if a.t.kind != "NULL" else b.t, nosum=a.nosum,
                     agg=a.agg or b.agg, gk=a.gk or b.gk)
        return None

    @staticmethod
    def _m(sql: str, t: T, *parts: E, nosum: bool = False) -> E:
        return E(sql, t, nosum=nosum or any(p.nosum for p in parts), agg=any(p.agg for p in parts),
                 gk=any(p.gk for p in parts))

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
            field_ = self.r.choice(["year", "month", "day", "quarter", "dow", "doy", "week", "isodow",
                                    "dayofweek", "dayofyear", "yearweek", "decade", "century"])
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
        return self.leaf("int", scope)

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
        return self.leaf("dec", scope)

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
        return self.leaf("dbl", scope)

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
            pat = self.r.choice(["'%'", "'a%'", "'%a%'", "'%b'", "'_'", "'a_c'", "'%\\%%'", "'%\\_%'", "''",
                                 "'ABC'", "'%ü%'", "'__%'", "'%.%'", "'x%'", "'%' || 'a'"])
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
        k = self.pick({"int": 3, "dec": 2, "dbl": 1, "str": 2, "date": 1, "ts": 1, "time": 1,
                       "bool": 0.3 if d > 0 else 0, "mixnum": 1})
        if k == "time":
            return self.time_comparison(scope, d, sub)
        if k == "mixnum":
            a = self.num_operand(scope, d, sub)
            b = self.num_operand(scope, d, sub)
        else:
            a, b = self.sub_e(k, scope, d, sub), self.sub_e(k, scope, d, sub)
        op = self.r.choice(["=", "<>", "<", "<=", ">", ">=", "!="])
        return self._m(f"({a.sql} {op} {b.sql})", BOOLEAN, a, b)

    # subqueries --------------------------------------------------------
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
        return " AND ".join(pairs[:1 if self.chance(0.8) else 2])

    def sub_select(self, scope: Scope, want: list[str] | None, correlated: bool, agg_item: bool = False,
                   exists: bool = False) -> str:
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
        else:   # one row by construction: the one-row table
            ti = self.info["t5"]
            s = Source(self.alias("a"), [(c.name, parse_type(c.type), c.key, c.nosum) for c in ti.columns], 1,
                       base="t5")
            e = self.expr(kind, Scope([s]), 1)
            sql = f"SELECT {e.sql} FROM t5 AS {s.alias}"
            t = e.t
        return E(f"({sql})", t, nosum=True)

    _agg_type_hint: T = BIGINT

    # aggregated expressions -------------------------------------------
    def agg_call(self, kind: str, scope: Scope, d: int) -> E:
        """An aggregate of ``kind``'s type; its argument is a row expression."""
        row = Scope(scope.sources, scope.outer)
        distinct = "DISTINCT " if self.chance(0.15) else ""
        if distinct:
            self.feat("agg:distinct")
        arg_d = max(0, min(d, 2))
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

    # -------------------------------------------------------------- windows
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
                keys.append(col().sql + rw.choice(["", " ASC", " DESC"]) + rw.choice(["", " NULLS FIRST", " NULLS LAST"]))
            over.append("ORDER BY " + ", ".join(keys))
        elif rw.random() < 0.5 and (scope.columns("ts") or scope.columns("date")):
            # RANGE frames by INTERVALs over one DATE / TIMESTAMP key (the frame takes whole peer groups)
            key = col(rw.choice(["ts", "ts", "date"])) or col("ts") or col("date")
            over.append(f"ORDER BY {key.sql}{rw.choice(['', ' DESC'])}{rw.choice(['', ' NULLS FIRST'])}")
            frame = self.range_frame(key.t)
            self.feat("window:range_interval")
        spec = " OVER (" + " ".join(over) + frame + ")"
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
