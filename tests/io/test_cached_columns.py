"""Table chunks kept compact in the device cache (glint.io.cached_columns):
narrowed by their file's statistics, checked on the device, widened when a
scan takes them; and the cache's scan-resistant admission (a table larger
than the cache keeps its first chunks). Results compared with DuckDB's."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

import glint
from glint.columnar import types as T
from glint.columnar.column import Column
from glint.io.cached_columns import CompactColumn, check, compact, expand, narrow_for
from glint.testing.compare import compare_query_result

N = 20_000
QUERIES = [
    "SELECT count(*), sum(i), sum(b), min(d), max(d), sum(m), sum(x) FROM t",
    "SELECT s, count(*), sum(m), min(i) FROM t GROUP BY s ORDER BY s",
    "SELECT d, sum(b) FROM t WHERE i BETWEEN 100 AND 120 GROUP BY d ORDER BY d",
    "SELECT count(*) FROM t WHERE big > 5000000000 AND m < 3.5",
    "SELECT i, big FROM t WHERE b IS NULL ORDER BY i LIMIT 5",
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("compact")
    rng = np.random.default_rng(7)
    b = rng.integers(-100, 100, N)
    t = pa.table(
        {
            "i": pa.array(rng.integers(0, 30_000, N).astype("int32")),  # int16
            "b": pa.array([None if k % 17 == 0 else int(v) for k, v in enumerate(b)], pa.int64()),  # int8
            "big": pa.array(rng.integers(0, 10**10, N)),  # stays int64
            "d": pa.array(rng.integers(8000, 11000, N).astype("int32"), pa.int32()).cast(pa.date32()),  # int16
            "m": pa.array([Decimal(int(v)) / 100 for v in rng.integers(0, 1000, N)], pa.decimal128(12, 2)),
            "s": pa.array([f"v{k % 5}" for k in range(N)]),  # codes: int8
            "x": rng.random(N),  # DOUBLE: stays
        }
    )
    pq.write_table(t, d / "t.parquet", row_group_size=2000)
    duck = duckdb.connect()
    duck.sql(f"CREATE VIEW t AS SELECT * FROM read_parquet('{d / 't.parquet'}')")
    yield d / "t.parquet", duck
    duck.close()


def _check(con, duck, sql):
    expected = duck.sql(sql).arrow()
    if hasattr(expected, "read_all"):
        expected = expected.read_all()
    diffs = compare_query_result(sql, con.sql(sql).arrow(), expected)
    assert not diffs, f"{sql}\n" + "\n".join(diffs)


def test_compact_values():
    ints = torch.tensor([3, -7, 100], dtype=torch.int32)
    assert narrow_for(Column(T.INTEGER, ints), (-7, 100, 0)) == torch.int8
    assert narrow_for(Column(T.INTEGER, ints), (-7, 1000, 0)) == torch.int16
    assert narrow_for(Column(T.INTEGER, ints), None) is None  # no statistics: kept as it is
    assert narrow_for(Column(T.BIGINT, ints.long()), (0, 2**31, 0)) is None
    assert narrow_for(Column(T.BIGINT, ints.long()), (0, 2**31 - 1, 0)) == torch.int32
    assert narrow_for(Column(T.DOUBLE, ints.double()), (0, 1, 0)) is None
    assert narrow_for(Column(T.DECIMAL(38, 2), ints.long()), (0, 1, 0)) is None
    assert narrow_for(Column(T.INTEGER, ints[:0]), (0, 1, 0)) is None  # no rows
    strings = Column.from_arrow(pa.array(["a", None, "b", "a"]))
    assert narrow_for(strings, None) == torch.int8  # codes below the dictionary's 3 entries
    k = compact(strings, None)
    assert check([k]) == [True] and k.nbytes() == 4 + 4 + strings.dictionary.nbytes()  # codes, validity, strings
    back = expand(k)
    assert back.to_arrow().to_pylist() == ["a", None, "b", "a"] and back.data.dtype == torch.int32
    # values outside the statistics' range: the flag tells, the value is never used
    ok = compact(Column(T.INTEGER, ints), (0, 50, 0))  # wrong, but every value fits int8
    assert ok.data.dtype == torch.int8 and check([ok]) == [True]
    bad = compact(Column(T.INTEGER, ints * 3), (0, 50, 0))  # 300 does not
    assert bad.data.dtype == torch.int8 and check([bad, k]) == [False, True]
    with pytest.raises(AssertionError):
        expand(bad)
    assert check([Column(T.INTEGER, ints)]) == [True]  # a wide value is always usable


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def _device(device):
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    return device


@pytest.mark.parametrize("device", DEVICES)
def test_warm_runs_from_compact_chunks(files, device):
    path, duck = files
    con = glint.connect(device=_device(device), chunk_rows=4000, compact_cache="on")
    con.read_parquet(str(path), "t")
    for sql in QUERIES:
        for _ in range(2):
            _check(con, duck, sql)
            res = con.sql(sql)
            res.arrow()
            assert res.io.cache_hits > 0 and res.io.decoded_bytes == 0, (sql, res.io)
    values = {k[4]: v for k, v in con.memory._cache.items() for v in [v.value]}
    kinds = {c: (type(v).__name__, v.data.dtype) for c, v in values.items()}
    assert kinds["i"] == ("CompactColumn", torch.int16)
    assert kinds["b"] == ("CompactColumn", torch.int8)
    assert kinds["d"] == ("CompactColumn", torch.int16)
    assert kinds["m"] == ("CompactColumn", torch.int16)
    assert kinds["s"] == ("CompactColumn", torch.int8)
    assert kinds["big"] == ("Column", torch.int64) and kinds["x"] == ("Column", torch.float64)
    # off: the chunks are cached as they are
    con = glint.connect(device=device, chunk_rows=4000, compact_cache="off")
    con.read_parquet(str(path), "t")
    _check(con, duck, QUERIES[0])
    assert not any(type(e.value) is CompactColumn for e in con.memory._cache.values())


@pytest.mark.parametrize("device", DEVICES)
def test_wrong_statistics_are_caught(files, monkeypatch, device):
    """A file whose statistics understate a column's range: the compact
    chunk's flag is read before any use, the chunk read again and cached
    wide from then on; the results stay right."""
    path, duck = files
    con = glint.connect(device=_device(device), chunk_rows=4000, compact_cache="on")
    con.read_parquet(str(path), "t")
    table = con.table("t")
    true_stats = type(table).chunk_stats

    def lying(self, chunk, column):
        st = true_stats(self, chunk, column)
        return (0, 10, st[2]) if column == "i" and st is not None else st

    monkeypatch.setattr(type(table), "chunk_stats", lying)
    sql = "SELECT sum(i), count(*), max(i) FROM t"
    for _ in range(3):
        _check(con, duck, sql)
    keys = [k for k in con.memory.wide_keys if k[4] == "i"]
    assert len(keys) == N // 4000
    assert all(type(con.memory._cache[k].value) is Column for k in keys)


def test_a_table_larger_than_the_cache_keeps_its_first_chunks(files):
    """Under a limit that holds part of the table, each warm run finds the
    chunks cached first (evicting the oldest would find none)."""
    path, duck = files
    con = glint.connect(device="cpu", chunk_rows=2000, memory_limit="2MB", compact_cache="off")
    con.read_parquet(str(path), "t")
    sql = "SELECT sum(big), sum(x), count(*) FROM t"  # 16 bytes a row: 320 KB, in 10 chunks
    con.memory.headroom = con.memory.limit - 200_000  # room for about six of them
    hits, ios = [], []
    for _ in range(3):
        _check(con, duck, sql)
        res = con.sql(sql)
        res.arrow()
        hits.append(res.io.cache_hits)
        ios.append(res.io)
    assert 0 < hits[1] == hits[2] < 20, hits
    # the chunks read from the host in a warm run are not kept: the cache is full of the run's own
    io = ios[-1]
    assert io.cache_kept == 0 and io.cache_refused == 20 - hits[2] and io.cache_evicted_own == 0, io
    assert "device cache: 0 column chunks kept" in res.explain(analyze=True)


def test_narrow_uploads_check_the_values_against_lying_statistics():
    """A host column is copied up narrowed only where its values fit: file
    statistics that understate the range are caught on the host."""
    from types import SimpleNamespace

    import numpy as np

    from glint.io.chunk_upload import ChunkUploader
    from glint.runtime.settings import Settings

    stats = {"a": (0, 10, 0), "b": (0, 10, 0), "c": None}
    table = SimpleNamespace(
        schema={"a": T.INTEGER, "b": T.BIGINT, "c": T.INTEGER}, chunk_stats=lambda chunk, c: stats[c]
    )
    up = SimpleNamespace(settings=Settings(), table=table)
    host = {
        "a": [Column(T.INTEGER, torch.tensor([1, 2, 10], dtype=torch.int32))],
        "b": [Column(T.BIGINT, torch.tensor([1, 2])), Column(T.BIGINT, torch.tensor([300]))],  # 300: not int8
        "c": [Column(T.INTEGER, torch.tensor([1], dtype=torch.int32))],
    }
    assert ChunkUploader._narrow_types(up, None, host) == {"a": np.dtype(np.int8)}
