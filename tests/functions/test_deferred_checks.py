"""Overflow tests queued for the end of a run (glint.functions.deferred): a
run that queues them gives DuckDB's answer, and DuckDB's error where a value
overflows in any chunk (the run is then done again with each test made where
it arises); the checks themselves, queued and read in one transfer. On the
CPU a connection queues them only when told to (``defers_checks``); on CUDA
it always does, and the same tests run there with ``--device cuda``."""

from __future__ import annotations

import logging

import pyarrow as pa
import pytest
import torch

import glint
from glint.columnar import types as T
from glint.errors import ExecutionError
from glint.functions import deferred as D
from glint.functions import fused_values as FV
from glint.plan import typing as ty
from tests.functions.test_fused_values import C, batch

duckdb = pytest.importorskip("duckdb")

ROWS = 4000


def _table() -> pa.Table:
    # the last chunk's rows are the ones that overflow (chunks of 1,000 rows)
    late = [k >= ROWS - 10 for k in range(ROWS)]
    return pa.table(
        {
            "a": pa.array([2**62 if x else k for k, x in enumerate(late)], pa.int64()),
            "b": pa.array([2**62 if x else k % 7 for k, x in enumerate(late)], pa.int64()),
            "i": pa.array([2**30 if x else k for k, x in enumerate(late)], pa.int32()),
            # products near 2**62 that fit: each is looked at exactly, in the run made again
            "n": pa.array([3 * 10**9 + k for k in range(ROWS)], pa.int64()),
            "m": pa.array([-(2**63) if x else k - 1 for k, x in enumerate(late)], pa.int64()),
        }
    )


@pytest.fixture(params=[True, False], ids=["queued", "at-once"])
def con(request, device):
    c = glint.connect(device=device, chunk_rows=1000)
    c.defers_checks = request.param
    c.register("t", _table())
    yield c
    c.close()


@pytest.fixture(scope="module")
def duck():
    d = duckdb.connect()
    d.register("t", _table())
    return d


ERRORS = {
    "SELECT sum(a + b) FROM t": "Overflow in addition of INT64",
    "SELECT max(a - (0 - b)) FROM t": "Overflow in subtraction of INT64",
    "SELECT sum(i + i) FROM t": "Overflow in addition of INT32",
    "SELECT max(a * b) FROM t": "Overflow in multiplication of INT64",
    "SELECT max(m // (0 - 1)) FROM t": "Overflow in division",
}


@pytest.mark.parametrize("sql", list(ERRORS))
def test_an_overflow_in_a_late_chunk_raises_duckdbs_error(con, duck, sql):
    with pytest.raises(duckdb.Error, match="Overflow"):
        duck.sql(sql).fetchall()
    with pytest.raises(glint.GlintError, match=ERRORS[sql]):
        con.sql(sql).fetchall()
    # the connection answers its next query
    assert con.sql("SELECT count(*) FROM t").fetchall() == [(ROWS,)]


def test_values_near_the_limit_that_fit_equal_duckdb(con, duck, caplog):
    sql = "SELECT sum(n * n % 1000), min(n * n), max(n * 3 + a), count(*) FROM t WHERE a < 1000000"
    with caplog.at_level(logging.INFO, logger="glint"):
        assert con.sql(sql).fetchall() == duck.sql(sql).fetchall()
    # a queued test of a product near the limit voids the run once
    assert ("queued value check failed" in caplog.text) == con.defers_checks


def test_queries_without_overflow_run_once(con, duck, caplog):
    sql = "SELECT b, sum(i * 2 + b), sum(a - b), count(*) FROM t WHERE a < 100000 GROUP BY b ORDER BY b"
    with caplog.at_level(logging.INFO, logger="glint"):
        assert con.sql(sql).fetchall() == duck.sql(sql).fetchall()
    assert "queued value check failed" not in caplog.text


def test_checks_are_queued_then_read_together():
    token = D.DEFERRED.set([])
    try:
        D.check(torch.tensor([False, False]), "never")
        D.check(torch.tensor([False, True]), "Out of Range Error: Overflow in addition of INT64")
        queued = D.DEFERRED.get()
    finally:
        D.DEFERRED.reset(token)
    assert len(queued) == 2
    D.verify(queued[:1])  # nothing raised
    with pytest.raises(D.CheckRedo):
        D.verify(queued)
    with pytest.raises(ExecutionError, match="Overflow"):
        D.check(torch.tensor([True]), "Out of Range Error: Overflow")  # nothing queues: at once


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_checks_of_several_devices_are_read_together():
    """A GPU run also queues tests of the values it finishes on the host."""
    queued = []
    token = D.DEFERRED.set(queued)
    try:
        D.check(torch.tensor([False, False], device="cuda"), "never")
        D.check(torch.tensor([False]), "never either")
    finally:
        D.DEFERRED.reset(token)
    D.verify(queued)
    token = D.DEFERRED.set(queued)
    try:
        D.check(torch.tensor([True]), "Out of Range Error: Overflow")
    finally:
        D.DEFERRED.reset(token)
    with pytest.raises(D.CheckRedo):
        D.verify(queued)


def check_queued_kernel_flags(device) -> None:
    """A generated kernel's "a row might overflow" flag, queued: the kernel's
    column stands, the flag voids the run, and the kernel's source is then
    evaluated node by node (fused_value hands back)."""
    b = batch(device, seed=4, nulls=True, big=6 * 10**17)
    e = ty.arith("add", ty.arith("add", C["e"], C["e"]), C["e"])  # DECIMAL(18, 2) sums past 18 digits
    source = FV.lower(e, b)[0]
    assert source not in D.UNFUSED
    token = D.DEFERRED.set([])
    try:
        got = FV.fused_value(e, b)
        queued = D.DEFERRED.get()
    finally:
        D.DEFERRED.reset(token)
    try:
        assert got is not None and got.dtype == T.DECIMAL(18, 2) and len(queued) == 1
        with pytest.raises(D.CheckRedo) as raised:
            D.verify(queued)
        assert raised.value.sources == {source} and source in D.UNFUSED
        assert FV.fused_value(e, b) is None
        fine = batch(device, seed=4, nulls=True)
        assert FV.lower(e, fine)[0] == source and FV.fused_value(e, fine) is None  # (the shape, not the data)
    finally:
        D.UNFUSED.discard(source)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_queued_kernel_flags_on_cuda():
    check_queued_kernel_flags("cuda")


def test_an_overflow_ends_a_recursion_and_a_series(device):
    """Values that drive how much work follows (a recursion's condition, a
    series' bounds) have their queued tests read first: the overflow error,
    not a recursion without end or a series of 2**62 values."""
    con = glint.connect(device=device)
    con.defers_checks = True
    try:
        with pytest.raises(glint.GlintError, match="Overflow in multiplication of INT64"):
            con.sql(
                # (wrapped, the values would never reach 0)
                "WITH RECURSIVE r(n) AS (SELECT 3::BIGINT UNION ALL SELECT n * 3 FROM r WHERE n <> 0) "
                "SELECT count(*) FROM r"
            ).fetchall()
        con.register("t", pa.table({"x": pa.array([2**62, 1], pa.int64())}))
        # (x * 5 wraps to 2**62: a series of 2**62 values)
        with pytest.raises(glint.GlintError, match="Overflow in multiplication of INT64"):
            con.sql("SELECT count(*) FROM t, generate_series(0, x * 5) g").fetchall()
    finally:
        con.close()
