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
and of stat_aggregates.py: ARG_MAX / ARG_MIN, FIRST / LAST / ANY_VALUE / MODE,
BIT_*, COUNT_IF, CORR / COVAR_* / REGR_*, SKEWNESS / KURTOSIS, ENTROPY,
PRODUCT; with DISTINCT and FILTER), DISTINCT, ORDER BY with NULLS FIRST/LAST and LIMIT/OFFSET (ordering
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

The class is put together from a mixin per clause: joins (FROM), leaves
(columns and literals), expressions (row expressions), predicates (WHERE, HAVING, subqueries),
aggregates, windows, temporal (DATE / TIMESTAMP) and gen_strings; this
module writes the SELECTs, set operations, CTEs and the ORDER BY.

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
from dataclasses import replace

from glint.testing.fuzz.aggregates import Aggregates
from glint.testing.fuzz.data import FuzzData, TableInfo
from glint.testing.fuzz.expressions import RowExpressions
from glint.testing.fuzz.gen_strings import StringFunctions
from glint.testing.fuzz.grouping import grouping_call, grouping_text
from glint.testing.fuzz.joins import FromClauses
from glint.testing.fuzz.leaves import Leaves
from glint.testing.fuzz.predicates import Predicates
from glint.testing.fuzz.scopes import GeneratedQuery, Scope, Select, Source
from glint.testing.fuzz.sqltypes import BIGINT, KIND_OF, KIND_WEIGHTS, E, T, unify
from glint.testing.fuzz.temporal import TemporalExpressions
from glint.testing.fuzz.windows import Windows

_COLREF = re.compile(r"\b[aqv]\d+\.\w")

CTAS_SHARE = 0.05  # queries glint answers by CREATE TABLE AS and a scan of the table


class QueryGenerator(
    FromClauses, Leaves, RowExpressions, Predicates, Aggregates, Windows, TemporalExpressions, StringFunctions
):
    """``QueryGenerator(info, seed).generate()`` -> a :class:`GeneratedQuery`.

    ``info``: table name -> :class:`~glint.testing.fuzz.data.TableInfo`.
    ``max_depth`` bounds the nesting of subqueries, derived tables and set
    operations; ``max_expr_depth`` the nesting of expressions.
    """

    def __init__(
        self,
        info: dict[str, TableInfo],
        seed: int = 0,
        max_depth: int = 2,
        max_expr_depth: int = 3,
        max_rows_product: int = 40_000,
    ):
        self.info = info
        self.r = random.Random(seed)
        # window items draw from their own stream: the rest of each query stays what it was before them
        self.rw = random.Random(seed ^ 0x5EED)
        # so do grouping sets and the aggregates beyond COUNT / SUM / AVG / MIN / MAX (grouping.py)
        self.rg = random.Random(seed ^ 0x6E75)
        self.ra = random.Random(seed ^ 0xA66)
        # and those of DuckDB's wider set (stat_aggregates.py)
        self.rx = random.Random(seed ^ 0x57A7)
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
            op = self.pick(
                {"UNION": 2, "UNION ALL": 2, "INTERSECT": 1, "INTERSECT ALL": 0.7, "EXCEPT": 1, "EXCEPT ALL": 0.7}
            )
            left = self.select(depth - 1, want, outer)
            want2 = [self._compatible_kind(t) for t in left.types]
            right = self.select(depth - 1, want2, outer)
            self.feat("setop:" + op.split()[0].lower())
            types = [unify(a, b) for a, b in zip(left.types, right.types)]
            return Select(
                f"{left.sql} {op} {right.sql}", types, left.keys, [a or b for a, b in zip(left.nosum, right.nosum)]
            )
        return self.select(depth, want, outer)

    def _compatible_kind(self, t: T) -> str:
        k = KIND_OF.get(t.kind, "int")
        if k in ("int", "dec", "dbl") and self.chance(0.25):
            return self.r.choice(["int", "dec", "dbl"])
        return k

    def select(
        self, depth: int, want: list[str] | None, outer: Scope | None, allow_agg: bool = True, one_row: bool = False
    ) -> Select:
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
                if not _COLREF.search(e.sql):  # a constant would read as an ordinal
                    e = self.column(k, scope) or self.column("int", scope)
                if e is not None and _COLREF.search(e.sql) and not any(g.sql == e.sql for g in group):
                    group.append(e)
        if aggregated:
            self.feat("aggregate")
            scope = Scope(scope.sources, scope.outer, group=[replace(g, gk=True) for g in group])
        sets = grouping_text(self.rg, group) if aggregated and group and self.rg.random() < 0.25 else None
        n = len(want) if want else self.r.choice([1, 1, 2, 2, 3, 4])
        kinds = want or [self.random_kind() for _ in range(n)]
        items = [
            self.expr(k, scope, self.r.choice([1, 2, 2, self.max_expr_depth]), sub=depth > 0, top=True) for k in kinds
        ]
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
            group_all = (
                group
                and self.chance(0.15)
                and all(not (it.agg and it.gk) for it in items)
                and any(it.gk and not it.agg for it in items)
            ) and sets is None
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
        return Select(
            sql, [it.t for it in items], [it.key if it.col else None for it in items], [it.nosum for it in items]
        )


def query_seed(seed: int, i: int) -> int:
    return seed * 1_000_003 + i


def generate_query(data: FuzzData, seed: int, i: int) -> GeneratedQuery:
    """Query ``i`` of the run with ``seed`` (each query has its own generator,
    so that one can be regenerated alone)."""
    return QueryGenerator(data.info, seed=query_seed(seed, i)).generate()
