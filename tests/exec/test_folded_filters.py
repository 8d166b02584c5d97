"""A filter folded into the aggregation above it (HashAggregateExec.where):
the plan, and the same rows as DuckDB's whether the WHERE's mask goes into
the fused pass (the GPU's way, taken here on the CPU too) or the rows are
filtered first: groups every row of which the WHERE rejects, NULLs, a
global aggregate over no rows, FILTER clauses, aggregates the fused pass does
not take, and an expression that overflows only on rejected rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.exec import aggregate as A
from glint.exec import physical_planner as P
from glint.testing.compare import compare_query_result
from tests.registered import duckdb_with, glint_with, spy_on

N = 30_000


@pytest.fixture(scope="module")
def table() -> pa.Table:
    rng = np.random.default_rng(3)
    g = rng.integers(0, 6, N)
    x = rng.integers(-1000, 1000, N)
    big = np.where(g == 5, 5_000_000_000_000_000_000, x)  # overflows when doubled: group 5 only
    return pa.table(
        {
            "g": g,
            "s": pa.array(np.array(["a", "b", "c"])[rng.integers(0, 3, N)]),
            "x": pa.array(x, mask=rng.random(N) < 0.05),
            "d": pa.array(rng.integers(0, 100_000, N) / 100).cast(pa.decimal128(12, 2)),
            "f": rng.random(N),
            "big": big,
        }
    )


@pytest.fixture(params=["masked", "filtered"])
def con(request, device, table, monkeypatch):
    masked = []  # whether each chunk's states came from the masked pass
    monkeypatch.setattr(P, "FOLD_MIN_KEPT", 0.0)  # every WHERE folds, however few rows it keeps
    if request.param == "masked":
        monkeypatch.setattr(A, "FOLD_DEVICES", ("cpu", "cuda"))
        masked = spy_on(monkeypatch, A._PartialFinal, "_masked_partial", lambda out: out is not None)
    c = glint_with({"t": table}, device)
    c.masked_chunks = masked
    yield c
    c.close()


@pytest.fixture(scope="module")
def duck(table):
    d = duckdb_with({"t": table})
    yield d
    d.close()


QUERIES = {
    "few_groups": "SELECT g, s, count(*) AS n, sum(x) AS sx, avg(d) AS ad, sum(f) AS sf FROM t WHERE x > 0 GROUP BY g, s",
    "rejected_groups": "SELECT g, count(*) AS n, sum(d) AS sd FROM t WHERE g IN (1, 3) AND d < 500 GROUP BY g",
    "no_rows": "SELECT count(*) AS n, sum(x) AS sx, avg(f) AS af, count(x) AS cx FROM t WHERE x > 5000",
    "global": "SELECT count(*) AS n, sum(d * 2) AS sd, avg(x) AS ax FROM t WHERE f < 0.3",
    "agg_filter": "SELECT g, count(*) FILTER (WHERE x < 0) AS neg, sum(d) FILTER (WHERE f > 0.5) AS sd FROM t WHERE g <> 2 GROUP BY g",
    "null_where": "SELECT s, count(*) AS n, sum(d) AS sd FROM t WHERE x IS NULL OR x < -900 GROUP BY s",
    "min_max": "SELECT g, min(x) AS lo, max(d) AS hi, sum(x) AS sx FROM t WHERE f > 0.25 GROUP BY g",
    "many_groups": "SELECT x, count(*) AS n, sum(d) AS sd FROM t WHERE f < 0.5 GROUP BY x",
    "overflow_rejected": "SELECT g, sum(big * 2) AS s2 FROM t WHERE g < 5 GROUP BY g",
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_folded_filters_give_duckdbs_rows(con, duck, name):
    sql = QUERIES[name]
    plan = con.sql("EXPLAIN " + sql).arrow().column(0)[0].as_py()
    assert "Filter" not in plan.split("Physical plan")[-1] and " where " in plan, plan
    got = con.sql(sql).arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    if con.masked_chunks:
        # every aggregate fused (and within its group limits): no chunk was compacted
        assert all(con.masked_chunks) == (name in MASKED), con.masked_chunks


MASKED = {"few_groups", "rejected_groups", "no_rows", "global", "agg_filter", "null_where"}


def test_overflow_on_kept_rows_still_raises(con):
    with pytest.raises(glint.GlintError, match="(?i)overflow"):
        con.sql("SELECT sum(big * 2) FROM t WHERE g >= 4").arrow()


def test_a_selective_where_stays_a_filter(device, table, duck, monkeypatch):
    """A WHERE estimated to keep few rows stays a Filter (gathering few rows
    costs less than the arguments over all of them); one that keeps most
    folds, and its mask goes into the pass."""
    monkeypatch.setattr(A, "FOLD_DEVICES", ("cpu", "cuda"))
    c = glint_with({"t": table}, device)
    for sql, folded in (
        ("SELECT g, sum(d) AS s, count(*) AS n FROM t WHERE f < 0.1 GROUP BY g", False),
        ("SELECT g, sum(d) AS s, count(*) AS n FROM t WHERE f < 0.9 GROUP BY g", True),
    ):
        plan = c.sql("EXPLAIN " + sql).arrow().column(0)[0].as_py().split("Physical plan")[-1]
        assert ("Filter" not in plan) == folded, plan
        got = c.sql(sql).arrow()
        assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    c.close()
