"""Outer joins under conditions that drop their NULL-extended rows become
inner (or one-sided) joins, and the results stay DuckDB's: conditions that
reject NULLs (comparisons, IS NOT NULL, IN, arithmetic, an OR of such) and
conditions that do not (IS NULL, COALESCE, an OR with IS NULL), above the
join, in an inner join's ON, through projections, and never through an
aggregate or a LIMIT."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.plan import logical as L
from glint.testing.compare import compare_query_result
from tests.plan.plan_nodes import nodes_of


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(5)
    n = 3000
    sale_item = rng.integers(0, 400, n)
    ret_rows = rng.choice(n, 500, replace=False)
    return {
        "sales": pa.table(
            {
                "item": sale_item,
                "ticket": np.arange(n),
                "qty": pa.array(rng.integers(1, 10, n), mask=np.arange(n) % 101 == 0),
            }
        ),
        "returns": pa.table(
            {
                "item": sale_item[ret_rows],
                "ticket": ret_rows,
                "reason": pa.array(rng.integers(0, 6, 500), mask=np.arange(500) % 37 == 0),
                "rqty": rng.integers(1, 5, 500),
            }
        ),
        "reason": pa.table({"r_sk": np.arange(6), "r_desc": [f"reason {i}" for i in range(6)]}),
    }


def _kinds(plan: L.LogicalNode) -> list[str]:
    return sorted(j.kind for j in nodes_of(plan, L.Join))


SR = "FROM sales s LEFT JOIN returns r ON r.item = s.item AND r.ticket = s.ticket "

CASES = [
    # TPC-DS q93's shape: the comma join's condition rejects the returns' NULLs
    (
        "q93",
        "SELECT s.item, sum(CASE WHEN r.rqty IS NOT NULL THEN s.qty - r.rqty ELSE s.qty END) AS v "
        + SR
        + ", reason WHERE r.reason = reason.r_sk AND reason.r_desc = 'reason 3' GROUP BY s.item",
        ["inner", "inner"],
    ),
    ("comparison", "SELECT s.ticket, r.rqty " + SR + "WHERE r.rqty > 2", ["inner"]),
    ("is_not_null", "SELECT s.ticket, r.reason " + SR + "WHERE r.reason IS NOT NULL", ["inner"]),
    ("in_list", "SELECT s.ticket " + SR + "WHERE r.reason IN (1, 2)", ["inner"]),
    ("arithmetic", "SELECT s.ticket " + SR + "WHERE r.rqty + s.qty > 8", ["inner"]),
    ("or_both_reject", "SELECT s.ticket " + SR + "WHERE r.rqty = 1 OR r.reason = 4", ["inner"]),
    ("through_a_subquery", "SELECT t FROM (SELECT s.ticket AS t, r.rqty AS q " + SR + ") x WHERE q < 3", ["inner"]),
    # these keep the NULL-extended rows: the join stays an outer join
    ("is_null", "SELECT s.ticket " + SR + "WHERE r.rqty IS NULL", ["left"]),
    ("coalesce", "SELECT s.ticket " + SR + "WHERE coalesce(r.rqty, 0) < 2", ["left"]),
    ("or_with_is_null", "SELECT s.ticket " + SR + "WHERE r.rqty > 3 OR r.rqty IS NULL", ["left"]),
    ("left_side_only", "SELECT s.ticket " + SR + "WHERE s.qty > 3", ["left"]),
    (
        "above_an_aggregate",
        "SELECT * FROM (SELECT s.item, max(r.rqty) AS m " + SR + "GROUP BY s.item) x WHERE m > 2",
        ["left"],
    ),
    (
        "above_a_limit",
        "SELECT * FROM (SELECT s.ticket, r.rqty " + SR + "ORDER BY s.ticket LIMIT 50) x WHERE rqty > 1",
        ["left"],
    ),
    # RIGHT and FULL joins
    (
        "right",
        "SELECT r.ticket, s.qty FROM sales s RIGHT JOIN returns r ON r.ticket = s.ticket WHERE s.qty > 4",
        ["inner"],
    ),
    (
        "full_to_left",
        "SELECT s.ticket, r.rqty FROM sales s FULL JOIN returns r ON r.ticket = s.ticket AND s.qty > 5 "
        "WHERE s.item < 100",
        ["left"],
    ),
    (
        "full_to_right",
        "SELECT s.ticket, r.rqty FROM sales s FULL JOIN returns r ON r.ticket = s.ticket AND s.qty > 5 "
        "WHERE r.rqty = 2",
        ["right"],
    ),
    (
        "full_to_inner",
        "SELECT s.ticket, r.rqty FROM sales s FULL JOIN returns r ON r.ticket = s.ticket "
        "WHERE r.rqty = 2 AND s.qty = 3",
        ["inner"],
    ),
    (
        "full_kept",
        "SELECT s.ticket, r.rqty FROM sales s FULL JOIN returns r ON r.ticket = s.ticket AND s.qty > 5 "
        "WHERE r.rqty IS NULL OR s.qty IS NULL",
        ["full"],
    ),
    # a nested outer join whose NULLs the outer join's ON rejects: its rows that
    # fail the ON match nothing
    (
        "nested_in_on",
        "SELECT s.ticket, x.rd FROM sales s LEFT JOIN (SELECT r.ticket AS t, reason.r_desc AS rd FROM returns r "
        "LEFT JOIN reason ON r.reason = reason.r_sk) x ON x.t = s.ticket AND x.rd <> 'reason 1'",
        ["inner", "left"],
    ),
]


@pytest.mark.parametrize("name, sql, kinds", CASES, ids=[c[0] for c in CASES])
def test_outer_joins_simplified_and_results_equal_duckdbs(con, duck, name, sql, kinds):
    assert _kinds(con.sql(sql).logical) == kinds, con.sql(sql).logical.explain()
    got = con.sql(sql).arrow()
    want = duck.execute(sql).fetch_arrow_table()
    assert compare_query_result(sql, got, want) == []
    assert want.num_rows > 0


def test_the_rule_can_be_turned_off(device, tables, duck):
    c = glint.connect(device=device, optimizer={"simplify_outer_joins": False})
    for name, t in tables.items():
        c.register(name, t)
    try:
        sql = CASES[1][1]
        assert _kinds(c.sql(sql).logical) == ["left"]
        assert compare_query_result(sql, c.sql(sql).arrow(), duck.execute(sql).arrow()) == []
    finally:
        c.close()


# TPC-DS q80's shape: the inner joins that read only the sales (a date range, a
# dimension) go under the LEFT JOIN to the returns
SALES_THEN_RETURNS = (
    "SELECT reason.r_desc, count(*) AS n, sum(r.rqty) AS q FROM sales s LEFT JOIN returns r "
    "ON r.item = s.item AND r.ticket = s.ticket, reason WHERE s.qty = reason.r_sk AND s.ticket < 900 "
    "GROUP BY reason.r_desc"
)
# the inner join reads the returns' column: it stays above the LEFT JOIN, which stays a LEFT JOIN
# only where the condition lets NULLs through
RETURNS_KEYED = (
    "SELECT count(*) AS n FROM sales s LEFT JOIN returns r ON r.item = s.item AND r.ticket = s.ticket "
    "JOIN reason ON coalesce(r.reason, 0) = reason.r_sk"
)


def _left_joins_over(plan: L.LogicalNode) -> list[set[str]]:
    """The tables on the kept side of each LEFT JOIN."""
    return [{s.table for s in nodes_of(j.left, L.Scan)} for j in nodes_of(plan, L.Join) if j.kind == "left"]


def test_inner_joins_on_the_kept_side_go_below_the_left_join(con, duck):
    plan = con.sql(SALES_THEN_RETURNS).logical
    assert _left_joins_over(plan) == [{"sales", "reason"}], plan.explain()
    got = con.sql(SALES_THEN_RETURNS).arrow()
    want = duck.execute(SALES_THEN_RETURNS).fetch_arrow_table()
    assert compare_query_result(SALES_THEN_RETURNS, got, want) == [] and want.num_rows > 0


def test_an_inner_join_that_reads_the_outer_side_stays_above(con, duck):
    plan = con.sql(RETURNS_KEYED).logical
    assert _left_joins_over(plan) == [{"sales"}], plan.explain()
    got = con.sql(RETURNS_KEYED).arrow()
    assert compare_query_result(RETURNS_KEYED, got, duck.execute(RETURNS_KEYED).fetch_arrow_table()) == []
