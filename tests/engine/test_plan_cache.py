"""A query run again reuses its plan (glint.engine.plan_cache) only while
what it was planned from is unchanged: every change of a table, a view, a
setting or a file it reads gives a fresh plan and the new rows."""

from __future__ import annotations

import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import glint
from glint.engine.shared_connection import open_session

Q = "SELECT count(*) AS n, sum(x) AS s FROM t WHERE x % 3 = 0"


@pytest.fixture
def con(device):
    c = glint.connect(device=device, chunk_rows=1000)
    c.register("t", pa.table({"x": np.arange(10_000, dtype=np.int64)}))
    yield c
    c.close()


def _expected(xs) -> list[tuple]:
    kept = [x for x in xs if x % 3 == 0]
    return [(len(kept), sum(kept))]


def test_a_query_run_again_reuses_its_plan(con):
    first = con.sql(Q)
    assert not first.plan_cached
    again = con.sql(Q)
    assert again.plan_cached
    assert again.physical is first.physical
    assert first.fetchall() == again.fetchall() == _expected(range(10_000))
    # each Result runs the plan anew
    assert con.sql(Q).fetchall() == _expected(range(10_000))
    assert not con.sql(Q + " ").plan_cached  # by its text


def test_replacing_or_dropping_a_table_plans_again(con):
    con.sql(Q).fetchall()
    con.register("t", pa.table({"x": np.arange(30, dtype=np.int64)}))
    r = con.sql(Q)
    assert not r.plan_cached and r.fetchall() == _expected(range(30))
    con.unregister("t")
    assert len(con._plans) == 0  # a dropped table's data is not kept alive by a plan
    with pytest.raises(glint.CatalogError):
        con.sql(Q)


def test_statements_that_change_rows_views_or_settings_plan_again(con):
    con.sql(Q).fetchall()
    con.sql("INSERT INTO t VALUES (30000), (30001)")
    r = con.sql(Q)
    assert not r.plan_cached
    assert r.fetchall() == _expected([*range(10_000), 30000, 30001])
    assert con.sql(Q).plan_cached

    con.sql("CREATE VIEW v AS SELECT x FROM t WHERE x < 10")
    assert con.sql("SELECT count(*) FROM v").fetchall() == [(10,)]
    con.sql("CREATE OR REPLACE VIEW v AS SELECT x FROM t WHERE x < 20")
    assert con.sql("SELECT count(*) FROM v").fetchall() == [(20,)]

    q = "SELECT current_setting('chunk_rows') AS c"
    assert con.sql(q).fetchall() == [(1000,)]
    con.sql("SET chunk_rows = 2000")
    r = con.sql(q)
    assert not r.plan_cached and r.fetchall() == [(2000,)]

    con.sql("DELETE FROM t WHERE x >= 30000")
    assert con.sql(Q).fetchall() == _expected(range(10_000))


def test_queries_of_files_parameters_or_several_statements_are_planned_each_time(con, tmp_path):
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3]}), path)
    q = f"SELECT sum(x) FROM '{path}'"
    assert con.sql(q).fetchall() == [(6,)]
    assert not con.sql(q).plan_cached
    pq.write_table(pa.table({"x": [10, 20]}), path)
    assert con.sql(q).fetchall() == [(30,)]

    p = "SELECT count(*) FROM t WHERE x < ?"
    assert con.sql(p, [5]).fetchall() == [(5,)]
    r = con.sql(p, [7])
    assert not r.plan_cached and r.fetchall() == [(7,)]

    two = "SELECT 1; SELECT count(*) FROM t"
    con.sql(two)
    assert not con.sql(two).plan_cached


def test_the_cache_is_bounded_and_can_be_turned_off(con):
    con.sql("SET plan_cache_entries = 2")
    qs = [f"SELECT count(*) FROM t WHERE x < {k}" for k in (1, 2, 3)]
    for q in qs:
        con.sql(q)
    assert len(con._plans) == 2
    assert not con.sql(qs[0]).plan_cached  # the least recently used went first
    assert con.sql(qs[2]).plan_cached
    con.sql("SET plan_cache_entries = 0")
    con.sql(qs[2])
    assert not con.sql(qs[2]).plan_cached


def test_sessions_keep_plans_of_their_own(con):
    a, b = open_session(con), open_session(con)
    q = "SELECT sum(x) FROM t"
    assert a.sql(q).fetchall() == b.sql(q).fetchall() == [(sum(range(10_000)),)]
    assert a.sql(q).plan_cached and b.sql(q).plan_cached
    a.sql("CREATE TEMP TABLE t AS SELECT 5 AS x")  # hides the shared t, in a only
    ra, rb = a.sql(q), b.sql(q)
    assert not ra.plan_cached and not rb.plan_cached
    assert ra.fetchall() == [(5,)]
    assert rb.fetchall() == [(sum(range(10_000)),)]
    a.close()
    b.close()


def test_threads_run_one_cached_plan_at_once(con):
    con.sql(Q).fetchall()
    want = _expected(range(10_000))
    got, errors = [], []

    def run():
        try:
            for _ in range(5):
                got.append(con.sql(Q).fetchall())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert got == [want] * 20
