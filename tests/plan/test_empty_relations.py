"""Relations that can have no rows are known before anything runs: a filter
that compares constants once pushed into a UNION's branch (TPC-DS q4, q11 and
q74's CTE of three channels, each reference keeping one) empties its branch,
and an empty input empties the joins, aggregates and set operations that
need its rows, and no more: a LEFT JOIN keeps its left rows, a global
aggregate makes its row, a grand total of grouping sets its row. Every result
equals DuckDB's."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from glint.plan import logical as L
from glint.testing.compare import compare_query_result
from tests.plan.plan_nodes import nodes_of


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(3)
    n = 2000
    return {
        "store": pa.table({"cust": rng.integers(0, 50, n), "yr": rng.integers(2000, 2003, n), "amt": rng.random(n)}),
        "web": pa.table({"cust": rng.integers(0, 50, n), "yr": rng.integers(2000, 2003, n), "amt": rng.random(n)}),
        "cust": pa.table({"id": np.arange(50), "name": [f"c{i}" for i in range(50)]}),
    }


def _scans(plan: L.LogicalNode) -> list[str]:
    return sorted(s.table for s in nodes_of(plan, L.Scan))


YEAR_TOTAL = (
    "WITH year_total AS ("
    "SELECT cust, yr, sum(amt) AS total, 's' AS sale_type FROM store GROUP BY cust, yr "
    "UNION ALL SELECT cust, yr, sum(amt) AS total, 'w' AS sale_type FROM web GROUP BY cust, yr) "
)
Q4_SHAPE = (
    YEAR_TOTAL + "SELECT s1.cust, s2.total / s1.total AS s_growth, w2.total / w1.total AS w_growth "
    "FROM year_total s1, year_total s2, year_total w1, year_total w2 "
    "WHERE s1.cust = s2.cust AND s1.cust = w1.cust AND s1.cust = w2.cust "
    "AND s1.sale_type = 's' AND s2.sale_type = 's' AND w1.sale_type = 'w' AND w2.sale_type = 'w' "
    "AND s1.yr = 2001 AND s2.yr = 2002 AND w1.yr = 2001 AND w2.yr = 2002 ORDER BY 1"
)


def _check(con, duck, sql):
    got = con.sql(sql).arrow()
    assert compare_query_result(sql, got, duck.execute(sql).fetch_arrow_table()) == []
    return got


def test_a_ctes_branches_other_references_do_not_read(con, duck):
    # each of the four references reads only its channel: 2 + 2, not 4 x 2 scans
    assert _scans(con.sql(Q4_SHAPE).logical) == ["store", "store", "web", "web"]
    assert _check(con, duck, Q4_SHAPE).num_rows > 0


CASES = [
    ("inner_join", "SELECT * FROM store JOIN (SELECT * FROM cust WHERE 1 = 2) c ON store.cust = c.id", 0),
    (
        "left_join_keeps_left",
        "SELECT count(*), count(c.id) FROM store LEFT JOIN (SELECT * FROM cust WHERE 1 = 2) c ON store.cust = c.id",
        1,
    ),
    ("global_aggregate", "SELECT count(*), sum(amt) FROM (SELECT * FROM store WHERE 'a' = 'b') x", 1),
    ("grouped_aggregate", "SELECT cust, count(*) FROM (SELECT * FROM store WHERE 'a' = 'b') x GROUP BY cust", 0),
    ("grand_total", "SELECT cust, count(*) FROM (SELECT * FROM store WHERE 'a' = 'b') x GROUP BY ROLLUP (cust)", 1),
    ("union_all", "SELECT cust FROM store WHERE 1 = 0 UNION ALL SELECT cust FROM web WHERE yr = 2001", None),
    ("union_distinct", "SELECT cust FROM store WHERE 1 = 0 UNION SELECT cust FROM web", None),
    ("intersect", "SELECT cust FROM store INTERSECT SELECT cust FROM web WHERE 1 = 0", 0),
    ("except_empty_right", "SELECT cust FROM store EXCEPT SELECT cust FROM web WHERE 1 = 0", None),
    (
        "anti_join_empty_right",
        "SELECT count(*) FROM store WHERE NOT EXISTS "
        "(SELECT 1 FROM (SELECT * FROM cust WHERE 1 = 0) c WHERE c.id = store.cust)",
        1,
    ),
]


@pytest.mark.parametrize("name, sql, rows", CASES, ids=[c[0] for c in CASES])
def test_empty_inputs_give_duckdbs_rows(con, duck, name, sql, rows):
    got = _check(con, duck, sql)
    if rows is not None:
        assert got.num_rows == rows
    else:
        assert got.num_rows > 0
