"""COUNT / SUM / AVG of a chunk with few groups computed together
(glint.exec.few_groups): the same states as each aggregate's own partial
states, with NULLs, FILTER, shared and computed inputs, COUNT(*) with and
without a filter, DECIMAL, BIGINT and DOUBLE inputs, one group or several;
and queries whose aggregation takes that path, equal to DuckDB's answers.
The Triton kernel itself is checked against its torch reference under the
interpreter in tests/kernels/triton_interpreted.py; here, on the CPU, the
states come from the reference."""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest
import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.exec import aggregate_functions as F
from glint.exec import few_groups as FG
from glint.kernels import group_reduce as R
from glint.kernels import groupby as G
from glint.plan.expr import AggCall, Call, ColRef, Field, Literal


def _batch(n: int, seed: int):
    rng = np.random.default_rng(seed)
    dec = pa.array([None if rng.random() < 0.1 else int(v) for v in rng.integers(-(10**15), 10**15, n)], pa.int64())
    big = pa.array([int(v) for v in rng.integers(-(2**62), 2**62, n)], pa.int64())
    dbl = pa.array([None if rng.random() < 0.2 else float(v) for v in rng.normal(0, 1e6, n)], pa.float64())
    f_dec, f_big, f_dbl = Field(1, "d", T.DECIMAL(15, 2)), Field(2, "b", T.BIGINT), Field(3, "x", T.DOUBLE)
    cols = {
        1: Column(
            T.DECIMAL(15, 2),
            torch.tensor(dec.fill_null(0).to_numpy()),
            torch.tensor(dec.is_valid().to_numpy(zero_copy_only=False)),
        ),
        2: Column(T.BIGINT, torch.tensor(big.to_numpy())),
        3: Column.from_arrow(dbl),
    }
    return Batch(cols, n), ColRef(f_dec), ColRef(f_big), ColRef(f_dbl)


@pytest.mark.parametrize("groups,where", [(1, False), (3, False), (32, False), (1, True), (5, True)])
def test_fused_states_equal_each_aggregates_own(groups, where):
    """With ``where``, a WHERE folded into the pass (``rows``): the states
    equal those of the rows it keeps, and key -1 counts those rows."""
    batch, d, b, x = _batch(5000, groups)
    positive = Call("gt", (b, Literal(0, T.BIGINT)), T.BOOLEAN)
    doubled = Call("add", (d, d), T.DECIMAL(16, 2))
    aggs = [
        AggCall("sum", (d,), T.DECIMAL(38, 2)),
        AggCall("avg", (d,), T.DOUBLE),
        AggCall("sum", (b,), T.HUGEINT),
        AggCall("sum", (x,), T.DOUBLE),
        AggCall("avg", (x,), T.DOUBLE, filter=positive),
        AggCall("count", (x,), T.BIGINT),
        AggCall("count_star", (), T.BIGINT),
        AggCall("count_star", (), T.BIGINT, filter=positive),
        AggCall("sum", (doubled,), T.DECIMAL(38, 2)),
        AggCall("min", (d,), T.DECIMAL(15, 2)),
        AggCall("sum", (b,), T.HUGEINT, distinct=True),
    ]
    pairs = [(Field(100 + i, f"a{i}", a.type), a) for i, a in enumerate(aggs)]
    gid = torch.randint(0, groups, (batch.num_rows,), generator=torch.Generator().manual_seed(groups))
    slots = G.Slots(gid, groups)
    rows = None
    if where:
        rows = torch.rand(batch.num_rows, generator=torch.Generator().manual_seed(7)) < 0.4
    fused = FG.fused_states(pairs, batch, slots, gid if groups > 1 else None, rows=rows)
    assert set(fused) == set(range(9)) | ({-1} if where else set())  # MIN, DISTINCT SUM: their own states
    kept, kept_slots = batch, slots
    if where:
        keep = rows.nonzero().squeeze(1)
        kept, kept_slots = batch.take(keep), G.Slots(gid[keep], groups)
        assert torch.equal(fused[-1][0].data, torch.bincount(gid[keep], minlength=groups))
    for i, (_, agg) in enumerate(pairs):
        if i not in fused or i < 0:
            continue
        own = F.partial_states(agg, kept, kept_slots)
        assert len(own) == len(fused[i]), agg
        for a, b_ in zip(fused[i], own):
            assert a.dtype == b_.dtype, agg
            if a.dtype.kind == "DOUBLE":
                assert torch.allclose(a.data, b_.data, rtol=1e-12, equal_nan=True), agg
            else:
                assert torch.equal(a.data, b_.data), agg


def test_only_on_cuda_and_few_groups():
    batch, d, _, _ = _batch(100, 0)
    pairs = [(Field(9, "s", T.DECIMAL(38, 2)), AggCall("sum", (d,), T.DECIMAL(38, 2)))]
    assert not FG.applies(pairs, G.Slots(torch.zeros(100, dtype=torch.int64), 1), batch, True)  # the CPU
    if torch.cuda.is_available():
        cuda = Batch(
            {
                k: Column(c.dtype, c.data.cuda(), None if c.valid is None else c.valid.cuda())
                for k, c in batch.columns.items()
            },
            100,
            torch.device("cuda"),
        )
        assert FG.applies(pairs, G.Slots(torch.zeros(100, dtype=torch.int64, device="cuda"), 4), cuda, True)
        assert not FG.applies(pairs, G.Slots(torch.zeros(100, dtype=torch.int64, device="cuda"), 4), cuda, False)
        assert not FG.applies(pairs, G.Slots(torch.zeros(100, dtype=torch.int64, device="cuda"), 33), cuda, True)
        many = R.MANY_GROUPS  # and many groups: the atomic kernel (up to ATOMIC_MAX_GROUPS)
        assert FG.applies(pairs, G.Slots(torch.zeros(100, dtype=torch.int64, device="cuda"), many), cuda, True)
        beyond = R.ATOMIC_MAX_GROUPS + 1
        assert not FG.applies(pairs, G.Slots(torch.zeros(100, dtype=torch.int64, device="cuda"), beyond), cuda, True)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("fused", [True, False])
def test_tpch_aggregations_on_cuda(cached_tpch, fused):
    """TPC-H's few-group aggregations (Q1: 4 groups; Q6, Q14, Q19: one) on
    CUDA with the fused pass on and off, in chunks of 997 rows, against DuckDB."""
    import glint
    from glint.testing.compare import compare_query_result
    from glint.workloads import tpch

    d = cached_tpch(0.01)
    con = glint.connect(device="cuda", chunk_rows=997)
    con.sql(f"SET fused_aggregation = {str(fused).lower()}")
    tpch.load_tpch(con, directory=d, progress=False)
    duck = tpch.duckdb_tpch_connection(d)
    for n in (1, 6, 14, 19):
        q = tpch.tpch_query(n)
        assert compare_query_result(q, con.sql(q).arrow(), tpch.duckdb_arrow(duck, q)) == [], n


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("fused", [True, False])
def test_many_group_aggregations_on_cuda(cached_tpch, fused):
    """Aggregations over at least MANY_GROUPS groups (TPC-H Q3 and Q18 by
    order, Q13's counts, and a table with NULLs, DOUBLEs and FILTER) on CUDA
    with the fused pass (the atomic kernel) on and off, against DuckDB."""
    import duckdb

    import glint
    from glint.testing.compare import compare_query_result
    from glint.workloads import tpch

    d = cached_tpch(0.01)
    con = glint.connect(device="cuda", chunk_rows=20_000)
    con.sql(f"SET fused_aggregation = {str(fused).lower()}")
    tpch.load_tpch(con, directory=d, progress=False)
    duck = tpch.duckdb_tpch_connection(d)
    for n in (3, 13, 18):
        q = tpch.tpch_query(n)
        assert compare_query_result(q, con.sql(q).arrow(), tpch.duckdb_arrow(duck, q)) == [], n
    rng = np.random.default_rng(7)
    rows = 300_000
    t = pa.table(
        {
            "g": rng.integers(0, 50_000, rows),
            "d": pa.array(
                [None if x % 7 == 0 else Decimal(int(x)).scaleb(-2) for x in rng.integers(-(10**12), 10**12, rows)],
                pa.decimal128(18, 2),
            ),
            "b": pa.array([None if x % 5 == 0 else int(x) for x in rng.integers(-(2**62), 2**62, rows)], pa.int64()),
            "f": rng.normal(size=rows),
        }
    )
    con.register("t", t)
    ddb = duckdb.connect()
    ddb.register("t", t)
    q = (
        "SELECT g, sum(d) AS s, avg(d) AS a, sum(b) AS sb, count(b) AS nb, count(*) AS n, "
        "sum(f) FILTER (WHERE b > 0) AS sf, count(*) FILTER (WHERE d < 0) AS neg FROM t GROUP BY g ORDER BY g"
    )
    assert compare_query_result(q, con.sql(q).arrow(), ddb.execute(q).arrow()) == []


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_few_groups_are_finished_on_the_host(monkeypatch):
    """The final values of at most HOST_FINAL_ROWS groups are computed on the
    host from the GPU's states (MIN / MAX, which are their state, stay), more
    groups on the GPU; both equal DuckDB's."""
    import duckdb

    import glint
    from glint.exec import aggregate as AG
    from glint.exec import aggregate_functions as F
    from glint.testing.compare import compare_query_result

    seen = []
    final_value = F.final_value

    def spy(agg, cols):
        seen.append((agg.fn, cols[0].device.type))
        return final_value(agg, cols)

    monkeypatch.setattr(F, "final_value", spy)
    rng = np.random.default_rng(5)
    n = 200_000
    t = pa.table(
        {
            "g": rng.integers(0, 1 << 20, n),
            "d": pa.array([Decimal(int(x)).scaleb(-2) for x in rng.integers(-(10**9), 10**9, n)], pa.decimal128(15, 2)),
            "f": rng.normal(size=n),
        }
    )
    con = glint.connect(device="cuda", chunk_rows=50_000)
    con.register("t", t)
    duck = duckdb.connect()
    duck.register("t", t)
    for groups in (4, AG.HOST_FINAL_ROWS * 4):
        seen.clear()
        q = (
            f"SELECT g % {groups} AS k, sum(d) AS s, avg(d) AS a, count(*) AS n, var_pop(f) AS v, min(d) AS lo "
            "FROM t GROUP BY k ORDER BY k"
        )
        assert compare_query_result(q, con.sql(q).arrow(), duck.execute(q).arrow()) == []
        where = dict(seen)
        assert where["min"] == "cuda"
        want = "cpu" if groups <= AG.HOST_FINAL_ROWS else "cuda"
        assert {where[fn] for fn in ("sum", "avg", "count_star", "var_pop")} == {want}, where
