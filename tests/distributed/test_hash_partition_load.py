"""A table hash-partitioned at load keeps its VARCHAR columns of few distinct
strings dictionary-encoded, with one sorted dictionary: queries then group
and compare on codes as they do on a Parquet column's (a GROUP BY on such a
column was four times slower on the loaded table than on the file), and the
answers equal DuckDB's, NULLs included."""

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


def test_few_distinct_strings_stay_dictionary_encoded(loaded):
    con, _ = loaded
    src = con.rank.catalog.table("t")._src
    flag, note = src.table.column("flag"), src.table.column("note")
    assert pa.types.is_dictionary(flag.type) and not pa.types.is_dictionary(note.type)
    d = flag.chunk(0).dictionary.to_pylist()
    assert d == sorted(set(d)) and None not in d
