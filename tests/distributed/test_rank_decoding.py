"""A rank's share of a Parquet table made of whole row groups is decoded as
the file's own row groups are: from its pages on the scan's device (on a
GPU from the bytes as stored; on the CPU the reference decoder runs when
GLINT_PARQUET_DECODE=raw), not by pyarrow. A share cut through row groups
is read by pyarrow. Results equal DuckDB's either way, hash-partitioned
loads included."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import glint
from glint.testing.compare import compare_query_result

N = 20_000


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("rank_decoding")
    modes = ["AIR", "MAIL", "SHIP", "RAIL"]
    # required columns (no definition levels), as TPC-H's files are: the GPU decodes those
    # from their bytes as stored
    cols = {
        "k": pa.array(range(N), pa.int64()),
        "g": pa.array([i % 7 for i in range(N)], pa.int32()),
        "price": pa.array([(i * 37) % 10_000 for i in range(N)], pa.int64()),
        "mode": pa.array([modes[(i * 5) % 4] for i in range(N)]),
        "d": pa.array([i * 0.25 for i in range(N)], pa.float64()),
    }
    schema = pa.schema([pa.field(name, a.type, nullable=False) for name, a in cols.items()])
    t = pa.table(cols, schema=schema)
    many = d / "many.parquet"  # 10 row groups: whole ones for each of 2 ranks
    pq.write_table(t, many, row_group_size=2_000, use_dictionary=["mode"])
    one = d / "one.parquet"  # 1 row group: the ranks' shares cut through it
    pq.write_table(t, one, use_dictionary=["mode"])
    return many, one


@pytest.fixture(scope="module")
def con(files, monkeypatch_module):
    monkeypatch_module.setenv("GLINT_PARQUET_DECODE", "raw")  # the CPU's reference of the GPU decoder
    many, one = files
    c = glint.connect(ranks=2, device="cpu", replicate_rows=0, chunk_rows=4096)
    c.read_parquet(str(many), "many")
    c.read_parquet(str(one), "one")
    c.read_parquet(str(many), "hashed", partition_by="g")
    yield c
    c.close()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_whole_row_groups_decode_on_the_device(con):
    cols = ["k", "g", "price", "mode", "d"]
    assert con.rank.catalog.table("many").raw_columns(cols) == cols
    assert con.rank.catalog.table("one").raw_columns(cols) == []


@pytest.mark.parametrize("table", ["many", "one", "hashed"])
@pytest.mark.parametrize(
    "sql",
    [
        "SELECT g, mode, count(*), sum(price), min(d), max(k) FROM {t} GROUP BY g, mode",
        "SELECT count(*), sum(price) FROM {t} WHERE mode IN ('AIR', 'RAIL') AND d < 2000",
        "SELECT a.mode, count(*) FROM {t} a JOIN {t} b ON a.k = b.k + 3 WHERE b.g = 2 GROUP BY a.mode",
    ],
)
def test_answers_equal_duckdb(con, files, table, sql):
    path = files[1] if table == "one" else files[0]
    q = sql.format(t=table)
    duck = duckdb.connect()
    duck.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{path}')")
    try:
        assert compare_query_result(q, con.sql(q).arrow(), duck.execute(q).fetch_arrow_table()) == []
    finally:
        duck.close()
