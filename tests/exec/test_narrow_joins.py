"""A join right below a projection gathers only the columns the projection
reads for its row pairs: its keys, read by the matching alone, are not copied
(column pruning puts the projection there). The plans, the columns a join's
batches carry, and the same rows as DuckDB's: inner, outer, semi, anti, mark
(IN), single (a scalar subquery) and residual conditions, with strings and
NULL keys, under a projection, a filter or an aggregation."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from glint.exec.join import JoinExec
from glint.testing.compare import compare_query_result
from tests.plan.plan_nodes import nodes_of
from tests.registered import duck_fixture, glint_with, spy_on

N = 5_000


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    rng = np.random.default_rng(4)
    return {
        "f": pa.table(
            {
                "k": pa.array(rng.integers(0, 300, N), mask=rng.random(N) < 0.03),
                "j": rng.integers(0, 7, N),
                "v": rng.integers(-1000, 1000, N),
                "s": pa.array(np.array(["a", "bb", "c", ""])[rng.integers(0, 4, N)]),
            }
        ),
        "d": pa.table(
            {
                "k": np.arange(0, 400, 2),
                "name": pa.array([f"n{i % 37}" for i in range(200)]),
                "w": pa.array(np.arange(200) % 11, mask=np.arange(200) % 13 == 0),
            }
        ),
        "e": pa.table({"j": np.arange(5), "tag": pa.array(["x", "y", "x", "z", "y"])}),
    }


@pytest.fixture(scope="module")
def con(device, tables):
    c = glint_with(tables, device)
    yield c
    c.close()


duck = duck_fixture()


QUERIES = {
    "inner": "SELECT d.name, f.v FROM f JOIN d ON f.k = d.k",
    "chain": "SELECT e.tag, d.name, sum(f.v) AS t FROM f JOIN d ON f.k = d.k JOIN e ON f.j = e.j GROUP BY ALL",
    "left": "SELECT f.s, d.w FROM f LEFT JOIN d ON f.k = d.k",
    "full": "SELECT d.name, f.v FROM f FULL JOIN d ON f.k = d.k",
    "residual": "SELECT f.v, d.name FROM f JOIN d ON f.k = d.k AND f.v > d.w * 50",
    "filtered": "SELECT d.name, f.s FROM f JOIN d ON f.k = d.k WHERE f.v + d.w > 100",
    "semi": "SELECT f.v FROM f WHERE EXISTS (SELECT 1 FROM d WHERE d.k = f.k AND d.w > 3)",
    "anti": "SELECT f.s, count(*) AS n FROM f WHERE NOT EXISTS (SELECT 1 FROM d WHERE d.k = f.k) GROUP BY f.s",
    "mark_in": "SELECT f.v, f.k IN (SELECT k FROM d WHERE w > 5) AS hit FROM f",
    "single": "SELECT f.v, (SELECT max(d.w) FROM d WHERE d.k = f.k) AS m FROM f",
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_narrow_joins_give_duckdbs_rows(con, duck, name):
    sql = QUERIES[name]
    res = con.sql(sql)
    got = res.arrow()
    assert compare_query_result(sql, got, duck.execute(sql).arrow()) == []


def test_a_join_under_a_projection_leaves_its_keys_out(con, monkeypatch):
    from glint.exec import join as J

    sql = QUERIES["chain"]
    res = con.sql(sql)
    joins = nodes_of(res.physical, JoinExec)
    assert joins and all(j.keep is not None for j in joins), res.physical
    keys = {f.id for j in joins for e in (*j.left_keys, *j.right_keys) for f in e.fields()}
    assert keys and all(not (keys & j.keep) for j in joins), res.physical
    out = spy_on(monkeypatch, J, "_combine", lambda b: set(b.columns))
    con.sql(sql).arrow()
    assert out and all(not (cols & keys) for cols in out), out
