"""All 22 TPC-H queries, compared row for row with DuckDB on the same Parquet
files (decimals exact, doubles to 1e-9 relative), at SF 0.01 and 0.1."""

import pytest

import glint
from glint.testing.compare import compare_query_result
from glint.workloads import tpch

SFS = [0.01, 0.1]


def _devices(config):
    opt = config.getoption("--device")
    import torch

    if opt == "all":
        return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    return [opt]


@pytest.fixture(scope="module", params=SFS, ids=lambda sf: f"sf{sf}")
def tpch_env(request, cached_tpch):
    sf = request.param
    d = cached_tpch(sf)
    duck = tpch.duckdb_tpch_connection(d)
    cons = {}
    for dev in _devices(request.config):
        con = glint.connect(device=dev)
        tpch.load_tpch(con, directory=d, progress=False)
        cons[dev] = con
    yield sf, cons, duck
    duck.close()


@pytest.mark.parametrize("n", range(1, 23), ids=lambda n: f"q{n:02d}")
def test_tpch_query_matches_duckdb(tpch_env, n):
    sf, cons, duck = tpch_env
    sql = tpch.tpch_query(n)
    expected = tpch.duckdb_arrow(duck, sql)
    for dev, con in cons.items():
        actual = con.sql(sql).arrow()
        diffs = compare_query_result(sql, actual, expected, check_names=True)
        assert not diffs, f"Q{n} on {dev} at SF {sf}:\n" + "\n".join(diffs)
        assert actual.num_rows > 0 or expected.num_rows == 0


@pytest.mark.parametrize("n", [3, 9, 13, 16, 18, 21, 22], ids=lambda n: f"q{n:02d}")
def test_join_pair_chunking_gives_same_results(monkeypatch, cached_tpch, n):
    """Joins expand their matches in bounded chunks; a tiny budget must not change results."""
    import glint.exec.join as join_module

    monkeypatch.setattr(join_module, "PAIR_CHUNK", 97)
    d = cached_tpch(0.01)
    con = glint.connect(device="cpu")
    tpch.load_tpch(con, directory=d, progress=False)
    duck = tpch.duckdb_tpch_connection(d)
    sql = tpch.tpch_query(n)
    assert compare_query_result(sql, con.sql(sql).arrow(), tpch.duckdb_arrow(duck, sql), check_names=True) == []


@pytest.fixture(scope="module")
def pages_env(cached_tpch):
    d = cached_tpch(0.01)
    duck = tpch.duckdb_tpch_connection(d)
    yield d, duck
    duck.close()


@pytest.mark.parametrize("mode", ["device", "raw"])
@pytest.mark.parametrize("n", range(1, 23), ids=lambda n: f"q{n:02d}")
def test_tpch_with_columns_decoded_from_their_pages(monkeypatch, pages_env, n, mode):
    """GLINT_PARQUET_DECODE=device: the numeric columns decoded from their
    Parquet pages by glint.io.parquet_pages (torch on the scan's device)
    instead of pyarrow, with chunks that cut row groups (pieces of one row
    group in two chunks); "raw": the columns the GPU decodes from their
    bytes as stored, the low-cardinality strings as codes included (here
    by the reference decoder); every query as DuckDB answers it."""
    from glint.runtime import trace

    monkeypatch.setenv("GLINT_PARQUET_DECODE", mode)
    d, duck = pages_env
    con = glint.connect(device="cpu", chunk_rows=5000)
    tpch.load_tpch(con, directory=d, progress=False)
    sql = tpch.tpch_query(n)
    trace.start()
    try:
        actual = con.sql(sql).arrow()
    finally:
        events = trace.stop()
    assert compare_query_result(sql, actual, tpch.duckdb_arrow(duck, sql), check_names=True) == []
    assert any(e["name"] == "device decode" for e in events)  # the path was taken


@pytest.mark.parametrize("priority", [0, 1, 2])
@pytest.mark.parametrize("n", [2, 5, 9, 21], ids=lambda n: f"q{n:02d}")
def test_scan_task_orders_give_the_same_results(monkeypatch, pages_env, n, priority):
    """The scans' tasks in the shared decoding pool by the chunk the query
    needs soonest (the scan_priority setting: 2 by (chunk, scan), 1 by
    (scan, chunk), 0 first come first served), with small chunks so that
    every scan of the multi-table queries has several: DuckDB's answers."""
    d, duck = pages_env
    con = glint.connect(device="cpu", chunk_rows=3000, scan_priority=priority, parquet_decode="raw")
    tpch.load_tpch(con, directory=d, progress=False)
    sql = tpch.tpch_query(n)
    assert compare_query_result(sql, con.sql(sql).arrow(), tpch.duckdb_arrow(duck, sql), check_names=True) == []
