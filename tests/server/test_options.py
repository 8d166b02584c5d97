"""The server's options, with servers in the test's process: TLS with a
self-signed certificate made for the test, basic authentication with the token
as the password (JDBC's user and password), the time limit of a query, a
client's limit of queries at once, queries waiting for the device rather than
failing; and ``glint serve`` refusing to listen off loopback without a token."""

from __future__ import annotations

import shutil
import subprocess
import threading
import time

import adbc_driver_manager
import numpy as np
import pyarrow as pa
import pyarrow.flight as flight
import pytest

import glint
from glint.__main__ import main
from glint.cli.serve import data_directories
from glint.server.commands import pack
from glint.server.flight import GlintFlightServer, ServerOptions
from glint.server.proto import flight_sql_pb2 as sql
from tests.server.conftest import TOKEN, connect, query


@pytest.fixture
def served_in_process(request):
    """(a function starting a server on a free port, with the options given)."""
    servers = []

    def start(location="grpc://127.0.0.1:0", tls=None, **options):
        con = glint.connect(device="cpu", chunk_rows=1 << 14)
        con.register("t", pa.table({"a": [1, 2, 3]}))
        x = np.arange(1 << 20, dtype=np.int64)
        con.register("big", pa.table({"x": x, "y": x * 3}))
        server = GlintFlightServer(con, location, ServerOptions(**options), tls)
        threading.Thread(target=server.serve, daemon=True).start()
        servers.append((server, con))
        return server

    yield start
    for server, con in servers:
        server.shutdown()
        con.close()


def _self_signed(tmp_path) -> tuple[bytes, bytes]:
    try:
        from cryptography import x509  # noqa: F401
    except ImportError:
        if shutil.which("openssl") is None:
            pytest.skip("neither the cryptography package nor the openssl command is here to make a certificate")
        subprocess.run(
            [
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-addext",
                "subjectAltName=DNS:localhost,IP:127.0.0.1",
                "-keyout",
                str(tmp_path / "key.pem"),
                "-out",
                str(tmp_path / "cert.pem"),
            ],
            check=True,
            capture_output=True,
        )
        return (tmp_path / "cert.pem").read_bytes(), (tmp_path / "key.pem").read_bytes()
    return _with_cryptography()


def _with_cryptography() -> tuple[bytes, bytes]:
    import datetime as dt
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def test_tls_with_a_self_signed_certificate(served_in_process, tmp_path):
    cert, key = _self_signed(tmp_path)
    server = served_in_process("grpc+tls://127.0.0.1:0", tls=[(cert, key)], token=TOKEN)
    uri = f"grpc+tls://127.0.0.1:{server.port}"
    con = connect(uri, **{"adbc.flight.sql.client_option.tls_root_certs": cert.decode()})
    try:
        assert query(con, "SELECT sum(a) AS s FROM t").column("s")[0].as_py() == 6
    finally:
        con.close()
    # a client that does not trust the certificate gets nowhere
    untrusting = connect(uri)
    try:
        with pytest.raises(Exception, match="(?i)certificate|handshake|tls|unavailable"):
            query(untrusting, "SELECT 1")
    finally:
        untrusting.close()


def test_basic_authentication_with_the_token_as_password(served_in_process):
    server = served_in_process(token=TOKEN)
    c = flight.connect(f"grpc://127.0.0.1:{server.port}")
    header = c.authenticate_basic_token("anyone", TOKEN)
    assert header == (b"authorization", f"Bearer {TOKEN}".encode())
    options = flight.FlightCallOptions(headers=[header])
    info = c.get_flight_info(flight.FlightDescriptor.for_command(pack(sql.CommandGetCatalogs())), options)
    assert c.do_get(info.endpoints[0].ticket, options).read_all().column(0).to_pylist() == ["memory"]
    with pytest.raises(flight.FlightUnauthenticatedError):
        c.authenticate_basic_token("anyone", "not the token")


def test_serve_refuses_other_addresses_without_a_token(monkeypatch, capsys):
    monkeypatch.delenv("GLINT_TOKEN", raising=False)
    assert main(["serve", "--host", "0.0.0.0"]) == 1
    err = capsys.readouterr().err
    assert "refusing to serve on 0.0.0.0 without a token" in err and "Traceback" not in err
    assert main(["serve", "--host", "127.0.0.1", "--tls-cert", "x.pem"]) == 1
    assert "TLS needs both --tls-cert and --tls-key" in capsys.readouterr().err


def test_the_default_allowed_directories_are_the_served_ones(tmp_path):
    (tmp_path / "d").mkdir()
    f = tmp_path / "e" / "x.parquet"
    f.parent.mkdir()
    f.write_bytes(b"")
    got = data_directories([str(tmp_path / "d"), f"named={f}"], [str(tmp_path / "c" / "*.csv")])
    assert got == [str(tmp_path / "d"), str(tmp_path / "e"), str(tmp_path / "c")]


SORTED = "SELECT x, y, x + y AS z FROM big ORDER BY x DESC"


def _hold_a_stream(con):
    """A cursor streaming a sorted result, one batch read: its query holds a
    slot of its client and the device until the cursor is closed."""
    cur = con.cursor()
    cur.execute(SORTED)
    reader = cur.fetch_record_batch()
    assert reader.read_next_batch().num_rows > 0
    return cur, reader


def test_a_query_past_its_time_limit_is_stopped(served_in_process):
    server = served_in_process(token=TOKEN, query_timeout=0.2)
    con = connect(f"grpc://127.0.0.1:{server.port}")
    try:
        with pytest.raises(adbc_driver_manager.Error, match="DEADLINE_EXCEEDED|TIMEOUT") as e:
            # (about 2.7e8 pairs: far past 0.2 s on any machine, stopped between the join's pieces)
            query(con, "SELECT a.x % 7, count(*) FROM big a JOIN big b ON a.x % 4096 = b.y % 4096 GROUP BY 1")
        assert "the query ran past its time limit (0.2 s)" in str(e.value)
        assert query(con, "SELECT 42 AS answer").to_pylist() == [{"answer": 42}]
        states = query(con, "SELECT state, error FROM glint_queries WHERE sql LIKE '%JOIN big b%'").to_pylist()
        assert states[0]["state"] == "failed" and "time limit" in states[0]["error"]
    finally:
        con.close()


def test_a_client_past_its_queries_at_once_is_refused(served_in_process):
    server = served_in_process(token=TOKEN, max_client_queries=1)
    con = connect(f"grpc://127.0.0.1:{server.port}")
    try:
        cur, _ = _hold_a_stream(con)
        with pytest.raises(adbc_driver_manager.Error, match="(?s)already runs 1 queries.*Unavailable"):
            query(con, "SELECT 1")
        cur.close()
        assert query(con, "SELECT 2 AS two").to_pylist() == [{"two": 2}]
    finally:
        con.close()


def test_queries_wait_for_the_device_rather_than_fail(served_in_process):
    server = served_in_process(token=TOKEN, max_running=1)
    uri = f"grpc://127.0.0.1:{server.port}"
    holder, waiter, observer = connect(uri), connect(uri), connect(uri)
    try:
        cur, _ = _hold_a_stream(holder)
        answers = []
        t = threading.Thread(target=lambda: answers.append(query(waiter, "SELECT count(*) AS n FROM big")))
        t.start()
        deadline = time.monotonic() + 20
        while server.admission.waiting() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        (mem,) = query(observer, "SELECT running, queued FROM glint_memory").to_pylist()
        assert mem == {"running": 1, "queued": 1}  # (the observer itself did not wait)
        states = query(observer, "SELECT state FROM glint_queries WHERE sql LIKE 'SELECT count(*)%'")
        assert states.column(0).to_pylist() == ["queued"]
        cur.close()  # the first query ends; the waiting one runs
        t.join(30)
        assert [a.to_pylist() for a in answers] == [[{"n": 1 << 20}]]
    finally:
        for c in (holder, waiter, observer):
            c.close()


@pytest.mark.parametrize(
    "error, flight_class, status",
    [
        (glint.errors.ParseError("syntax error at line 1, column 3"), pa.ArrowInvalid, "INVALID_ARGUMENT"),
        (glint.errors.ColumnNotFound('Column "x" not found'), pa.ArrowInvalid, "INVALID_ARGUMENT"),
        (glint.errors.ExecutionError("Overflow in multiplication"), pa.ArrowInvalid, "INVALID_ARGUMENT"),
        (glint.errors.NotSupported("LATERAL joins"), pa.ArrowNotImplementedError, "UNIMPLEMENTED"),
        (glint.errors.PermissionDenied("Permission Error: ..."), flight.FlightUnauthorizedError, "PERMISSION_DENIED"),
        (glint.errors.OutOfMemory("out of GPU memory in Join"), flight.FlightUnavailableError, "UNAVAILABLE"),
        (glint.errors.QueryTimeout("past its time limit"), flight.FlightTimedOutError, "DEADLINE_EXCEEDED"),
        (glint.errors.Cancelled("the query was cancelled"), flight.FlightCancelledError, "CANCELLED"),
        (RuntimeError("a bug"), flight.FlightInternalError, "INTERNAL"),
    ],
)
def test_errors_get_their_flight_status(error, flight_class, status):
    """(The status pyarrow sends for each class: docs/server.md's table.)"""
    from glint.server.errors import flight_error

    got = flight_error(error)
    assert isinstance(got, flight_class), (status, type(got))
    assert str(error) in str(got)
    if isinstance(error, glint.errors.OutOfMemory):
        assert str(got).startswith("Out of Memory Error: ")
