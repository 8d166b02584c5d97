"""GROUP BY keys of a small span, every value of it a group of each chunk
(glint.exec.aggregate._span_slots: the GPU's way, without a host
synchronisation per chunk, taken here on the CPU with the torch reference of
the group ids): groups no row of a chunk holds and groups whose every row a
folded WHERE rejects are dropped once, when the chunks' states are combined.
The results equal DuckDB's over many chunks: values of the span no row holds,
groups present in some chunks only, NULL keys, a WHERE that rejects a group
everywhere or everything, aggregates the fused pass does not take, wide
DECIMAL sums, ROLLUP, and an aggregation that spills its states."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from glint.exec import aggregate as A
from glint.exec import physical_planner as P
from glint.testing.compare import compare_query_result
from tests.registered import duckdb_with, glint_with, spy_on

N = 24_000
CHUNK = 2_000


@pytest.fixture(scope="module")
def table() -> pa.Table:
    rng = np.random.default_rng(11)
    # g takes 0, 2, 3 and 7 of the span 0..7; 7 only in the last rows (the last chunks)
    g = np.where(np.arange(N) >= N - 3000, 7, rng.choice([0, 2, 3], N))
    flag = np.array(["A", "N", "R"])[rng.integers(0, 3, N)]
    return pa.table(
        {
            "g": pa.array(g, pa.int32()),
            "flag": pa.array(flag),
            "status": pa.array(np.array(["F", "O"])[rng.integers(0, 2, N)]),
            "n": pa.array(np.where(rng.random(N) < 0.1, None, g), pa.int32()),
            "x": pa.array(rng.integers(-1000, 1000, N), mask=rng.random(N) < 0.05),
            "d": pa.array(rng.integers(0, 100_000, N) / 100).cast(pa.decimal128(12, 2)),
            "w": pa.array(rng.integers(0, 100_000, N) / 100).cast(pa.decimal128(38, 2)),
            "f": rng.random(N),
            "day": pa.array(rng.integers(0, 1000, N), pa.int32()),
        }
    )


@pytest.fixture
def con(device, table, monkeypatch):
    monkeypatch.setattr(P, "FOLD_MIN_KEPT", 0.0)  # every WHERE folds into the aggregation
    monkeypatch.setattr(A, "FOLD_DEVICES", ("cpu", "cuda"))
    # (through the module the aggregation holds: a doctest run may have imported group_reduce again)
    kernels = A.R
    if device == "cpu":
        monkeypatch.setattr(kernels, "span_group_ids", kernels.span_group_ids_torch)
    monkeypatch.setattr(kernels, "FEW_IDS_MIN_ROWS", 1)  # (chunks of 2,000 rows take the GPU's kernel too)
    c = glint_with({"t": table}, device, chunk_rows=CHUNK)
    c.spans = spy_on(monkeypatch, A, "_span_slots", lambda out: out[2])
    yield c
    c.close()


@pytest.fixture(scope="module")
def duck(table):
    d = duckdb_with({"t": table})
    yield d
    d.close()


NOT_SPAN = "SELECT g, min(x), sum(x), count(*) FROM t GROUP BY g ORDER BY g"
QUERIES = [
    # TPC-H Q1's shape: two flags, a folded WHERE, COUNT / SUM / AVG
    "SELECT flag, status, sum(d), sum(d * (1 - d / 1000)), avg(x), count(*), count(x) FROM t "
    "WHERE day <= 900 GROUP BY flag, status ORDER BY flag, status",
    # values of the span no row holds; 7 only in the last chunks
    "SELECT g, count(*), sum(x), avg(f) FROM t GROUP BY g ORDER BY g",
    # a WHERE that rejects one group everywhere, and another in most chunks
    "SELECT g, count(*), sum(d) FROM t WHERE g <> 2 AND (g <> 7 OR x > 900) GROUP BY g ORDER BY g",
    # a WHERE that rejects everything
    "SELECT g, count(*), sum(d) FROM t WHERE day < 0 GROUP BY g ORDER BY g",
    # NULL keys are a group
    "SELECT n, count(*), sum(x) FROM t WHERE day > 10 GROUP BY n ORDER BY n NULLS FIRST",
    # an aggregate the fused pass does not take: every chunk's groups exact (not a span's)
    NOT_SPAN,
    # a DECIMAL(38, 2) sum (beyond 64 bits: the per-function states beside the counts)
    "SELECT flag, sum(w), avg(w), count(*) FROM t GROUP BY flag ORDER BY flag",
    "SELECT flag, g, count(*), sum(d) FROM t GROUP BY ROLLUP (flag, g) ORDER BY flag NULLS LAST, g NULLS LAST",
    "SELECT count(*) FROM (SELECT g, flag, sum(x) AS s FROM t WHERE x > 0 GROUP BY g, flag) q WHERE s > 0",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_span_groups_equal_duckdb(con, duck, sql):
    _check(con, duck, sql)


def _check(con, duck, sql):
    assert compare_query_result(sql, con.sql(sql).arrow(), duck.execute(sql).arrow()) == []
    assert any(con.spans) == (sql != NOT_SPAN), con.spans


def test_spilled_states_equal_duckdb(con, duck, monkeypatch):
    """States that go to hash partitions after the first chunks (a reservation refused)."""
    real = A.PartitionedBatches

    class Tight(real):
        pass

    monkeypatch.setattr(A, "PartitionedBatches", Tight)
    calls = []
    resize = type(con.memory.reservation("probe")).resize

    def refuse(self, n):
        calls.append(n)
        return len(calls) < 3 and resize(self, n)

    monkeypatch.setattr(type(con.memory.reservation("probe")), "resize", refuse)
    _check(con, duck, QUERIES[1])
    assert len(calls) >= 3
