"""Aggregates over a join computed in part before it
(glint.plan.rules.aggregate_below_joins): where the rule applies, where it
must not, and the same rows as DuckDB's and as the plan without the rule
either way: NULL keys and values, keys one side lacks, duplicate keys on both
sides, LEFT joins' unmatched rows, FILTER clauses."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from glint.plan import logical as L
from glint.testing.compare import compare_query_result
from tests.registered import rule_connections

N_FACT = 60_000


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(11)
    dk = np.concatenate([np.arange(1000), np.arange(0, 1000, 10), [5000, 5001]])  # duplicates, keys fact lacks
    dk_nulls = np.zeros(len(dk), dtype=bool)
    dk_nulls[-1] = True  # a NULL key
    k = rng.integers(0, 1200, N_FACT)  # keys dim lacks too
    return {
        "dim": pa.table(
            {
                "dk": pa.array(dk, mask=dk_nulls),
                "dk2": dk % 3,
                "tag": np.array([f"t{i % 5}" for i in range(len(dk))]),
                "w": rng.integers(0, 100, len(dk)),
            }
        ),
        "fact": pa.table(
            {
                "k": pa.array(k, mask=rng.random(N_FACT) < 0.01),
                "k2": rng.integers(0, 4, N_FACT),
                "kk": k % 3,
                "q": pa.array(rng.integers(1, 50, N_FACT), mask=rng.random(N_FACT) < 0.05),
                "p": pa.array(rng.integers(100, 10_000, N_FACT) / 100).cast(pa.decimal128(12, 2)),
                "x": pa.array(rng.random(N_FACT), mask=rng.random(N_FACT) < 0.05),
            }
        ),
    }


con, plain, duck = rule_connections("aggregate_below_joins")


APPLIED = {
    # TPC-H Q13's shape
    "left_count_then_histogram": (
        "SELECT c, count(*) AS n FROM (SELECT d.dk, count(f.q) AS c FROM dim d LEFT JOIN fact f ON d.dk = f.k "
        "GROUP BY d.dk) t GROUP BY c ORDER BY 2 DESC, 1 DESC"
    ),
    "left_every_aggregate": (
        "SELECT d.dk, count(*) AS n, count(f.q) AS c, sum(f.p) AS s, sum(f.q) AS sq, min(f.q) AS lo, "
        "max(f.x) AS hi FROM dim d LEFT JOIN fact f ON f.k = d.dk GROUP BY d.dk ORDER BY 1"
    ),
    "inner_grouped_by_the_other_sides_column": (
        "SELECT d.tag, count(*) AS n, sum(f.q) AS s, sum(f.x) AS sx, min(f.p) AS lo "
        "FROM dim d JOIN fact f ON f.k = d.dk GROUP BY d.tag ORDER BY 1"
    ),
    "inner_grouped_side_on_the_left_with_filters": (
        "SELECT d.dk, count(*) FILTER (WHERE f.q > 10) AS n, sum(f.p) FILTER (WHERE f.q < 5) AS s "
        "FROM fact f JOIN dim d ON d.dk = f.k GROUP BY d.dk ORDER BY 1"
    ),
    "grouped_sides_own_key": (
        "SELECT d.tag, f.k2, count(f.q) AS c, max(f.p) AS hi FROM dim d JOIN fact f ON f.k = d.dk "
        "GROUP BY d.tag, f.k2 ORDER BY 1, 2"
    ),
    "two_key_columns": (
        "SELECT d.dk, d.dk2, count(*) AS n, sum(f.q) AS s FROM dim d LEFT JOIN fact f ON f.k = d.dk AND f.kk = d.dk2 "
        "GROUP BY d.dk, d.dk2 ORDER BY 1, 2"
    ),
    "no_group_by": "SELECT count(*) AS n, count(f.q) AS c, sum(f.p) AS s FROM dim d JOIN fact f ON f.k = d.dk",
}

NOT_APPLIED = {
    "other_side_filtered": (
        "SELECT d.dk, count(*) AS n FROM dim d JOIN fact f ON f.k = d.dk WHERE d.tag = 't1' GROUP BY d.dk ORDER BY 1"
    ),
    "distinct": "SELECT d.dk, count(DISTINCT f.q) AS n FROM dim d JOIN fact f ON f.k = d.dk GROUP BY d.dk ORDER BY 1",
    "reads_both_sides": "SELECT d.dk, sum(f.q * d.w) AS s FROM dim d JOIN fact f ON f.k = d.dk GROUP BY d.dk ORDER BY 1",
    "avg": "SELECT d.dk, avg(f.q) AS a FROM dim d JOIN fact f ON f.k = d.dk GROUP BY d.dk ORDER BY 1",
    "left_join_with_filter": (
        "SELECT d.dk, count(*) FILTER (WHERE f.q IS NULL) AS n FROM dim d LEFT JOIN fact f ON f.k = d.dk "
        "GROUP BY d.dk ORDER BY 1"
    ),
    "not_an_equality": (
        "SELECT d.dk, count(*) AS n FROM dim d JOIN fact f ON f.k = d.dk AND f.q > d.w GROUP BY d.dk ORDER BY 1"
    ),
    "preserved_side_grouped": "SELECT f.k, count(d.w) AS n FROM fact f LEFT JOIN dim d ON f.k = d.dk GROUP BY f.k ORDER BY 1",
}


def _below(plan: L.LogicalNode) -> int:
    """Aggregates right under a join that is under an aggregate (the rule's)."""
    found = 0

    def visit(node, under_agg):
        nonlocal found
        if isinstance(node, L.Join) and under_agg:
            found += sum(isinstance(c, L.Aggregate) for c in node.children)
        for c in node.children:
            visit(c, isinstance(node, L.Aggregate) or (under_agg and not isinstance(node, L.Join)))

    visit(plan, False)
    return found


def _check(con, duck, sql):
    got = con.sql(sql).arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    return got


@pytest.mark.parametrize("name", sorted(APPLIED))
def test_aggregated_before_the_join_gives_duckdbs_rows(con, plain, duck, name):
    sql = APPLIED[name]
    assert _below(con.sql(sql).logical) == 1, con.sql(sql).logical.explain()
    assert _below(plain.sql(sql).logical) == 0
    got = _check(con, duck, sql)
    assert got.num_rows > 0
    assert compare_query_result(sql, got, plain.sql(sql).arrow()) == []


@pytest.mark.parametrize("name", sorted(NOT_APPLIED))
def test_not_applied(con, duck, name):
    sql = NOT_APPLIED[name]
    assert _below(con.sql(sql).logical) == 0, con.sql(sql).logical.explain()
    _check(con, duck, sql)


def test_a_left_joins_unmatched_rows_count_once(con, duck):
    """dim's keys that fact lacks (and its NULL key) keep one row each: count(*) 1, count(q) 0, sums NULL."""
    sql = (
        "SELECT d.dk, count(*) AS n, count(f.q) AS c, sum(f.p) AS s FROM dim d LEFT JOIN fact f ON f.k = d.dk "
        "WHERE d.dk IS NULL OR d.dk >= 5000 GROUP BY d.dk ORDER BY 1"
    )
    rows = _check(
        con,
        duck,
        "SELECT * FROM (" + sql.replace(" WHERE d.dk IS NULL OR d.dk >= 5000", "") + ") t "
        "WHERE dk IS NULL OR dk >= 5000 ORDER BY 1",
    ).to_pylist()
    assert rows == [{"dk": 5000, "n": 1, "c": 0, "s": None}, {"dk": None, "n": 1, "c": 0, "s": None}]


def _random_queries(n: int, seed: int) -> list[str]:
    """Aggregates over dim JOIN fact of random shapes: the join kind, the
    sides' order, one or two key columns, GROUP BY keys of either side (or
    none), and COUNT / SUM / MIN / MAX of fact's columns."""
    import random

    rng = random.Random(seed)
    aggs = ["count(*)", "count(f.q)", "count(f.x)", "sum(f.q)", "sum(f.p)", "sum(f.x)", "min(f.p)", "max(f.q)"]
    aggs += ["min(f.k2)", "max(f.x)", "count(f.k)"]
    out = []
    for _ in range(n):
        kind = rng.choice(["JOIN", "LEFT JOIN"])
        on = "f.k = d.dk" + (" AND f.kk = d.dk2" if rng.random() < 0.3 else "")
        frm = (
            f"dim d {kind} fact f ON {on}"
            if kind == "LEFT JOIN" or rng.random() < 0.5
            else f"fact f JOIN dim d ON {on}"
        )
        keys = rng.sample(["d.dk", "d.tag", "d.dk2", "f.k2", "f.k"], rng.randint(0, 2))
        picked = rng.sample(aggs, rng.randint(1, 4))
        select = ", ".join(keys + [f"{a} AS a{i}" for i, a in enumerate(picked)])
        group = f" GROUP BY {', '.join(keys)}" if keys else ""
        order = f" ORDER BY {', '.join(str(i + 1) for i in range(len(keys)))}" if keys else ""
        out.append(f"SELECT {select} FROM {frm}{group}{order}")
    return out


def test_random_shapes_give_duckdbs_rows(con, plain, duck):
    """40 random aggregates over the join: the same rows as DuckDB and as the
    plan without the rule, and the rule taken by most of them."""
    applied = 0
    for sql in _random_queries(40, seed=3):
        applied += _below(con.sql(sql).logical)
        got = _check(con, duck, sql)
        assert compare_query_result(sql, got, plain.sql(sql).arrow()) == [], sql
    assert applied >= 20
