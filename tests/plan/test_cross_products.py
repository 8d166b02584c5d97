"""Cross products: aggregates over them computed from their inputs'
aggregates (compared with DuckDB), products streamed in chunks of
chunk_rows, and a product too large to hold refused when it is planned."""

import re
import time
from decimal import Decimal

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.engine.result import ResultTooLarge
from glint.testing.compare import compare_query_result

TABLES = {
    "a": pa.table(
        {
            "x": pa.array([1, 2, None, 4, 5], pa.int32()),
            "d": pa.array(
                [Decimal("1.25"), None, Decimal("-3.50"), Decimal("7.00"), Decimal("0.05")], pa.decimal128(9, 2)
            ),
            "s": ["p", "q", "r", None, "p"],
            "g": [1, 1, 2, 2, 3],
        }
    ),
    "b": pa.table({"y": pa.array([10.5, None, -2.25], pa.float64()), "k": [1, 2, 2]}),
    "c": pa.table({"z": pa.array([7, 8, 9, 10], pa.int64())}),
    "e": pa.table({"w": pa.array([], pa.int32())}),
}

REWRITTEN = [
    "SELECT count(*) FROM a, b",
    "SELECT count(*), count(x), sum(x), sum(d), avg(x), min(s), max(y), sum(y), count(z) FROM a, b, c",
    "SELECT sum(x) FILTER (WHERE x > 1), count(*) FILTER (WHERE y > 0), avg(d) FROM a CROSS JOIN b",
    "SELECT count(DISTINCT x), sum(DISTINCT k), avg(DISTINCT z), min(x), max(z) FROM a, b, c",
    "SELECT bool_and(x > 0), bool_or(y < 0) FROM a, b",
    "SELECT count(*), sum(x), min(x), count(DISTINCT x), sum(z) FROM a, e, c",
    "SELECT g, count(*), sum(x), sum(y), avg(z), max(s) FROM a, b, c GROUP BY g ORDER BY g",
    "SELECT g % 2 AS h, count(*), sum(z) FROM a, c GROUP BY h ORDER BY h",
    "SELECT g, count(*) FROM a, e GROUP BY g",
    "SELECT sum(x + 1) * 2, count(*) + 1 FROM (SELECT x, y FROM a, b) s",
    "SELECT count(*), sum(s.x) FROM (SELECT * FROM a, b) s, (SELECT * FROM b, c) t",
]
NOT_REWRITTEN = [
    "SELECT max(x + z) FROM a, c",  # an aggregate of both inputs
    "SELECT count(*) FROM a, b WHERE x > k",  # a condition: not a cross product
    "SELECT k, sum(x) FROM a, b GROUP BY k, g ORDER BY k",  # keys of two inputs
    "SELECT string_agg(s, ',' ORDER BY s) FROM a, b",
]


@pytest.fixture(scope="module")
def engines(device):
    duck = duckdb.connect()
    con = glint.connect(device=device)
    for name, t in TABLES.items():
        duck.register(f"{name}_arrow", t)
        duck.execute(f"CREATE TABLE {name} AS SELECT * FROM {name}_arrow")
        con.register(name, t)
    yield con, duck
    con.close()
    duck.close()


def _nested_loops(res) -> int:
    return res.explain().split("Physical plan:")[-1].count("NestedLoopJoin")


@pytest.mark.parametrize("sql", REWRITTEN + NOT_REWRITTEN)
def test_aggregates_over_cross_products_match_duckdb(engines, sql):
    con, duck = engines
    res = con.sql(sql)
    diffs = compare_query_result(sql, res.arrow(), duck.sql(sql).fetch_arrow_table(), check_names=True)
    assert not diffs, f"{sql}\n" + "\n".join(diffs)


@pytest.mark.parametrize("sql", REWRITTEN)
def test_aggregates_over_cross_products_read_each_input_once(engines, sql):
    """The product itself is never formed: what is left of the joins puts
    one-row (or per-group) aggregates together."""
    con, _ = engines
    plan = con.sql(sql).explain().split("Physical plan:")[-1]
    for line in plan.splitlines():
        if "NestedLoopJoin" in line:
            est = int(re.search(r"~([\d,]+) rows", line).group(1).replace(",", ""))
            assert est <= 3, f"{sql}\n{plan}"


@pytest.mark.parametrize("sql", NOT_REWRITTEN)
def test_other_aggregates_still_read_the_product(engines, sql):
    con, _ = engines
    assert "Aggregate groups=[] aggs=[count_star() AS rows" not in con.sql(sql).explain()


def _big(device, n, **settings):
    con = glint.connect(device=device, **settings)
    for name in ("p", "q", "r"):
        con.register(name, pa.table({"v": np.arange(n, dtype=np.int64)}))
    return con


def test_count_over_a_huge_cross_product_is_immediate(device):
    n = 100_000
    con = _big(device, n)
    t0 = time.perf_counter()
    assert con.sql("SELECT count(*) FROM p, q").fetchall() == [(n * n,)]  # 10**10 rows
    got = con.sql("SELECT count(*), sum(p.v), max(r.v) FROM p, q, r").fetchall()  # 10**15
    assert time.perf_counter() - t0 < 20
    assert got == [(n**3, (n * (n - 1) // 2) * n * n, n - 1)]


def test_cross_product_too_large_to_hold_is_refused_when_planned(device):
    con = _big(device, 100_000)
    t0 = time.perf_counter()
    with pytest.raises(ResultTooLarge) as e:
        con.sql("SELECT * FROM p, q, r")
    assert time.perf_counter() - t0 < 10
    text = str(e.value)
    assert "1,000,000,000,000,000 rows" in text and "cross_product_limit" in text
    # held as a join's side (the result itself is small; 10**10 rows of 8 bytes can fit a large host's
    # default limit, so the limit is set)
    con.sql("SET cross_product_limit = '16GB'")
    with pytest.raises(ResultTooLarge, match="holds in memory"):
        con.sql("SELECT max(s.v) FROM p, (SELECT q.v FROM q, r) s, (SELECT r.v FROM r, q) t WHERE s.v + t.v = p.v")
    # a LIMIT, an aggregate or a condition makes it finish: not refused
    assert len(con.sql("SELECT * FROM p, q, r LIMIT 3").fetchall()) == 3
    assert con.sql("SELECT count(*) FROM p, q WHERE p.v = q.v").fetchall() == [(100_000,)]
    # the setting turns the check off (the query is planned, and not run here)
    con.sql("SET cross_product_limit = 0")
    assert con.sql("SELECT * FROM p, q, r").names == ["v", "v", "v"]
    con.sql("SET cross_product_limit = '1KB'")
    with pytest.raises(ResultTooLarge, match="10,000,000,000 rows"):
        con.sql("SELECT * FROM p, q")


def test_cross_product_streams_in_chunks_of_chunk_rows(device):
    con = _big(device, 300, chunk_rows=1000)
    res = con.sql("SELECT max(p.v + q.v) FROM p, q")
    text = res.explain(analyze=True)
    line = next(l for l in text.splitlines() if "NestedLoopJoin" in l and "actual" in l)
    m = re.search(r"actual ([\d,]+) rows in ([\d,]+) batch", line)
    rows, batches = (int(g.replace(",", "")) for g in m.groups())
    assert rows == 90_000 and batches >= 90, line
    assert res.fetchall() == [(598,)]
