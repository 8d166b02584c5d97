"""APPROX_COUNT_DISTINCT and APPROX_QUANTILE against the exact answers, with
the error bounds docs/sql.md states, over random data of 1e5-1e6 rows in one
group and in many; their sketches merged across chunks, out of core, and
compared with one chunk's.

Bounds (glint.kernels.hll, glint.kernels.tdigest):

- APPROX_COUNT_DISTINCT: relative standard error 1.04 / sqrt(2048) = 2.3%;
  every estimate here is within 4 standard errors, the root mean square
  over many groups within 1.5; up to a few dozen distinct values the count
  is exact. Merging registers is exact: any chunking gives the same count.
- APPROX_QUANTILE: the result's rank lies within 0.5% of n of q * n; q = 0
  and 1 give the exact extremes; groups of a few dozen values are read
  exactly, interpolated at rank q * n between the values' centres.
"""

from __future__ import annotations

import datetime
import math

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.kernels import hll

SE = hll.RELATIVE_ERROR
RANK_BOUND = 0.005
QS = (0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1.0)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(2024)
    n = 1_000_000
    g = rng.integers(0, 200, n)
    return pa.table(
        {
            "g": pa.array(g, pa.int32()),
            "i": pa.array(rng.integers(0, 300_000, n), pa.int64()),
            "n": pa.array(rng.normal(10.0, 3.0, n)),
            "e": pa.array(rng.exponential(2.0, n)),
            "s": pa.array([f"k{x}" for x in rng.integers(0, 50_000, n)]),
            "sorted": pa.array(np.arange(n, dtype=np.int64)),
        }
    )


@pytest.fixture(scope="module")
def cons(data):
    one = glint.connect(device="cpu", chunk_rows=1 << 21)
    small = glint.connect(device="cpu", chunk_rows=50_000)
    for c in (one, small):
        c.register("t", data)
    duck = duckdb.connect()
    duck.register("t", data)
    return one, small, duck


# ------------------------------------------------------------------ APPROX_COUNT_DISTINCT
def test_count_distinct_one_group(cons):
    one, small, duck = cons
    sql = "SELECT approx_count_distinct(i), approx_count_distinct(s), approx_count_distinct(n) FROM t"
    exact = duck.sql("SELECT count(DISTINCT i), count(DISTINCT s), count(DISTINCT n) FROM t").fetchone()
    got = one.sql(sql).fetchone()
    for e, a in zip(exact, got):
        assert abs(a / e - 1) <= 4 * SE, (e, a)
    assert small.sql(sql).fetchone() == got  # registers merge exactly, in any chunking


def test_count_distinct_many_groups(cons):
    one, small, duck = cons
    exact = dict(duck.sql("SELECT g, count(DISTINCT i) FROM t GROUP BY g").fetchall())
    sql = "SELECT g, approx_count_distinct(i) FROM t GROUP BY g"
    got = dict(one.sql(sql).fetchall())
    assert got == dict(small.sql(sql).fetchall())
    errors = np.array([got[k] / exact[k] - 1 for k in exact])
    assert len(errors) == 200
    assert np.abs(errors).max() <= 4 * SE
    assert math.sqrt((errors**2).mean()) <= 1.5 * SE


def test_count_distinct_small_counts_are_exact():
    con = glint.connect(device="cpu", chunk_rows=3)
    t = pa.table(
        {
            "g": pa.array([i % 3 for i in range(60)], pa.int32()),
            "v": pa.array([i % 17 if i % 5 else None for i in range(60)], pa.int32()),
            "f": pa.array([0.0, -0.0, float("nan"), -float("nan"), 1.5, None] * 10),
            "s": pa.array([f"x{i % 11}" for i in range(60)]),
        }
    )
    con.register("t", t)
    duck = duckdb.connect()
    duck.register("t", t)
    sql = "SELECT g, approx_count_distinct(v), approx_count_distinct(f), approx_count_distinct(s) FROM t GROUP BY g"
    exact = "SELECT g, count(DISTINCT v), count(DISTINCT f), count(DISTINCT s) FROM t GROUP BY g"
    assert sorted(con.sql(sql).fetchall()) == sorted(duck.sql(exact).fetchall())
    empty = "SELECT approx_count_distinct(v) FROM t WHERE g > 5"
    assert con.sql(empty).fetchall() == [(0,)]


# ------------------------------------------------------------------ APPROX_QUANTILE
def _rank_error(sorted_values: np.ndarray, v: float, q: float) -> float:
    lo = np.searchsorted(sorted_values, v, side="left") / len(sorted_values)
    hi = np.searchsorted(sorted_values, v, side="right") / len(sorted_values)
    return 0.0 if lo <= q <= hi else min(abs(q - lo), abs(q - hi))


@pytest.mark.parametrize("col", ["n", "e", "i", "sorted"])
def test_quantile_one_group(cons, data, col):
    one, small, _ = cons
    values = np.sort(data.column(col).to_numpy())
    items = ", ".join(f"approx_quantile({col}, {q})" for q in QS)
    for con in (one, small):
        got = con.sql(f"SELECT {items} FROM t").fetchone()
        for q, v in zip(QS, got):
            assert _rank_error(values, v, q) <= RANK_BOUND, (col, q, v)
        assert got[0] == values[0] and got[-1] == values[-1]


def test_quantile_many_groups(cons, data):
    one, small, _ = cons
    g = data.column("g").to_numpy()
    x = data.column("e").to_numpy()
    groups = {k: np.sort(x[g == k]) for k in range(200)}
    for con in (one, small):
        rows = con.sql("SELECT g, approx_quantile(e, 0.5), approx_quantile(e, 0.95) FROM t GROUP BY g").fetchall()
        assert len(rows) == 200
        for k, med, p95 in rows:
            assert _rank_error(groups[k], med, 0.5) <= RANK_BOUND
            assert _rank_error(groups[k], p95, 0.95) <= RANK_BOUND


def test_quantile_small_groups_are_read_exactly():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(30, 40))
    t = pa.table({"g": pa.array(np.repeat(np.arange(30), 40), pa.int32()), "x": pa.array(x.reshape(-1))})
    con = glint.connect(device="cpu", chunk_rows=7)
    con.register("t", t)
    for q in (0.1, 0.5, 0.77):
        got = dict(con.sql(f"SELECT g, approx_quantile(x, {q}) FROM t GROUP BY g").fetchall())
        for k in range(30):
            v = np.sort(x[k])
            pos = min(max(q * len(v) - 0.5, 0.0), len(v) - 1.0)
            lo = math.floor(pos)
            want = v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (pos - lo)
            assert got[k] == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_quantile_types_and_rounding():
    con = glint.connect(device="cpu", chunk_rows=2)
    duck = duckdb.connect()
    t = pa.table(
        {
            "i": pa.array([1, 2, 3, 4], pa.int32()),
            "d": pa.array([datetime.date(2020, 1, 1), datetime.date(2020, 1, 3), None, datetime.date(2020, 1, 9)]),
            "ts": pa.array(
                [datetime.datetime(2020, 1, 1, 0, 0, 1), None, None, datetime.datetime(2020, 1, 1, 0, 0, 4)]
            ),
        }
    )
    con.register("t", t)
    duck.register("t", t)
    sql = (
        "SELECT approx_quantile(i, 0.5), approx_quantile(-i, 0.5), approx_quantile(CAST(i AS BIGINT) * 3, 0.25), "
        "approx_quantile(i, 0), approx_quantile(i, 1), approx_quantile(CAST(i AS DECIMAL(9, 2)) / 4 * 4, 0.5), "
        "approx_quantile(CAST(i AS DECIMAL(5, 1)) + 0.5, 1), typeof(approx_quantile(CAST(i AS DECIMAL(5, 1)), 1)), "
        "approx_quantile(d, 0), approx_quantile(d, 1), approx_quantile(ts, 1) FROM t"
    )
    got = con.sql(sql).fetchall()
    want = duck.sql(sql).fetchall()
    # every value but the DECIMAL's type (DuckDB's SMALLINT, glint's INTEGER) is DuckDB's
    assert got[0][:7] + got[0][8:] == want[0][:7] + want[0][8:]
    assert got[0][7] == "INTEGER"
    assert con.sql("SELECT approx_quantile(i, 0.5) FROM t WHERE i > 10").fetchall() == [(None,)]


@pytest.mark.parametrize(
    "sql, message",
    [
        ("SELECT approx_quantile(i, 1.5) FROM t", "APPROXIMATE QUANTILE can only take parameters in range [0, 1]"),
        ("SELECT approx_quantile(i, i) FROM t", "APPROXIMATE QUANTILE can only take constant quantile parameters"),
        ("SELECT approx_quantile(i, NULL) FROM t", "APPROXIMATE QUANTILE parameter list cannot be NULL"),
        ("SELECT approx_quantile(s, 0.5) FROM t", "'approx_quantile(VARCHAR, DECIMAL(2,1))'"),
        ("SELECT approx_quantile(i, 0.5::DOUBLE) FROM t", "'approx_quantile(INTEGER, DOUBLE)'"),
        ("SELECT approx_quantile(i, [0.5, 0.9]) FROM t", "APPROX_QUANTILE with a list of quantiles"),
        ("SELECT approx_quantile(i, 0.5) OVER (ORDER BY i) FROM t", "APPROX_QUANTILE over a window frame"),
    ],
)
def test_quantile_errors(sql, message):
    con = glint.connect(device="cpu")
    con.register("t", pa.table({"i": pa.array([1, 2], pa.int32()), "s": pa.array(["a", "b"])}))
    with pytest.raises(glint.GlintError) as e:
        con.sql(sql).fetchall()
    assert message in str(e.value)


# ------------------------------------------------------------------ out of core, windows
def test_sketches_out_of_core():
    """Sketch states of many groups outgrow a small memory budget and are
    partitioned (spilled); the counts equal one chunk's, the quantiles stay
    within their bound."""
    rng = np.random.default_rng(11)
    n = 50_000
    g = rng.integers(0, 500, n)
    v = rng.integers(0, 1000, n)
    t = pa.table({"g": pa.array(g, pa.int32()), "v": pa.array(v, pa.int64())})
    whole = glint.connect(device="cpu", chunk_rows=1 << 20)
    tight = glint.connect(device="cpu", chunk_rows=2048, memory_limit="8MB")
    for c in (whole, tight):
        c.register("t", t)
    sql = "SELECT g, approx_count_distinct(v), approx_quantile(v, 0.5) FROM t GROUP BY g"
    got = {k: (c, m) for k, c, m in tight.sql(sql).fetchall()}
    assert "aggregation state over budget" in tight.sql(sql).explain(analyze=True)
    ref = {k: (c, m) for k, c, m in whole.sql(sql).fetchall()}
    assert {k: c for k, (c, _) in got.items()} == {k: c for k, (c, _) in ref.items()}
    for k, (_, med) in got.items():
        assert _rank_error(np.sort(v[g == k]), med, 0.5) <= 0.02  # groups of ~100 values


def test_sketches_over_whole_partitions():
    con = glint.connect(device="cpu", chunk_rows=5)
    t = pa.table({"g": pa.array([1, 1, 1, 2, 2], pa.int32()), "v": pa.array([3, 3, 7, 1, 2], pa.int32())})
    con.register("t", t)
    rows = con.sql(
        "SELECT g, approx_count_distinct(v) OVER (PARTITION BY g), approx_quantile(v, 1) OVER (PARTITION BY g) "
        "FROM t ORDER BY g"
    ).fetchall()
    assert rows == [(1, 2, 7), (1, 2, 7), (1, 2, 7), (2, 2, 2), (2, 2, 2)]
