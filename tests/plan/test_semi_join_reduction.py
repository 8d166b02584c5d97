"""Aggregates joined on their GROUP BY keys see only the keys the other side
has (glint.plan.rules.semi_join_reduction): where the rule applies, where it
must not (a preserved aggregate side, FULL joins, NOT IN), and the same rows
as DuckDB's either way, NULL keys included."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from glint.plan import logical as L
from glint.testing.compare import compare_query_result
from tests.registered import rule_connections

N_FACT = 60_000
N_KEYS = 5_000


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(5)
    k = rng.integers(0, N_KEYS, N_FACT)
    k2 = rng.integers(0, 4, N_FACT)
    nulls = rng.random(N_FACT) < 0.01
    few = rng.choice(N_KEYS, 40, replace=False)
    small_k = np.concatenate([few, [N_KEYS + 7]])  # a key no fact row has
    small_nulls = np.zeros(len(small_k), dtype=bool)
    small_nulls[3] = True  # a NULL key on the small side
    return {
        "fact": pa.table(
            {
                "k": pa.array(k, mask=nulls),
                "k2": k2,
                "q": rng.integers(1, 50, N_FACT),
                "p": pa.array(rng.integers(100, 10_000, N_FACT) / 100).cast(pa.decimal128(12, 2)),
            }
        ),
        "small": pa.table(
            {
                "sk": pa.array(small_k, mask=small_nulls),
                "sk2": np.arange(len(small_k)) % 4,
                "tag": np.array([f"t{i % 3}" for i in range(len(small_k))]),
            }
        ),
    }


con, plain, duck = rule_connections("semi_join_reduction")


AGG = "(SELECT k, k2, count(*) AS n, sum(p) AS sp, avg(q) AS aq FROM fact GROUP BY k, k2)"
AGG1 = "(SELECT k, count(*) AS n, sum(p) AS sp, max(q) AS mq FROM fact GROUP BY k)"

REDUCED = {
    # the decorrelated shape of TPC-H Q17: a scalar subquery grouped by its correlation
    "correlated_scalar": (
        "SELECT s.sk, s.tag, (SELECT sum(p) FROM fact WHERE fact.k = s.sk) AS total FROM small s ORDER BY s.sk"
    ),
    "correlated_compare": (
        "SELECT count(*) AS n, sum(f.p) AS s FROM fact f, small s WHERE f.k = s.sk AND s.tag = 't1' "
        "AND f.q < (SELECT 0.5 * avg(q) FROM fact f2 WHERE f2.k = s.sk)"
    ),
    # two correlation columns (TPC-H Q20's shape)
    "two_keys": (
        "SELECT s.sk, s.sk2 FROM small s WHERE s.tag <> 't2' AND 3 < "
        "(SELECT sum(q) FROM fact WHERE fact.k = s.sk AND fact.k2 = s.sk2) ORDER BY 1, 2"
    ),
    "inner_agg_right": f"SELECT s.sk, a.n, a.sp FROM small s JOIN {AGG1} a ON a.k = s.sk ORDER BY 1",
    "inner_agg_left": f"SELECT s.sk, a.n, a.mq FROM {AGG1} a JOIN small s ON s.sk = a.k ORDER BY 1",
    "left_agg_right": f"SELECT s.sk, s.tag, a.n, a.sp FROM small s LEFT JOIN {AGG1} a ON a.k = s.sk ORDER BY 1, 2",
    "having": (
        "SELECT s.sk, a.n FROM small s JOIN (SELECT k, count(*) AS n FROM fact GROUP BY k HAVING count(*) > 12) a "
        "ON a.k = s.sk ORDER BY 1"
    ),
    "semi_agg_left": f"SELECT a.k, a.n FROM {AGG1} a WHERE a.k IN (SELECT sk FROM small) ORDER BY 1",
    "anti_agg_right": (
        "SELECT s.sk FROM small s WHERE NOT EXISTS "
        "(SELECT 1 FROM (SELECT k, count(*) AS n FROM fact GROUP BY k) a WHERE a.k = s.sk AND a.n > 13) ORDER BY 1"
    ),
    "expression_key": f"SELECT s.sk, a.n FROM small s JOIN {AGG1} a ON a.k = s.sk + 1 ORDER BY 1",
    "composite_key": f"SELECT s.sk, a.k2, a.n, a.aq FROM small s JOIN {AGG} a ON a.k = s.sk AND a.k2 = s.sk2 ORDER BY 1",
}

NOT_REDUCED = {
    # every group is in the result: the aggregate's side is preserved
    "left_agg_left": f"SELECT a.k, a.n, s.tag FROM {AGG1} a LEFT JOIN small s ON a.k = s.sk ORDER BY 1, 3",
    "anti_agg_left": f"SELECT a.k, a.n FROM {AGG1} a WHERE a.k NOT IN (SELECT sk FROM small WHERE sk IS NOT NULL) "
    "ORDER BY 1",
    "full": f"SELECT a.k, a.n, s.sk FROM {AGG1} a FULL JOIN small s ON a.k = s.sk ORDER BY 1, 3",
    # NOT IN: a NULL anywhere in the subquery's keys makes every mark NULL
    "not_in": f"SELECT s.sk FROM small s WHERE s.sk NOT IN (SELECT k FROM {AGG1} a WHERE n > 11) ORDER BY 1",
    # a LIMIT's rows may differ from one reading to the next
    "limit_other_side": f"SELECT s.sk, a.n FROM (SELECT sk FROM small ORDER BY sk LIMIT 5) s JOIN {AGG1} a ON a.k = s.sk ORDER BY 1",
    # the other side is as big as the aggregate: reading it twice would not pay
    "big_other_side": f"SELECT count(*) AS c, sum(a.n) AS n FROM fact f JOIN {AGG1} a ON a.k = f.k",
}


def _reductions(plan: L.LogicalNode) -> int:
    """Semi joins under an aggregate (the rule's; the queries have no others there)."""
    found = 0

    def visit(node, under_agg):
        nonlocal found
        if isinstance(node, L.Join) and node.kind == "semi" and under_agg:
            found += 1
        for c in node.children:
            visit(c, under_agg or isinstance(node, L.Aggregate))

    visit(plan, False)
    return found


def _check(con, duck, sql):
    got = con.sql(sql).arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    return got


@pytest.mark.parametrize("name", sorted(REDUCED))
def test_reduced_aggregates_give_duckdbs_rows(con, plain, duck, name):
    sql = REDUCED[name]
    assert _reductions(con.sql(sql).logical) >= 1, con.sql(sql).logical.explain()
    assert _reductions(plain.sql(sql).logical) == 0
    got = _check(con, duck, sql)
    assert got.num_rows > 0
    assert compare_query_result(sql, got, plain.sql(sql).arrow()) == []


@pytest.mark.parametrize("name", sorted(NOT_REDUCED))
def test_preserved_or_large_sides_are_not_reduced(con, duck, name):
    sql = NOT_REDUCED[name]
    assert _reductions(con.sql(sql).logical) == 0, con.sql(sql).logical.explain()
    _check(con, duck, sql)


def test_the_reduction_sits_on_the_scan_above_its_filter(con):
    sql = (
        "SELECT s.sk, (SELECT sum(q) FROM fact WHERE fact.k = s.sk AND fact.q > 20) AS t "
        "FROM small s WHERE s.tag = 't0'"
    )
    text = con.sql(sql).logical.explain()
    semi = next(line for line in text.splitlines() if "Join SEMI" in line)
    below = text.splitlines()[text.splitlines().index(semi) + 1]
    assert below.strip().startswith("Filter") and "q#" in below, text
