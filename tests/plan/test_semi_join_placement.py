"""Where join ordering places SEMI and ANTI joins (EXISTS, IN, NOT EXISTS, NOT
IN decorrelated onto one input): on their input when they are the selective
part of the query, after the inner joins when those are (TPC-H Q21's shape),
and the same rows as DuckDB's either way, NULLs of NOT IN included."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.plan import logical as L
from glint.testing.compare import compare_query_result
from tests.plan.plan_nodes import nodes_of

N_FACT = 40_000


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(11)
    k = np.arange(N_FACT)
    ev_k = rng.integers(0, N_FACT, 4 * N_FACT)
    ev_v = rng.integers(0, 100, 4 * N_FACT)
    nulls = np.array([i % 997 == 0 for i in range(4 * N_FACT)])
    return {
        "f": pa.table({"k": k, "d": k % 1000, "x": rng.integers(0, 100, N_FACT)}),
        "dim": pa.table({"d": np.arange(1000), "r": np.arange(1000) % 50}),
        "reg": pa.table({"r": np.arange(50), "name": np.array([f"r{i}" for i in range(50)])}),
        "ev": pa.table({"k": ev_k, "v": ev_v}),
        # a key column with NULLs: NOT IN over it keeps no row
        "evn": pa.table({"k": pa.array(ev_k, mask=nulls), "v": ev_v}),
    }


DIMENSIONS = "FROM f JOIN dim ON f.d = dim.d JOIN reg ON dim.r = reg.r "

# the dimensions keep 1 row in 50; EXISTS / NOT EXISTS keep most rows
HOISTED = (
    "SELECT count(*) AS n, sum(f.x) AS s " + DIMENSIONS + "WHERE reg.name = 'r7' "
    "AND EXISTS (SELECT 1 FROM ev WHERE ev.k = f.k AND ev.v <> f.x) "
    "AND NOT EXISTS (SELECT 1 FROM ev e2 WHERE e2.k = f.k AND e2.v > 97)"
)
# the IN keeps a few rows, the dimensions all of them
KEPT_BELOW = (
    "SELECT count(*) AS n, sum(f.x) AS s " + DIMENSIONS + "WHERE f.k IN (SELECT k FROM ev WHERE v = 3 AND k < 400)"
)
NOT_IN_WITH_NULLS = (
    "SELECT count(*) AS n " + DIMENSIONS + "WHERE reg.name = 'r7' AND f.k NOT IN (SELECT k FROM evn WHERE v > 2)"
)
NOT_IN = (
    "SELECT count(*) AS n, min(f.k) AS lo " + DIMENSIONS + "WHERE reg.name = 'r7' "
    "AND f.k NOT IN (SELECT k FROM ev WHERE v > 2)"
)


def _semi_joins_above_inner_joins(plan: L.LogicalNode) -> tuple[int, int]:
    """(semi / anti joins with an inner join below them on the left,
    semi / anti joins in all)."""

    def has_inner(node) -> bool:
        if isinstance(node, L.Join) and node.kind == "inner":
            return True
        return any(has_inner(c) for c in node.children)

    above = total = 0
    stack = [plan]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if isinstance(node, L.Join) and node.kind in ("semi", "anti"):
            total += 1
            above += has_inner(node.left)
    return above, total


def _check(con, duck, sql):
    got = con.sql(sql).arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []
    return got


def test_semi_and_anti_joins_go_after_selective_inner_joins(con, duck):
    plan = con.sql(HOISTED).logical
    assert _semi_joins_above_inner_joins(plan) == (2, 2), plan.explain()
    got = _check(con, duck, HOISTED)
    assert got.column("n")[0].as_py() > 0


def test_a_selective_semi_join_stays_on_its_input(con, duck):
    plan = con.sql(KEPT_BELOW).logical
    assert _semi_joins_above_inner_joins(plan) == (0, 1), plan.explain()
    _check(con, duck, KEPT_BELOW)


@pytest.mark.parametrize("sql", [NOT_IN_WITH_NULLS, NOT_IN], ids=["null_keys", "no_null_keys"])
def test_not_in_gives_duckdbs_rows_wherever_it_runs(con, duck, sql):
    got = _check(con, duck, sql)
    assert (got.column("n")[0].as_py() == 0) == (sql is NOT_IN_WITH_NULLS)


def test_without_join_ordering_the_semi_joins_stay_on_their_input(device, tables, duck):
    c = glint.connect(device=device, optimizer={"reorder_joins": False})
    for name, t in tables.items():
        c.register(name, t)
    try:
        assert _semi_joins_above_inner_joins(c.sql(HOISTED).logical)[0] == 0
        _check(c, duck, HOISTED)
    finally:
        c.close()


# TPC-DS q6's shape: an uncorrelated scalar subquery compared with a dimension's
# column; the comparison goes down with the SINGLE join to that dimension
SCALAR_ON_A_DIMENSION = (
    "SELECT count(*) AS n, sum(f.x) AS s " + DIMENSIONS + "WHERE dim.d = (SELECT max(d) FROM dim WHERE r = 7)"
)
# the same with an OR over the subquery's value and another table's column: it stays above
SCALAR_OR_ACROSS_TABLES = (
    "SELECT count(*) AS n " + DIMENSIONS + "WHERE dim.d = (SELECT max(d) FROM dim WHERE r = 7) OR reg.name = 'r3'"
)


def _single_join_inputs(plan: L.LogicalNode) -> list[set[str]]:
    """The tables under the left side of each SINGLE join."""

    def tables(node) -> set[str]:
        return {s.table for s in nodes_of(node, L.Scan)}

    return [tables(j.left) for j in nodes_of(plan, L.Join) if j.kind == "single"]


def test_a_scalar_subquery_compared_with_one_table_filters_that_table(con, duck):
    plan = con.sql(SCALAR_ON_A_DIMENSION).logical
    assert _single_join_inputs(plan) == [{"dim"}], plan.explain()
    filters = [f for f in nodes_of(plan, L.Filter) if isinstance(f.child, L.Join) and f.child.kind == "single"]
    assert filters, plan.explain()  # the comparison sits right above the SINGLE join
    assert _check(con, duck, SCALAR_ON_A_DIMENSION).column("n")[0].as_py() > 0


def test_a_filter_across_tables_stays_above_the_scalar_subquery(con, duck):
    plan = con.sql(SCALAR_OR_ACROSS_TABLES).logical
    assert all(len(t) > 1 for t in _single_join_inputs(plan)), plan.explain()
    assert _check(con, duck, SCALAR_OR_ACROSS_TABLES).column("n")[0].as_py() > 0


# TPC-H Q2's shape: a scalar subquery correlated with one table (f, per key) compared
# with another table's column (ev.v)
CORRELATED_ON_ANOTHER_TABLE = (
    "SELECT count(*) AS n, sum(f.x) AS s FROM f JOIN ev ON ev.k = f.k " + "JOIN dim ON f.d = dim.d "
    "WHERE dim.r = 7 AND ev.v = (SELECT min(e2.v) FROM ev e2 WHERE e2.k = f.k)"
)


def test_a_correlated_scalar_subquery_stays_on_its_correlation_input(con, duck):
    """The SINGLE join goes to the input its correlation reads, without the
    other table its comparison reads: that comparison stays above, where it
    becomes a condition of the join with that table."""
    plan = con.sql(CORRELATED_ON_ANOTHER_TABLE).logical
    inputs = _single_join_inputs(plan)
    assert inputs and all("ev" not in t for t in inputs), plan.explain()
    assert _check(con, duck, CORRELATED_ON_ANOTHER_TABLE).column("n")[0].as_py() > 0
