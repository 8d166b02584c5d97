"""TPC-H's 22 queries through ``glint serve`` over Flight SQL (ADBC), each
answer compared with DuckDB's; then 8 clients running 5 queries each at once."""

from __future__ import annotations

import threading

import pytest

from glint.testing.compare import compare_query_result
from glint.workloads import tpch
from tests.server.conftest import connect, query


@pytest.fixture(scope="module")
def duck(served_files):
    con = tpch.duckdb_tpch_connection(served_files[0])
    yield con
    con.close()


@pytest.fixture(scope="module")
def client(served):
    con = connect(served)
    yield con
    con.close()


@pytest.mark.parametrize("n", range(1, 23), ids=lambda n: f"q{n:02d}")
def test_tpch_query_over_flight_sql_matches_duckdb(client, duck, n):
    sql = tpch.tpch_query(n)
    actual = query(client, sql)
    expected = tpch.duckdb_arrow(duck, sql)
    diffs = compare_query_result(sql, actual, expected)
    assert not diffs, f"Q{n} over Flight SQL:\n" + "\n".join(diffs)
    assert actual.num_rows == expected.num_rows


CONCURRENT = [1, 3, 5, 6, 10, 12, 14, 18]


def test_eight_clients_run_five_queries_each_at_once(served, duck):
    expected = {n: tpch.duckdb_arrow(duck, tpch.tpch_query(n)) for n in CONCURRENT}
    failures: list[str] = []
    start = threading.Barrier(8)

    def client(i: int) -> None:
        try:
            con = connect(served)
            try:
                start.wait(30)
                for k in range(5):
                    n = CONCURRENT[(i + k) % len(CONCURRENT)]
                    sql = tpch.tpch_query(n)
                    diffs = compare_query_result(sql, query(con, sql), expected[n])
                    if diffs:
                        failures.append(f"client {i}, Q{n}: " + "; ".join(diffs[:3]))
            finally:
                con.close()
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(f"client {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "a client did not finish"
    assert not failures, "\n".join(failures)
    # each client had its own session, and every query was logged
    with connect(served) as con:
        recent = query(con, "SELECT client, state FROM glint_queries WHERE kind = 'query' AND sql LIKE '%lineitem%'")
    assert len(set(recent.column("client").to_pylist())) >= 8
