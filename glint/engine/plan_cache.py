"""Plans of the queries a connection ran, kept by their text, so that a query
run again skips parsing, binding and optimizing (5-10 ms of a TPC-H query's
host time, more than the GPU's work at SF 10 for most of them).

A plan is only reused while everything it was planned from is unchanged:

- the catalog: a :class:`CatalogVersion`, shared by a connection and its
  sessions, goes up with every change of a table or a view (registering,
  replacing, dropping, appending rows) and with every statement that is not
  a query (DDL, DML, SET, ...). A plan made under another version is never
  used, and the cache empties when it sees a new one;
- the settings: the connection's Settings object (immutable; SET makes a new
  one) must be the same object;
- the query's inputs: a query that named files in FROM or read a system
  table (whose rows are a snapshot as of planning) is never kept, and nor is
  one with parameters.

Settings ``plan_cache_entries`` (0 turns the cache off) bounds the plans kept,
least recently used first out.

>>> import glint, pyarrow as pa
>>> con = glint.connect(device="cpu")
>>> _ = con.register("t", pa.table({"a": [1, 2]}))
>>> con.sql("SELECT sum(a) FROM t").fetchall(), con.sql("SELECT sum(a) FROM t").plan_cached
([(Decimal('3'),)], True)
>>> _ = con.register("t", pa.table({"a": [5]}))
>>> con.sql("SELECT sum(a) FROM t").fetchall()
[(Decimal('5'),)]
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass


class CatalogVersion:
    """A counter of changes to a catalog, shared by a connection's sessions;
    a change empties every plan cache that follows it (so that no plan keeps
    a dropped table's data alive)."""

    def __init__(self):
        self.value = 0
        self._lock = threading.Lock()
        self._caches: weakref.WeakSet[PlanCache] = weakref.WeakSet()

    def bump(self) -> None:
        with self._lock:
            self.value += 1
            caches = list(self._caches)
        for c in caches:
            c.clear()


@dataclass(frozen=True)
class CachedPlan:
    """What planning a query made (Result's names, fields, plans) and what it
    was made under."""

    names: list
    fields: list
    logical: object
    physical: object
    version: int
    settings: object
    cross_products: tuple = ()  # what the plan holds whole, measured once (glint.plan.cross_products)


class PlanCache:
    """Plans by query text, least recently used first out, of one connection
    or session, following its catalog's ``version`` (see the module's text).
    Thread-safe."""

    def __init__(self, version: CatalogVersion):
        self._plans: OrderedDict[str, CachedPlan] = OrderedDict()
        self._lock = threading.Lock()
        self.version = version
        with version._lock:
            version._caches.add(self)
        self.hits = 0
        self.misses = 0

    def get(self, text: str, settings) -> CachedPlan | None:
        with self._lock:
            plan = self._plans.get(text)
            if plan is None or plan.settings is not settings or plan.version != self.version.value:
                self.misses += 1
                return None
            self._plans.move_to_end(text)
            self.hits += 1
            return plan

    def put(self, text: str, plan: CachedPlan, capacity: int) -> None:
        with self._lock:
            if plan.version != self.version.value:
                return  # the catalog changed while it was planned
            self._plans[text] = plan
            self._plans.move_to_end(text)
            while len(self._plans) > capacity:
                self._plans.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._plans.clear()

    def __len__(self) -> int:
        return len(self._plans)
