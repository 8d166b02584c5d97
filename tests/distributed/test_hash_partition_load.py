"""A table hash-partitioned at load stays on each rank's device as the load's
exchange left it (glint.io.held), its VARCHAR columns of few distinct
strings as codes into one sorted dictionary: queries then group and compare
on codes as they do on a Parquet column's (a GROUP BY on such a column was
four times slower on the loaded table than on the file), and the answers
equal DuckDB's, NULLs included. A share that does not fit beside what the
device holds stays on the host."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import glint
from glint.testing.compare import compare_query_result

N = 6000


def _table() -> pa.Table:
    flags = ["R", "A", None, "N", "A ", "é"]
    return pa.table(
        {
            "k": list(range(N)),
            # dictionary-encoded, as a Parquet file's column of few distinct strings is read
            "flag": pa.array([flags[(i * 7) % len(flags)] for i in range(N)]).dictionary_encode(),
            "note": [f"note {i:05d} {'x' * (i % 13)}" if i % 11 else None for i in range(N)],
            "v": [i % 97 for i in range(N)],
        }
    )


@pytest.fixture(scope="module")
def loaded():
    t = _table()
    con = glint.connect(ranks=2, device="cpu", replicate_rows=0, chunk_rows=1024)
    con.register("t", t, partition_by="k")
    duck = duckdb.connect()
    duck.register("t", t)
    yield con, duck
    con.close()
    duck.close()


QUERIES = [
    "SELECT flag, count(*), sum(v) FROM t GROUP BY flag ORDER BY flag NULLS FIRST",
    "SELECT flag, min(note), max(note), count(note) FROM t WHERE flag IN ('A', 'é') OR flag IS NULL GROUP BY flag",
    "SELECT count(*) FROM t WHERE flag < 'N' AND note LIKE 'note 0%'",
    "SELECT a.flag, count(*) FROM t a JOIN t b ON a.k = b.k + 1 AND a.flag = b.flag GROUP BY a.flag",
    "SELECT note, flag FROM t WHERE v = 3 ORDER BY k LIMIT 20",
]


@pytest.mark.parametrize("sql", QUERIES)
def test_loaded_table_answers_as_duckdb(loaded, sql):
    con, duck = loaded
    assert compare_query_result(sql, con.sql(sql).arrow(), duck.execute(sql).fetch_arrow_table()) == []


def test_rows_stay_on_the_device_with_few_distinct_strings_as_sorted_codes(loaded):
    con, _ = loaded
    t = con.rank.catalog.table("t")
    src = t.held_on(t._src.device)
    assert src is not None and src.nbytes() > 0
    chunk = t.chunks(1024)[0]
    cols = src.columns(chunk.pieces, ["flag", "note"])
    flag, note = cols["flag"].dictionary, cols["note"].dictionary
    d = flag.to_pylist()
    assert flag.sorted_unique and d == sorted(set(d), key=str.encode) and len(d) <= 6
    # a piece of a column of many strings holds its own rows' strings only
    assert not note.sorted_unique and len(note) == chunk.rows


def test_a_share_that_does_not_fit_is_held_on_the_host():
    t = _table()
    con = glint.connect(ranks=2, device="cpu", replicate_rows=0, chunk_rows=1024, memory_limit="96KB")
    try:
        con.register("t", t, partition_by="k")
        held = con.rank.catalog.table("t")
        assert held.held_on("cpu") is None and held.num_rows > 0
        duck = duckdb.connect()
        duck.register("t", t)
        for sql in QUERIES:
            assert compare_query_result(sql, con.sql(sql).arrow(), duck.execute(sql).fetch_arrow_table()) == []
    finally:
        con.close()


def test_rows_inserted_into_a_held_table(loaded):
    con, duck = loaded
    sql = "SELECT flag, count(*), sum(v), max(note) FROM t GROUP BY flag ORDER BY flag NULLS FIRST"
    con2 = glint.connect(ranks=2, device="cpu", replicate_rows=0, chunk_rows=1024)
    try:
        t = _table()
        con2.register("t", t, partition_by="k")
        con2.sql("INSERT INTO t VALUES (100000, 'A', 'inserted', 5), (100001, 'Z', NULL, 6)")
        d = duckdb.connect()
        d.register("src", t)
        d.execute("CREATE TABLE t AS SELECT k, flag::VARCHAR AS flag, note, v FROM src")
        d.execute("INSERT INTO t VALUES (100000, 'A', 'inserted', 5), (100001, 'Z', NULL, 6)")
        assert compare_query_result(sql, con2.sql(sql).arrow(), d.execute(sql).fetch_arrow_table()) == []
    finally:
        con2.close()
