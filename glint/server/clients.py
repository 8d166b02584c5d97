"""The server's clients: one :class:`ClientSession` per client connection,
with its own glint session (glint.engine.shared_connection: its settings, temporary
tables and views over the shared catalog), its prepared statements, and the
count of its queries running (at most ``max_queries`` at once).

A client is known by the session cookie it sends back (``glint_session``,
set on its first call, for clients that keep cookies: JDBC, ADBC with
``adbc.flight.sql.rpc.with_cookie_middleware``), else by its gRPC peer (its
TCP connection: each ADBC or JDBC connection is its own). A session left
idle for ``idle_s`` seconds is closed, with its temporary tables.
"""

from __future__ import annotations

import secrets
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

import pyarrow as pa

from glint.engine.shared_connection import open_session
from glint.errors import GlintError

COOKIE = "glint_session"


class TooManyQueries(GlintError):
    """A client past its number of queries running at once."""


@dataclass(eq=False)
class PreparedStatement:
    """A statement prepared by a client (CreatePreparedStatement): its text,
    the parameters it takes, its result's schema (as far as it is known
    before the parameters are), and the parameter rows last bound (DoPut)."""

    handle: bytes
    query: str
    parameters: list[str]
    dataset_schema: pa.Schema
    parameter_schema: pa.Schema
    bound: list | None = None  # rows of values (each a list, or a dict by name); None: none bound
    planned: object = None  # the plan made when it was prepared, for its first execution (no parameters)


@dataclass(eq=False)
class ClientSession:
    id: str
    peer: str
    con: object  # the glint session
    max_queries: int | None = None
    prepared: dict[bytes, PreparedStatement] = field(default_factory=dict)
    running: int = 0
    last_used: float = field(default_factory=time.monotonic)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        """How the log and glint_queries name the client: its peer and session."""
        return f"{self.peer}/{self.id[:8]}"

    @contextmanager
    def query_slot(self):
        """Counts a query running for this client; TooManyQueries past the limit."""
        with self._lock:
            if self.max_queries is not None and self.running >= self.max_queries:
                raise TooManyQueries(
                    f"this client already runs {self.running} queries, the most one client may run at once "
                    f"(glint serve --max-client-queries); wait for one to end"
                )
            self.running += 1
        try:
            yield
        finally:
            with self._lock:
                self.running -= 1
                self.last_used = time.monotonic()

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def close(self) -> None:
        self.prepared.clear()
        self.con.close()


class SessionRegistry:
    """The sessions of one shared connection, by cookie and by peer."""

    def __init__(self, shared, max_queries: int | None = None, idle_s: float = 3600.0):
        self.shared = shared
        self.max_queries = max_queries
        self.idle_s = idle_s
        self._by_id: dict[str, ClientSession] = {}
        self._by_peer: dict[str, str] = {}
        self._lock = threading.Lock()

    def get(self, cookie: str | None, peer: str) -> tuple[ClientSession, bool]:
        """(the client's session, whether it is new)."""
        with self._lock:
            self._expire()
            s = self._by_id.get(cookie) if cookie else None
            if s is None:
                s = self._by_id.get(self._by_peer.get(peer, ""))
            new = s is None
            if new:
                sid = secrets.token_hex(16)
                s = ClientSession(sid, peer, open_session(self.shared), self.max_queries)
                self._by_id[sid] = s
            self._by_peer[peer] = s.id
            s.touch()
            return s, new

    def close(self, session: ClientSession) -> None:
        with self._lock:
            self._by_id.pop(session.id, None)
            for p in [p for p, sid in self._by_peer.items() if sid == session.id]:
                del self._by_peer[p]
        session.close()

    def sessions(self) -> list[ClientSession]:
        with self._lock:
            return list(self._by_id.values())

    def _expire(self) -> None:
        now = time.monotonic()
        for s in [s for s in self._by_id.values() if s.running == 0 and now - s.last_used > self.idle_s]:
            del self._by_id[s.id]
            for p in [p for p, sid in self._by_peer.items() if sid == s.id]:
                del self._by_peer[p]
            s.close()
