"""The 99 TPC-DS queries (DuckDB's texts, dsdgen's data at SF 0.1), compared
row for row with DuckDB on the same Parquet files. A query that is not
supported would be listed in KNOWN and checked to fail with its known, named
error, so that a fix (or a change of error) shows here."""

import pytest

import glint
from glint.testing.compare import compare_query_result
from glint.workloads import tpcds

pytest.importorskip("duckdb")

SF = 0.1
# query -> (error type, text the message holds): not supported yet
KNOWN: dict[int, tuple[type, str]] = {}


@pytest.fixture(scope="module")
def tpcds_env(cached_tpcds):
    try:
        d = cached_tpcds(SF)
    except glint.GlintError as e:  # no tpcds extension for this duckdb
        pytest.skip(str(e))
    con = glint.connect(device="cpu")
    tpcds.load_tpcds(con, directory=d, progress=False)
    duck = tpcds.duckdb_tpcds_connection(d)
    yield con, duck
    duck.close()
    con.close()


@pytest.mark.parametrize("n", range(1, tpcds.NUM_QUERIES + 1), ids=lambda n: f"q{n:02d}")
def test_tpcds_query_matches_duckdb(tpcds_env, n):
    con, duck = tpcds_env
    sql = tpcds.tpcds_query(n)
    if n in KNOWN:
        err, text = KNOWN[n]
        with pytest.raises(err, match=text):
            con.sql(sql).arrow()
        return
    assert compare_query_result(sql, con.sql(sql).arrow(), tpcds.duckdb_arrow(duck, sql), check_names=True) == []
