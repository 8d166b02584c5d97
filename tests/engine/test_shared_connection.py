"""What a server builds on in the engine: parameters bound to a statement,
sessions sharing one connection, results streamed chunk by chunk, and a run
stopped by its interrupt hook."""

from __future__ import annotations

import datetime as dt
import threading
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.engine.shared_connection import open_session
from glint.errors import BinderError, Cancelled, GlintError


@pytest.fixture
def con():
    c = glint.connect(device="cpu", chunk_rows=1000)
    x = np.arange(10_000, dtype=np.int64)
    c.register("t", pa.table({"x": x, "s": pa.array([f"v{i % 7}" for i in x])}))
    yield c
    c.close()


# ------------------------------------------------------------------ parameters
def test_parameters_are_typed_constants(con):
    got = con.sql("SELECT count(*) FROM t WHERE x < ? AND s = ?", [100, "v3"]).fetchall()
    assert got == con.sql("SELECT count(*) FROM t WHERE x < 100 AND s = 'v3'").fetchall()
    row = con.sql(
        "SELECT $1 AS i, $2 AS f, $3 AS d, $4 AS day, $5 AS ts, $6 AS b, $7 AS n, $1 + 1 AS j",
        [2**40, 0.5, Decimal("12.345"), dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 12), True, None],
    ).fetchall()
    assert row == [
        (2**40, 0.5, Decimal("12.345"), dt.date(2024, 2, 29), dt.datetime(2024, 1, 1, 12), True, None, 2**40 + 1)
    ]
    assert con.sql("SELECT $name || $Name AS twice", {"name": "ab"}).fetchall() == [("abab",)]
    # an Arrow scalar keeps its type
    assert con.sql("SELECT ? AS v", [pa.scalar(7, pa.int64())]).arrow().schema.field("v").type == pa.int64()


@pytest.mark.parametrize(
    "sql, params, message",
    [
        ("SELECT ?", None, "takes 1 parameter but 0 values were given"),
        ("SELECT ?, ?", [1], "takes 2 parameters but 1 value was given"),
        ("SELECT $2", [1, 2, 3], "takes 2 parameters but 3 values were given"),
        ("SELECT $a", [1], "takes its values by name"),
        ("SELECT $a", {"b": 1}, "has no parameter $b"),
        ("SELECT ?, $1", [1, 2], "Mixing positional"),
        ("SELECT 1; SELECT ?", [1], "one statement"),
    ],
)
def test_parameter_errors_name_the_problem(con, sql, params, message):
    with pytest.raises(BinderError, match=message.replace("$", r"\$")):
        con.sql(sql, params)


def test_parameters_in_statements_that_write(con):
    con.sql("CREATE TABLE w (a INTEGER, b VARCHAR)")
    assert con.sql("INSERT INTO w VALUES (?, ?), (?, ?)", [1, "x", 2, None]).fetchall() == [(2,)]
    con.sql("UPDATE w SET b = ? WHERE a = ?", ["y", 2])
    assert con.sql("SELECT * FROM w ORDER BY a").fetchall() == [(1, "x"), (2, "y")]
    assert "Project" in con.sql("EXPLAIN SELECT * FROM w WHERE a = ?", [1]).fetchall()[0][0]


# ------------------------------------------------------------------ sessions
def test_sessions_share_tables_and_keep_their_own(con):
    a, b = open_session(con), open_session(con)
    a.sql("CREATE TEMP TABLE mine AS SELECT 1 AS one")
    a.sql("CREATE TABLE shared AS SELECT 2 AS two")
    a.sql("CREATE VIEW v AS SELECT count(*) AS n FROM t")
    assert a.has_table("mine") and not b.has_table("mine") and not con.has_table("mine")
    assert b.sql("SELECT * FROM shared").fetchall() == [(2,)] and con.has_table("shared")
    assert a.sql("SELECT n FROM v").fetchall() == [(10_000,)]
    with pytest.raises(GlintError, match='"v" does not exist'):
        b.sql("SELECT n FROM v")
    # a session's temporary table hides a shared one of its name, and goes with the session
    b.sql("CREATE TEMP TABLE shared AS SELECT 3 AS three")
    assert b.sql("SELECT * FROM shared").fetchall() == [(3,)] and a.sql("SELECT * FROM shared").fetchall() == [(2,)]
    b.sql("DROP TABLE shared")
    assert b.sql("SELECT * FROM shared").fetchall() == [(2,)]
    a.sql("INSERT INTO mine VALUES (5)")
    assert sorted(a.sql("SELECT * FROM mine").fetchall()) == [(1,), (5,)]
    a.close()
    assert not a.has_table("mine") and con.has_table("shared") and con.has_table("t")


def test_session_settings_are_its_own_but_the_memory_limit(con):
    a = open_session(con)
    a.sql("SET chunk_rows = 777")
    assert a.chunk_rows == 777 and con.chunk_rows == 1000
    with pytest.raises(GlintError, match="memory_limit is the server's"):
        a.sql("SET memory_limit = '1GB'")
    a.sql("RESET chunk_rows")
    assert a.chunk_rows == 1000


def test_sessions_query_at_once(con):
    sessions = [open_session(con) for _ in range(4)]
    expected = con.sql("SELECT s, sum(x) FROM t GROUP BY s ORDER BY s").fetchall()
    results, errors = [], []

    def run(s):
        try:
            for _ in range(3):
                results.append(s.sql("SELECT s, sum(x) FROM t GROUP BY s ORDER BY s").fetchall())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(s,)) for s in sessions]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 12 and all(r == expected for r in results)


# ------------------------------------------------------------------ streaming and interrupts
def test_a_result_streams_chunk_by_chunk_in_its_schema(con):
    r = con.sql("SELECT x, s, x * 2 AS y FROM t WHERE x % 3 = 0")
    assert r.schema == pa.schema([("x", pa.int64()), ("s", pa.string()), ("y", pa.int64())])
    parts = list(r.stream())
    assert len(parts) > 1 and all(p.schema == r.schema for p in parts)
    assert pa.concat_tables(parts).equals(con.sql("SELECT x, s, x * 2 AS y FROM t WHERE x % 3 = 0").arrow())


def test_a_stream_closed_early_gives_back_its_memory(con):
    it = con.sql("SELECT * FROM t ORDER BY x DESC").stream()
    assert next(it).column("x")[0].as_py() == 9_999
    assert con.memory.reserved() > 0
    it.close()
    assert con.memory.reserved() == 0


def test_the_interrupt_hook_stops_a_run(con):
    r = con.sql("SELECT s, count(*) FROM t GROUP BY s")
    calls = []

    def interrupt():
        calls.append(1)
        if len(calls) > 3:
            raise Cancelled("stopped")

    r.interrupt = interrupt
    with pytest.raises(Cancelled, match="stopped"):
        r.arrow()
    assert con.memory.reserved() == 0
    r.interrupt = None
    assert len(r.arrow()) == 7


def test_system_tables_are_read_anew_by_each_query(con):
    n = iter(range(100))
    con.system_tables["glint_counter"] = lambda: pa.table({"n": [next(n)]})
    assert con.sql("SELECT n FROM glint_counter").fetchall() == [(0,)]
    assert con.sql("SELECT c.n + 10 FROM glint_counter AS c").fetchall() == [(11,)]
    assert "glint_counter" not in con.table_names()
