"""Cancelling a running query and watching its progress:
``Connection.interrupt()`` from another thread stops the query at its next
chunk with glint.Interrupted and the connection answers the next query;
``query_progress()`` and the progress callback count the rows scanned."""

import threading
import time

import numpy as np
import pyarrow as pa
import pytest

import glint
from glint.cli.running import progress_line

N = 20_000
# the self cross product of N rows, made in pieces of 1,024 rows: about a minute on one CPU core, and
# long on a GPU too (a piece's few launches take longer than its arithmetic)
LONG = "SELECT max(a.x + b.x) FROM a, a AS b"


@pytest.fixture
def con(device):
    c = glint.connect(device=device, chunk_rows=1024)
    c.register("a", pa.table({"x": np.arange(N, dtype=np.int64)}))
    yield c
    c.close()


def _start(con, sql=LONG):
    """The query running in a thread: (thread, {"error" / "rows", "done" (time)})."""
    out = {}

    def work():
        try:
            out["rows"] = con.sql(sql).fetchall()
        except Exception as e:  # noqa: BLE001 - the test looks at it
            out["error"] = e
        out["done"] = time.monotonic()

    t = threading.Thread(target=work)
    t.start()
    deadline = time.monotonic() + 60
    while con.query_progress() is None and "done" not in out and time.monotonic() < deadline:
        time.sleep(0.02)
    return t, out


def test_interrupt_from_another_thread(con):
    t, out = _start(con)
    time.sleep(0.5)
    assert con.query_progress() is not None
    asked = time.monotonic()
    assert con.interrupt() is True
    t.join(30)
    assert not t.is_alive()
    assert isinstance(out.get("error"), glint.Interrupted), out
    assert out["done"] - asked < 1.0
    # the connection answers the next query, and nothing is left running
    assert con.query_progress() is None
    assert con.sql("SELECT count(*), sum(x) FROM a").fetchall() == [(N, N * (N - 1) // 2)]
    assert con.interrupt() is False


def test_interrupt_is_per_connection(con, device):
    other = glint.connect(device=device)
    t, out = _start(con)
    try:
        assert other.interrupt() is False  # another connection's query is not touched
        time.sleep(0.3)
        assert "done" not in out
    finally:
        con.interrupt()
        t.join(30)
        other.close()
    assert isinstance(out.get("error"), glint.Interrupted)


def test_progress_callback_counts_rows_scanned(device):
    con = glint.connect(device=device, chunk_rows=1000)
    con.register("t", pa.table({"x": np.arange(10_500, dtype=np.int64)}))
    con.register("u", pa.table({"y": np.arange(2_000, dtype=np.int64)}))
    seen = []
    con.set_progress_callback(lambda p: seen.append((p.rows_scanned, p.rows_total)))
    assert con.sql("SELECT count(*) FROM t JOIN u ON t.x = u.y").fetchall() == [(2_000,)]
    rows = [r for r, _ in seen]
    assert len(rows) >= 10 and rows == sorted(set(rows)), rows  # strictly growing
    assert rows[-1] == 12_500 and {total for _, total in seen} == {12_500}
    # chunks that statistics rule out count as read
    seen.clear()
    con.sql("SELECT count(*) FROM t WHERE x > 10_000").fetchall()
    assert seen[-1] == (10_500, 10_500)
    con.set_progress_callback(None)
    seen.clear()
    con.sql("SELECT count(*) FROM t").fetchall()
    assert seen == [] and con.query_progress() is None


class _Terminal:
    """A stream that says it is a terminal (rich draws its progress bar on it)."""

    def __init__(self):
        self.parts = []

    def isatty(self):
        return True

    def write(self, s):
        self.parts.append(s)
        return len(s)

    def flush(self):
        pass


def test_progress_line_shows_rows_scanned_of_a_slow_query(con):
    term = _Terminal()
    t, out = _start(con)
    try:
        with progress_line(con, stream=term, after=0.1):
            time.sleep(0.8)
    finally:
        con.interrupt()
        t.join(30)
    assert f"{2 * N:,} rows scanned" in "".join(term.parts)
    quiet = _Terminal()
    with progress_line(con, stream=quiet, after=0.1):
        con.sql("SELECT 1").fetchall()  # (over before the line would show)
    assert "rows scanned" not in "".join(quiet.parts)
