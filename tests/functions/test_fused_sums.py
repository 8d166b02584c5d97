"""COUNT / SUM / AVG whose inputs are computed inside the summing kernel
(glint.functions.fused_sums): the states equal those of the path that
evaluates each input into a column first and sums the columns
(glint.exec.few_groups), for expressions and plain columns with and without
NULLs, a DOUBLE column, COUNT(*), one group or several (int8 and int64 group
ids), with and without a folded WHERE; where a row might overflow the kernel
hands the chunk back. The kernel runs under TRITON_INTERPRET=1
(tests/kernels/triton_interpreted.py) and on CUDA; through SQL, TPC-H Q1
takes it on CUDA (tests/exec/test_few_groups.py, tests/workloads)."""

from __future__ import annotations

import pytest
import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.exec import few_groups as FG
from glint.functions import fused_sums as FS
from glint.kernels import groupby as G
from glint.plan import typing as ty
from glint.plan.expr import AggCall, ColRef, Field, Literal
from tests.functions.test_fused_values import C, N, batch

X = Field(6, "x", T.DOUBLE)


def _batch(device, nulls: bool, big: int) -> Batch:
    b = batch(device, seed=9, nulls=nulls, big=big)
    g = torch.Generator().manual_seed(2)
    x = Column(T.DOUBLE, torch.randn(N, generator=g, dtype=torch.float64) * 1e6, torch.rand(N, generator=g) > 0.3)
    return Batch({**b.columns, X.id: x.to(device)}, N)


def _aggs():
    one = Literal(100, T.DECIMAL(3, 2))
    price, disc = C["d"], C["q"]
    disc_price = ty.arith("mul", price, ty.arith("sub", one, disc))  # TPC-H Q1's shape
    ints = ty.arith("add", ty.arith("mul", C["i"], C["i"]), C["l"])
    aggs = [
        AggCall("sum", (disc_price,), T.DECIMAL(38, 5)),
        AggCall("avg", (disc_price,), T.DOUBLE),
        AggCall("sum", (price,), T.DECIMAL(38, 2)),
        AggCall("count", (ints,), T.BIGINT),
        AggCall("sum", (ints,), T.HUGEINT),
        AggCall("count_star", (), T.BIGINT),
        AggCall("sum", (ColRef(X),), T.DOUBLE),
        AggCall("avg", (C["e"],), T.DOUBLE),
    ]
    return [(Field(100 + i, f"a{i}", a.type), a) for i, a in enumerate(aggs)]


def _equal(got: dict, want: dict) -> None:
    assert set(got) == set(want)
    for i in want:
        assert len(got[i]) == len(want[i]), i
        for a, b in zip(got[i], want[i]):
            assert a.dtype == b.dtype, i
            if a.dtype.kind == "DOUBLE":
                assert torch.allclose(a.data.cpu(), b.data.cpu(), rtol=1e-12, equal_nan=True), i
            else:
                assert torch.equal(a.data.cpu(), b.data.cpu()), i


def check_sums(device) -> None:
    """The kernel's states against few_groups' unfused path, over several
    group counts, masks and NULLs; then a chunk whose values might overflow
    handed back."""
    pairs = _aggs()
    assert FS.takes(pairs)
    for nulls in (True, False):
        b = _batch(device, nulls, 10**12)
        for groups, narrow in ((1, False), (4, True), (7, False), (32, True)):
            gen = torch.Generator().manual_seed(groups)
            gid = torch.randint(0, groups, (N,), generator=gen)
            gid = (gid.to(torch.int8) if narrow else gid).to(device)
            ids = gid if groups > 1 else None
            for rows in (None, (torch.rand(N, generator=gen) < 0.6).to(device)):
                got = FS.fused_sums(pairs, b, groups, ids, rows, counts=True)
                assert got is not None, (groups, rows is None)
                # the path that evaluates the inputs into columns first (no fused expressions set)
                want = FG.fused_states(pairs, b, G.Slots(gid.long(), groups), ids, rows, counts=True)
                _equal(got, want)
    # DECIMAL(18, 2) values near the limit: the product's estimate may overflow on some row
    b = _batch(device, True, 6 * 10**17)
    big = ty.arith("mul", ty.arith("mul", C["e"], Literal(3, T.INTEGER)), Literal(2, T.INTEGER))
    pairs = [(Field(200, "s", T.DECIMAL(38, 2)), AggCall("sum", (big,), T.DECIMAL(38, 2)))]
    assert FS.takes(pairs)
    assert FS.fused_sums(pairs, b, 1, None, None, counts=False) is None


def test_takes_only_what_it_sums():
    pairs = _aggs()
    assert FS.takes(pairs)
    assert not FS.takes([(f, a) for f, a in pairs if a.fn != "sum" or a.args[0] is C["d"]][2:3])  # no expression
    minimum = (Field(300, "m", T.DECIMAL(15, 2)), AggCall("min", (C["d"],), T.DECIMAL(15, 2)))
    assert not FS.takes([*pairs, minimum])
    filtered = AggCall("sum", pairs[0][1].args, T.DECIMAL(38, 5), filter=Literal(True, T.BOOLEAN))
    assert not FS.takes([(pairs[0][0], filtered)])


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fused_sums_on_cuda():
    check_sums("cuda")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_suspected_overflow_through_sql_on_cuda(monkeypatch):
    """BIGINT products between 2**62 and 2**63: the kernel's floating
    estimate suspects an overflow (none happens), so the run's queued flag
    re-runs the query with the inputs evaluated first; the answer equals
    DuckDB's, and the kernel took the first run."""
    import numpy as np
    import pyarrow as pa

    from glint.testing.compare import compare_query_result
    from tests.registered import duckdb_with, glint_with, spy_on

    rng = np.random.default_rng(5)
    n = 50_000
    a = rng.integers(2_200_000_000, 3_000_000_000, n)
    t = pa.table({"g": pa.array(rng.integers(0, 3, n), pa.int32()), "a": pa.array(a), "b": pa.array(a[::-1].copy())})
    seen = spy_on(monkeypatch, FS, "fused_sums", lambda out: out is not None)
    con = glint_with({"t": t}, "cuda")
    sql = "SELECT g, sum(a * b - a), avg(a * b - b), count(*) FROM t GROUP BY g ORDER BY g"
    got = con.sql(sql).arrow()
    duck = duckdb_with({"t": t})
    want = duck.sql(sql).arrow()
    assert compare_query_result(sql, got, want) == []
    assert any(seen)
