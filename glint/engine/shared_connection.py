"""Sessions: several clients on one connection (a server's), each with its own
state. A session is a connection of the shared one's class that shares its
device, memory manager, spill space, table cache and file tables, and reads
the shared catalog, but keeps its own:

- settings (``SET``): chunk_rows and the others of scope "connection", but
  memory_limit, which is the shared connection's (one budget for all);
- temporary tables (``CREATE TEMP TABLE``, and the tables it makes for its
  own use) and views, which other sessions do not see and which go when the
  session is closed; its names hide the shared tables of the same name.

Tables created otherwise (``CREATE TABLE``, ``INSERT`` into a shared table,
``DROP TABLE``) change the shared catalog, as in a DuckDB database with
several connections, under a lock the sessions of one connection share. On a
distributed connection every table is shared (its ranks hold the tables by
name): a temporary table is one of the connection's.

>>> import glint, pyarrow as pa
>>> con = glint.connect(device="cpu")
>>> _ = con.register("t", pa.table({"a": [1, 2]}))
>>> a, b = open_session(con), open_session(con)
>>> _ = a.sql("CREATE TEMP TABLE mine AS SELECT a * 10 AS b FROM t")
>>> a.sql("SELECT sum(b) FROM mine").fetchall(), b.has_table("mine"), a.has_table("t")
([(Decimal('30'),)], False, True)
>>> a.sql("SET chunk_rows = 1000"); (a.chunk_rows, b.chunk_rows == con.chunk_rows)
(1000, True)
>>> a.close(); con.has_table("t")
True
"""

from __future__ import annotations

import copy
import threading
from collections import ChainMap

from glint.engine.plan_cache import PlanCache
from glint.errors import GlintError
from glint.io.file_tables import HIDDEN_PREFIX

_CLASSES: dict[type, type] = {}
_LOCKS_GUARD = threading.Lock()


def open_session(shared):
    """A new session of connection ``shared`` (see the module's text)."""
    cls = _session_class(type(shared))
    s = copy.copy(shared)
    s.__class__ = cls
    s._shared = shared
    s._catalog_lock = _catalog_lock(shared)
    s._own = {}  # the session's temporary tables: lower name -> Table
    s._separate = getattr(shared, "ranks", None) is None  # (a distributed connection's tables are all shared)
    s._tables = ChainMap(s._own, shared._tables) if s._separate else shared._tables
    s._views = ChainMap({}, shared._views)
    s.system_tables = dict(shared.system_tables)
    s._system_snapshots = {}
    s._plans = PlanCache(s._catalog_version)  # its own: its temporary tables, views and settings are its own
    s._volatile_reads = 0
    s._closed = False
    return s


def _catalog_lock(shared) -> threading.RLock:
    with _LOCKS_GUARD:
        lock = shared.__dict__.get("_catalog_lock")
        if lock is None:
            lock = shared._catalog_lock = threading.RLock()
        return lock


def _session_class(base: type) -> type:
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type(f"Session{base.__name__}", (SessionMixin, base), {})
    return cls


class SessionMixin:
    """What a session changes of its connection's class (open_session makes
    the class: SessionConnection, SessionDistConnection...)."""

    # ------------------------------------------------------------ catalog
    def has_table(self, name: str, temporary: bool = False) -> bool:
        key = name.lower()
        if temporary and self._separate:
            return key in self._own
        return key in self._own or key in self._shared._tables

    def table(self, name: str):
        key = name.lower()
        t = self._own.get(key)
        if t is None:
            t = self._shared._tables.get(key)
        if t is None:
            return super().table(name)  # (the error, naming the close names)
        return t

    def table_names(self) -> list[str]:
        own = list(self._own.values())
        shared = [t for k, t in list(self._shared._tables.items()) if k not in self._own]
        return [t.name for t in own + shared if not t.name.startswith(HIDDEN_PREFIX)]

    def temporary_table_names(self) -> list[str]:
        """The session's own tables (temporary), but hidden ones."""
        return [t.name for t in list(self._own.values()) if not t.name.startswith(HIDDEN_PREFIX)]

    def _put(self, t, temporary: bool = False) -> None:
        key = t.name.lower()
        if self._separate and (temporary or key in self._own):
            old = self._own.get(key)
            if old is not None:
                self._evict(old)
            self._own[key] = t
            self._catalog_changed()
            return
        with self._catalog_lock:
            self._shared._put(t)

    def unregister(self, name: str) -> None:
        key = name.lower()
        t = self._own.pop(key, None)
        if t is not None:
            self._catalog_changed()
            self._evict(t)
            return
        with self._catalog_lock:
            self._shared.unregister(name)

    def append_rows(self, name: str, data) -> None:
        if name.lower() in self._own:
            return super().append_rows(name, data)
        with self._catalog_lock:
            return self._shared.append_rows(name, data)

    # ------------------------------------------------------------ settings
    def set_setting(self, name: str, value) -> None:
        from glint.runtime.settings import setting

        if setting(name).name == "memory_limit":
            raise GlintError(
                "memory_limit is the server's, shared by every session (set when it starts: --memory-limit)"
            )
        super().set_setting(name, value)

    def _apply_memory_settings(self) -> None:
        """A session's chunk size (SET and RESET chunk_rows); the memory
        limit stays the shared connection's (SET refuses it)."""
        self.chunk_rows = self.settings.chunk_rows or self._shared.chunk_rows

    # ------------------------------------------------------------ end
    def close(self) -> None:
        """Drops the session's temporary tables and views; the shared
        connection stays open."""
        if self._closed:
            return
        self._closed = True
        self._plans.clear()
        for t in list(self._own.values()):
            self._evict(t)
        self._own.clear()
        self._views.maps[0].clear()

    def __repr__(self) -> str:
        return f"<glint session of {self._shared!r}>"
