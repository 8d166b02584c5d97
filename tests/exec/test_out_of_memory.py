"""A device out-of-memory error becomes glint.OutOfMemory naming the operator
and the bytes asked for, and the connection keeps working."""

import pyarrow as pa
import pytest
import torch

import glint
from glint.exec.aggregate import HashAggregateExec


def test_oom_is_reported_and_connection_survives(monkeypatch):
    con = glint.connect(device="cpu")
    con.register("t", pa.table({"a": [1, 2, 3]}))

    def boom(self, ctx, *inputs):
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 12.50 GiB. GPU 0 has ...")
        yield  # a generator, as every operator's stream is

    with monkeypatch.context() as m:
        m.setattr(HashAggregateExec, "stream", boom)
        with pytest.raises(glint.OutOfMemory) as info:
            con.sql("SELECT a, count(*) FROM t GROUP BY a").fetchall()
    msg = str(info.value)
    assert "HashAggregate" in msg and "12.50 GiB" in msg
    assert con.sql("SELECT a, count(*) FROM t GROUP BY a ORDER BY a").fetchall() == [(1, 1), (2, 1), (3, 1)]


def test_out_of_memory_retries_with_smaller_chunks(monkeypatch):
    """A query that runs out of memory is run again without the cached table
    chunks, then with chunks a quarter the size, until it fits."""
    from glint.exec.scan import ScanExec

    con = glint.connect(device="cpu", chunk_rows=1 << 20)
    n = 300_000
    con.register("t", pa.table({"a": pa.array(range(n), pa.int64()), "g": pa.array([i % 7 for i in range(n)])}))
    sql = "SELECT g, sum(a) AS s, count(*) AS c FROM t GROUP BY g ORDER BY g"
    expected = [(g, sum(range(g, n, 7)), len(range(g, n, 7))) for g in range(7)]
    orig = ScanExec.stream
    seen = []

    def stream(self, ctx, *inputs):
        seen.append(ctx.chunk_rows)
        if ctx.chunk_rows > 1 << 17:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")
        yield from orig(self, ctx, *inputs)

    with monkeypatch.context() as m:
        m.setattr(ScanExec, "stream", stream)
        res = con.sql(sql)
        assert res.fetchall() == expected
    assert seen == [1 << 20, 1 << 18, 1 << 16]
    assert len(res.retries) == 2 and "Scan" in res.retries[0] and "1048576 rows" in res.retries[0]
    assert con.chunk_rows == 1 << 20  # only that run used smaller chunks
    assert con.sql(sql).fetchall() == expected and con.sql(sql).retries == []


def test_out_of_memory_retries_are_bounded(monkeypatch):
    con = glint.connect(device="cpu", chunk_rows=1 << 24)
    con.register("t", pa.table({"a": [1, 2, 3]}))
    calls = []

    def boom(self, ctx, *inputs):
        calls.append(ctx.chunk_rows)
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 1.00 GiB.")
        yield

    with monkeypatch.context() as m:
        m.setattr(HashAggregateExec, "stream", boom)
        with pytest.raises(glint.OutOfMemory, match="HashAggregate"):
            con.sql("SELECT a, count(*) FROM t GROUP BY a").fetchall()
    assert calls == [1 << 24, 1 << 22, 1 << 20, 1 << 18, 1 << 16]


def test_result_larger_than_host_memory_is_a_clear_error(monkeypatch):
    """The host memory guard for what no operator bounds: a result that grows
    past what the host can hold stops with OutOfMemory, not a killed process."""
    monkeypatch.setenv("GLINT_RESULT_LIMIT", "64KB")  # (read when the connection opens)
    con = glint.connect(device="cpu", chunk_rows=1 << 12)
    con.register("t", pa.table({"a": list(range(20_000))}))
    with pytest.raises(glint.OutOfMemory, match=r"query's result passed .* rows.*add a LIMIT") as info:
        con.sql("SELECT x.a, y.a AS b FROM t x, t y WHERE y.a < 100").fetchall()
    assert "retries" not in str(info.value)
    assert con.sql("SELECT count(*) FROM t").fetchall() == [(20_000,)]  # small results still fine


def test_last_retry_runs_without_the_cache(monkeypatch):
    """When chunks cannot get smaller, the last re-run caches nothing (a full
    cache is what a small budget cannot hold beside the query); the cache is
    back on for the next query."""
    con = glint.connect(device="cpu", chunk_rows=1 << 16, memory_limit="64MB")
    n = 200_000
    con.register("t", pa.table({"a": pa.array(range(n), pa.int64()), "g": pa.array([i % 5 for i in range(n)])}))
    sql = "SELECT g, sum(a) AS s FROM t GROUP BY g ORDER BY g"
    expected = [(g, sum(range(g, n, 5))) for g in range(5)]
    orig = HashAggregateExec.stream

    def stream(self, ctx, inp):
        for b in orig(self, ctx, inp):
            if ctx.memory.cache_bytes() > 0:
                raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 8.00 MiB.")
            yield b

    with monkeypatch.context() as m:
        m.setattr(HashAggregateExec, "stream", stream)
        res = con.sql(sql)
        assert res.fetchall() == expected
        assert len(res.retries) >= 1 and con.memory.cache_enabled
    assert con.sql(sql).fetchall() == expected and con.cached_bytes() > 0
