"""Statements over Flight SQL against ``glint serve``: prepared statements
with parameters, updates and DDL, bulk ingest of a pandas DataFrame, the
sessions of several clients, catalog metadata, errors and their statuses, a
wrong token, cancellation, a client that dies in the middle of a stream, and
the log line of each query."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap
import time
from decimal import Decimal

import adbc_driver_manager
import pandas as pd
import pyarrow as pa
import pyarrow.flight as flight
import pytest

from glint.server.commands import pack
from glint.server.proto import flight_pb2 as fpb
from glint.server.proto import flight_sql_pb2 as sql
from tests.server.conftest import BIG_ROWS, ROOT, TOKEN, connect, query


@pytest.fixture(scope="module")
def client(served):
    con = connect(served)
    yield con
    con.close()


def _memory(served) -> dict:
    with connect(served) as con:
        return query(con, "SELECT * FROM glint_memory").to_pylist()[0]


# ------------------------------------------------------------------ statements
def test_prepared_statement_with_parameters(client):
    with client.cursor() as cur:
        sql_text = "SELECT o_orderkey, o_totalprice FROM orders WHERE o_orderdate < ? AND o_totalprice > ? ORDER BY 1"
        cur.adbc_prepare(sql_text)
        cur.execute(sql_text, (dt.date(1992, 1, 10), 100000.0))
        first = cur.fetch_arrow_table()
        cur.execute(sql_text, (dt.date(1992, 1, 5), 200000.0))  # the same statement, new values
        second = cur.fetch_arrow_table()
    expected = query(
        client,
        "SELECT o_orderkey, o_totalprice FROM orders WHERE o_orderdate < DATE '1992-01-10' "
        "AND o_totalprice > 100000 ORDER BY 1",
    )
    assert first.num_rows > 0 and first.to_pylist() == expected.to_pylist()
    assert 0 < second.num_rows < first.num_rows
    assert all(r["o_totalprice"] > Decimal(200000) for r in second.to_pylist())
    # numbered parameters, and a parameter of each kind
    got = query(client, "SELECT $2 || 'x' AS s, $1 + 1 AS n, $3 AS d", (41, "a", Decimal("1.25")))
    assert got.to_pylist() == [{"s": "ax", "n": 42, "d": Decimal("1.25")}]


def test_wrong_number_of_parameters_is_refused(client):
    with pytest.raises(adbc_driver_manager.ProgrammingError, match="takes 2 parameters but 1 w"):
        query(client, "SELECT ? + ?", (1,))


def test_ingest_a_dataframe_then_query_it(client):
    df = pd.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "name": ["a", "b", None, "d"],
            "price": [1.5, 2.5, 3.5, None],
            "at": pd.to_datetime(
                ["2024-01-01 10:00:00.123456789", "2024-01-02", "2024-01-03", "2024-01-04"], format="ISO8601"
            ),
        }
    )
    with client.cursor() as cur:
        assert cur.adbc_ingest("ingested", df, mode="create") == 4
        assert cur.adbc_ingest("ingested", df.iloc[:2], mode="append") == 2
        with pytest.raises(adbc_driver_manager.Error, match="already exists"):
            cur.adbc_ingest("ingested", df, mode="create")
    got = query(client, "SELECT name, count(*) AS n, sum(price) AS p FROM ingested GROUP BY name ORDER BY name")
    assert got.to_pylist() == [
        {"name": "a", "n": 2, "p": 3.0},
        {"name": "b", "n": 2, "p": 5.0},
        {"name": "d", "n": 1, "p": None},
        {"name": None, "n": 1, "p": 3.5},
    ]
    at = query(client, "SELECT min(at) AS at FROM ingested").column("at")[0].as_py()
    assert at == dt.datetime(2024, 1, 1, 10, 0, 0, 123456)  # nanoseconds cut to microseconds, as DuckDB does


def test_updates_and_ddl(client):
    with client.cursor() as cur:
        cur.execute("CREATE TABLE upd (k INTEGER, v VARCHAR)")
        cur.adbc_statement.set_sql_query("INSERT INTO upd VALUES (1, 'a'), (2, 'b'), (3, 'c')")
        assert cur.adbc_statement.execute_update() == 3
        cur.adbc_statement.set_sql_query("UPDATE upd SET v = v || '!' WHERE k >= 2")
        assert cur.adbc_statement.execute_update() == 2
        cur.adbc_statement.set_sql_query("DELETE FROM upd WHERE k = 1")
        assert cur.adbc_statement.execute_update() == 1
    assert query(client, "SELECT * FROM upd ORDER BY k").to_pylist() == [{"k": 2, "v": "b!"}, {"k": 3, "v": "c!"}]


def test_sessions_keep_their_own_temporary_tables_and_settings(served, client):
    other = connect(served)
    try:
        with client.cursor() as cur:
            cur.execute("CREATE TEMP TABLE mine AS SELECT 7 AS seven")
            cur.execute("CREATE TABLE shared_one AS SELECT 1 AS one")
            cur.execute("SET chunk_rows = 1234")
        assert query(client, "SELECT * FROM mine").to_pylist() == [{"seven": 7}]
        with pytest.raises(adbc_driver_manager.ProgrammingError, match='Table "mine" does not exist'):
            query(other, "SELECT * FROM mine")
        assert query(other, "SELECT * FROM shared_one").to_pylist() == [{"one": 1}]
        setting = "SELECT current_setting('chunk_rows') AS c"
        assert query(client, setting).to_pylist() == [{"c": 1234}]
        assert query(other, setting).to_pylist() == [{"c": 65536}]
        with pytest.raises(adbc_driver_manager.ProgrammingError, match="memory_limit is the server's"):
            query(other, "SET memory_limit = '1GB'")
    finally:
        other.close()


# ------------------------------------------------------------------ metadata
def test_catalog_metadata(client):
    info = client.adbc_get_info()
    assert info["vendor_name"] == "glint"
    objects = client.adbc_get_objects(depth="all", table_name_filter="line%").read_all().to_pylist()
    assert [c["catalog_name"] for c in objects] == ["memory"]
    (schema,) = objects[0]["catalog_db_schemas"]
    assert schema["db_schema_name"] == "main"
    (table,) = schema["db_schema_tables"]
    assert table["table_name"] == "lineitem" and table["table_type"] == "TABLE"
    assert [c["column_name"] for c in table["table_columns"]][:3] == ["l_orderkey", "l_partkey", "l_suppkey"]
    assert client.adbc_get_table_schema("orders").field("o_totalprice").type == pa.decimal128(15, 2)
    assert set(client.adbc_get_table_types()) == {"TABLE", "VIEW", "LOCAL TEMPORARY", "SYSTEM TABLE"}


def test_flight_sql_catalog_commands(served):
    """GetPrimaryKeys (none), GetXdbcTypeInfo and GetSqlInfo as a raw Flight client reads them."""
    c = _flight_client(served)
    keys = _read(c, sql.CommandGetPrimaryKeys(table="orders"))
    assert keys.num_rows == 0 and keys.schema.names[-1] == "key_sequence"
    types = _read(c, sql.CommandGetXdbcTypeInfo())
    assert {"BIGINT", "DECIMAL", "VARCHAR", "DATE", "TIMESTAMP"} <= set(types.column("type_name").to_pylist())
    info = _read(c, sql.CommandGetSqlInfo(info=[sql.FLIGHT_SQL_SERVER_NAME, sql.SQL_IDENTIFIER_QUOTE_CHAR]))
    assert info.column("value").to_pylist() == ["glint", '"']


# ------------------------------------------------------------------ errors
def test_bad_query_is_invalid_argument_with_its_position(client):
    with pytest.raises(adbc_driver_manager.ProgrammingError) as e:
        query(client, "SELECT l_orderkey FROM lineitem WHERE l_nope > 1")
    text = str(e.value)
    assert "INVALID_ARGUMENT" in text and "l_nope" in text and "line 1, column" in text
    assert "Traceback" not in text
    with pytest.raises(adbc_driver_manager.ProgrammingError, match="INVALID_ARGUMENT.*syntax error"):
        query(client, "SELEC 1")


def test_wrong_token_is_refused(served):
    for token in ("wrong", None):
        con = connect(served, token=token)
        try:
            with pytest.raises(adbc_driver_manager.Error, match="UNAUTHENTICATED"):
                query(con, "SELECT 1")
        finally:
            con.close()
    c = flight.connect(served.uri)
    with pytest.raises(flight.FlightUnauthenticatedError):
        c.get_flight_info(flight.FlightDescriptor.for_command(pack(sql.CommandGetCatalogs())))


# ------------------------------------------------------------------ cancellation
def _flight_client(served) -> flight.FlightClient:
    return flight.connect(served.uri)


def _options() -> flight.FlightCallOptions:
    return flight.FlightCallOptions(headers=[(b"authorization", f"Bearer {TOKEN}".encode())])


def _read(c, command) -> pa.Table:
    info = c.get_flight_info(flight.FlightDescriptor.for_command(pack(command)), _options())
    return c.do_get(info.endpoints[0].ticket, _options()).read_all()


def _wait_for(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def test_a_query_cancelled_mid_stream_frees_its_memory(served):
    before = _memory(served)["reserved"]
    c = _flight_client(served)
    descriptor = flight.FlightDescriptor.for_command(
        pack(sql.CommandStatementQuery(query="SELECT x, y, x + y AS z, x * 2 AS w FROM big ORDER BY x DESC"))
    )
    info = c.get_flight_info(descriptor, _options())
    reader = c.do_get(info.endpoints[0].ticket, _options())
    first = reader.read_chunk().data
    assert first.num_rows > 0 and first.column(0)[0].as_py() == BIG_ROWS - 1
    held = _memory(served)
    assert held["reserved"] > before and held["running"] >= 1  # the sort's input is held while it streams
    request = fpb.CancelFlightInfoRequest(info=fpb.FlightInfo.FromString(info.serialize()))
    (result,) = list(c.do_action(flight.Action("CancelFlightInfo", request.SerializeToString()), _options()))
    assert fpb.CancelFlightInfoResult.FromString(result.body.to_pybytes()).status == fpb.CANCEL_STATUS_CANCELLED
    # (chunk by chunk: pyarrow's read_all turns a CANCELLED status into a KeyboardInterrupt)
    with pytest.raises(flight.FlightCancelledError, match="the query was cancelled"):
        while True:
            reader.read_chunk()
    assert _wait_for(lambda: _memory(served)["reserved"] == before and _memory(served)["running"] == 0)
    with connect(served) as con:
        states = query(con, "SELECT state FROM glint_queries WHERE sql LIKE '%ORDER BY x DESC'").column(0)
    assert states.to_pylist()[-1] == "cancelled"


_DYING_CLIENT = textwrap.dedent(
    """
    import os, sys
    import adbc_driver_flightsql.dbapi as dbapi
    con = dbapi.connect(sys.argv[1], db_kwargs={"adbc.flight.sql.authorization_header": "Bearer " + sys.argv[2]},
                        autocommit=True)
    cur = con.cursor()
    cur.execute("SELECT x, y, x + y AS z, y * 2 AS w FROM big ORDER BY y DESC")
    reader = cur.fetch_record_batch()
    reader.read_next_batch()
    print("streaming", flush=True)
    os._exit(0)  # gone mid-stream, without closing anything
    """
)


def test_a_client_killed_mid_stream_leaves_the_server_serving(served):
    before = _memory(served)["reserved"]
    out = subprocess.run(
        [sys.executable, "-c", _DYING_CLIENT, served.uri, TOKEN], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert "streaming" in out.stdout, out.stderr
    assert _wait_for(lambda: _memory(served)["reserved"] == before and _memory(served)["running"] == 0)
    with connect(served) as con:
        assert query(con, "SELECT count(*) AS n FROM big").to_pylist() == [{"n": BIG_ROWS}]
        states = query(con, "SELECT state FROM glint_queries WHERE sql LIKE '%ORDER BY y DESC'").column(0)
    assert states.to_pylist()[-1] == "cancelled"


def test_each_query_has_a_log_line(served, client):
    query(client, "SELECT 4242 AS logged")
    assert _wait_for(lambda: "'SELECT 4242 AS logged'" in served.log_text())
    line = next(x for x in served.log_text().splitlines() if "'SELECT 4242 AS logged'" in x)
    for word in ("client=", " done ", "sql=", "rows=1 ", "bytes=", "time=", "peak_memory="):
        assert word in line, line
