"""The aggregates beyond COUNT / SUM / AVG / MIN / MAX on 2 Gloo CPU ranks:
each rank's partial states (chunks of 32 rows) are shuffled on the group
keys, or gathered without them, and finished; compared with DuckDB, and the
sketches with one process's answers (HyperLogLog registers merge exactly)."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.testing.compare import compare_query_result


def _table(n: int) -> pa.Table:
    rng = np.random.default_rng(3)
    return pa.table(
        {
            "k": pa.array(rng.integers(0, 12, n), pa.int32()),
            "u": pa.array(rng.permutation(n), pa.int64()),
            "v": pa.array(
                [None if r < 0.1 else int(x) for r, x in zip(rng.random(n), rng.integers(-9, 9, n))], pa.int32()
            ),
            "f": pa.array(rng.normal(size=n)),
            "s": pa.array([f"s{x}" for x in rng.integers(0, 25, n)]),
        }
    )


QUERIES = [
    "SELECT k, arg_max(s, u), arg_min(v, u), corr(v, f), regr_slope(f, v), covar_samp(v, u), skewness(f), "
    "kurtosis(v), bit_xor(v), bit_and(u), product(CASE WHEN v BETWEEN -1 AND 1 THEN v + 2 END) FROM t GROUP BY k",
    "SELECT arg_max(s, u), corr(v, f), regr_intercept(v, f), kurtosis_pop(f), bit_or(v), regr_count(v, f) FROM t",
    "SELECT k, first(s ORDER BY u), last(v ORDER BY u), mode(v ORDER BY u), entropy(s) FROM t GROUP BY k",
    "SELECT k % 2 AS a, k % 3 AS b, arg_min(s, u), regr_r2(f, v), bit_xor(u) FROM t GROUP BY CUBE (a, b)",
]


@pytest.fixture(scope="module")
def cons():
    t = _table(2000)
    con = glint.connect(ranks=2, device="cpu", timeout=60, replicate_rows=0, small_result_bytes=0, chunk_rows=32)
    con.register("t", t)
    one = glint.connect(device="cpu", chunk_rows=32)
    one.register("t", t)
    duck = duckdb.connect()
    duck.execute("SET threads = 1")
    duck.register("t", t)
    yield con, one, duck
    con.close()


@pytest.mark.parametrize("sql", QUERIES)
def test_on_two_ranks(cons, sql):
    con, _, duck = cons
    want = duck.sql(sql).arrow()
    if hasattr(want, "read_all"):
        want = want.read_all()
    diffs = compare_query_result(sql, con.sql(sql).arrow(), want)
    assert not diffs, "\n".join(diffs[:10])


def test_sketches_on_two_ranks(cons):
    con, one, _ = cons
    sql = "SELECT k, approx_count_distinct(s), approx_count_distinct(u), approx_quantile(u, 0.5) FROM t GROUP BY k"
    got = {k: row for k, *row in con.sql(sql).fetchall()}
    ref = {k: row for k, *row in one.sql(sql).fetchall()}
    assert {k: r[:2] for k, r in got.items()} == {k: r[:2] for k, r in ref.items()}
    for k in got:
        assert abs(got[k][2] - ref[k][2]) <= 0.01 * 2000  # ranks of unique keys: the digests' bound
    total = con.sql("SELECT approx_count_distinct(u), approx_count_distinct(s) FROM t").fetchall()
    assert total == one.sql("SELECT approx_count_distinct(u), approx_count_distinct(s) FROM t").fetchall()
