"""The server's record of its queries: one :class:`QueryRecord` per statement
a client runs (queued, running, then done, failed or cancelled), its log line
when it ends, and the ``glint_queries`` system table of the running and the
recent ones (``SELECT * FROM glint_queries``).

A record is also the query's controls while it runs: its ``interrupt`` is the
ExecContext hook called before every operator's batches, which stops the run
(glint.errors.Cancelled) once the query is cancelled (CancelFlightInfo), its
client is gone, or it passed its time limit (QueryTimeout); and which samples
the device memory in use, for the record's peak.

>>> log = QueryLog(recent=2)
>>> r = log.start("client-1", "SELECT 42", "query")
>>> log.finish(r, rows=1, nbytes=8)
>>> log.table().select(["query_id", "client", "state", "rows"]).to_pylist()
[{'query_id': 1, 'client': 'client-1', 'state': 'done', 'rows': 1}]
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import logging
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import pyarrow as pa

from glint.errors import Cancelled, QueryTimeout
from glint.runtime.memory import format_bytes

log = logging.getLogger("glint.server")

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"

QUERIES_SCHEMA = pa.schema(
    [
        ("query_id", pa.int64()),
        ("client", pa.string()),
        ("kind", pa.string()),
        ("state", pa.string()),
        ("sql", pa.string()),
        ("sql_digest", pa.string()),
        ("submitted", pa.timestamp("us")),
        ("queued_s", pa.float64()),
        ("elapsed_s", pa.float64()),
        ("rows", pa.int64()),
        ("bytes", pa.int64()),
        ("peak_memory", pa.int64()),
        ("error", pa.string()),
    ]
)


def sql_digest(text: str) -> str:
    """A short digest of a statement's text, its whitespace and case folded.

    >>> sql_digest("SELECT  1") == sql_digest("select 1")
    True
    """
    folded = re.sub(r"\s+", " ", text.strip()).lower()
    return hashlib.sha1(folded.encode()).hexdigest()[:12]


@dataclass(eq=False)
class QueryRecord:
    id: int
    client: str
    sql: str
    kind: str  # query, update, ingest, prepare
    submitted: float = field(default_factory=time.time)
    state: str = QUEUED
    started: float | None = None  # admitted to the device (perf_counter)
    finished: float | None = None
    rows: int = 0
    bytes: int = 0
    peak_memory: int = 0
    error: str | None = None
    time_limit: float | None = None  # seconds from submission
    memory: object = None  # the connection's MemoryManager, sampled for the peak
    client_gone: object = None  # a function: True once the client hung up
    cancelled: threading.Event = field(default_factory=threading.Event)
    handle: bytes | None = None  # the statement handle its client reads it by (a ticket)
    _t0: float = field(default_factory=time.perf_counter)

    @property
    def digest(self) -> str:
        return sql_digest(self.sql)

    def elapsed(self) -> float:
        return (self.finished if self.finished is not None else time.perf_counter()) - self._t0

    def queued_for(self) -> float:
        end = self.started if self.started is not None else (self.finished or time.perf_counter())
        return end - self._t0

    def interrupt(self) -> None:
        """The run's hook (ExecContext.interrupt): raises Cancelled to stop it."""
        if self.cancelled.is_set():
            raise Cancelled("the query was cancelled")
        if self.client_gone is not None and self.client_gone():
            self.cancelled.set()
            raise Cancelled("the query was cancelled: its client hung up")
        if self.time_limit is not None and self.elapsed() > self.time_limit:
            raise QueryTimeout(f"the query ran past its time limit ({self.time_limit:g} s)")
        m = self.memory
        if m is not None:
            self.peak_memory = max(self.peak_memory, m.used() - m.cache_bytes())

    def cancel(self) -> bool:
        """Asks the query to stop; False when it had already ended."""
        if self.state in (DONE, FAILED, CANCELLED):
            return False
        self.cancelled.set()
        return True


class QueryLog:
    """The running queries and the last ``recent`` finished ones."""

    def __init__(self, recent: int = 1000):
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._running: dict[int, QueryRecord] = {}
        self._recent: deque[QueryRecord] = deque(maxlen=recent)

    def start(self, client: str, sql: str, kind: str, time_limit: float | None = None, memory=None) -> QueryRecord:
        r = QueryRecord(next(self._ids), client, sql, kind, time_limit=time_limit, memory=memory)
        with self._lock:
            self._running[r.id] = r
        return r

    def finish(self, r: QueryRecord, rows: int | None = None, nbytes: int | None = None, error=None) -> None:
        """Ends a record (once: later calls change nothing) and logs its line."""
        with self._lock:
            if self._running.pop(r.id, None) is None:
                return
            self._recent.append(r)
        r.finished = time.perf_counter()
        if r.started is None:
            r.started = r.finished
        if rows is not None:
            r.rows = rows
        if nbytes is not None:
            r.bytes = nbytes
        if error is None:
            r.state = DONE
        else:
            r.state = CANCELLED if isinstance(error, Cancelled) and not isinstance(error, QueryTimeout) else FAILED
            r.error = str(error) or type(error).__name__
        log.info(_line(r))

    def running(self) -> list[QueryRecord]:
        with self._lock:
            return list(self._running.values())

    def records(self) -> list[QueryRecord]:
        """The recent records, then the running ones, oldest first."""
        with self._lock:
            return list(self._recent) + sorted(self._running.values(), key=lambda r: r.id)

    def table(self) -> pa.Table:
        """The ``glint_queries`` system table."""
        rows = []
        for r in self.records():
            rows.append(
                {
                    "query_id": r.id,
                    "client": r.client,
                    "kind": r.kind,
                    "state": r.state,
                    "sql": r.sql,
                    "sql_digest": r.digest,
                    "submitted": dt.datetime.fromtimestamp(r.submitted),
                    "queued_s": round(r.queued_for(), 6),
                    "elapsed_s": round(r.elapsed(), 6),
                    "rows": r.rows,
                    "bytes": r.bytes,
                    "peak_memory": r.peak_memory,
                    "error": r.error,
                }
            )
        return pa.Table.from_pylist(rows, schema=QUERIES_SCHEMA)


def _line(r: QueryRecord) -> str:
    text = re.sub(r"\s+", " ", r.sql.strip())
    text = text if len(text) <= 80 else text[:77] + "..."
    line = (
        f"query {r.id} client={r.client} {r.kind} {r.state} sql={r.digest} rows={r.rows} "
        f"bytes={format_bytes(r.bytes)} time={r.elapsed():.3f}s queued={r.queued_for():.3f}s "
        f"peak_memory={format_bytes(r.peak_memory)} {text!r}"
    )
    if r.error:
        line += f" error={r.error.splitlines()[0][:200]!r}"
    return line
