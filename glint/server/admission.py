"""Admission to the device: the queries of all clients are planned side by
side on the CPU, then run on the device under its memory budget. Each query
asks for what it is estimated to need (:func:`query_memory`: the working
memory of its pipelines' chunks, and the state of its pipeline breakers from
the optimizer's row estimates); it runs once that fits beside the queries
already running, and waits in line (first come, first served) when it does
not, rather than failing. A query estimated past the whole budget runs alone:
its breakers spill. Admission only decides when a query starts; inside, the
connection's memory manager accounts every reservation, as for one query.
A query that reads only system tables (glint_queries, glint_memory) does not
wait: it observes the line, it should not stand in it.

>>> a = Admission(100)
>>> with a.admit(60):
...     a.in_use, a.running
(60, 1)
>>> a.in_use
0
"""

from __future__ import annotations

import threading
from collections import deque
from contextlib import contextmanager

from glint.plan import logical as L
from glint.plan.cardinality import Estimator

STRING_BYTES = 16  # a VARCHAR value's share of a row in the estimates (code, offsets, some text)


class Admission:
    """``budget`` bytes of the device shared by the running queries; at most
    ``max_running`` at once (None: as many as fit)."""

    def __init__(self, budget: int, max_running: int | None = None):
        self.budget = max(1, int(budget))
        self.max_running = max_running
        self.in_use = 0
        self.running = 0
        self._line: deque = deque()
        self._cond = threading.Condition()

    def waiting(self) -> int:
        with self._cond:
            return len(self._line)

    def _fits(self, nbytes: int) -> bool:
        if self.running == 0:
            return True
        if self.max_running is not None and self.running >= self.max_running:
            return False
        return self.in_use + nbytes <= self.budget

    @contextmanager
    def admit(self, nbytes: int, interrupt=None, poll_s: float = 0.05):
        """Holds ``nbytes`` of the budget (at most all of it) while the block
        runs; waits its turn first. ``interrupt`` is called while waiting
        (every ``poll_s``): what it raises (a cancelled query) leaves the line."""
        nbytes = min(max(0, int(nbytes)), self.budget)
        me = object()
        with self._cond:
            self._line.append(me)
            try:
                while not (self._line[0] is me and self._fits(nbytes)):
                    if interrupt is not None:
                        interrupt()
                    self._cond.wait(poll_s)
            except BaseException:
                self._line.remove(me)
                self._cond.notify_all()
                raise
            self._line.popleft()
            self.in_use += nbytes
            self.running += 1
            self._cond.notify_all()
        try:
            yield
        finally:
            with self._cond:
                self.in_use -= nbytes
                self.running -= 1
                self._cond.notify_all()


def working_memory(con, rows: float | None = None) -> int:
    """What a query's pipelines hold beside its breakers' state: the chunks
    in flight (on a GPU, what the memory manager keeps free per chunk row;
    on the CPU its headroom), for chunks of at most ``rows`` rows (a query
    over small tables needs less than a full chunk's)."""
    m = con.memory
    chunk = con.chunk_rows if rows is None else max(1, min(con.chunk_rows, int(rows)))
    if con.device.type == "cuda":
        return int(m.working_per_row * chunk)
    return int(min(m.headroom, 6 * 64 * chunk))


def _width(node: L.LogicalNode) -> int:
    return sum(STRING_BYTES if f.type.is_string else 8 for f in node.schema) or 8


def breaker_memory(con, plan: L.LogicalNode) -> int:
    """The estimated state of a plan's pipeline breakers, all at once: each
    join's smaller input (its build side), each aggregation's groups, each
    sort's, window's and set operation's input."""
    est = Estimator(con)

    def size(node) -> float:
        return est.rows(node) * _width(node)

    total = 0.0
    stack = [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, L.Join):
            total += min(size(node.left), size(node.right))
        elif isinstance(node, L.Aggregate):
            total += size(node)
        elif isinstance(node, (L.Sort, L.Window)):
            total += size(node.child)
        elif isinstance(node, L.SetOp):
            total += size(node.left) + size(node.right)
        stack.extend(node.children)
    return int(total)


def reads_only_system_tables(con, result) -> bool:
    """Whether a planned query scans system tables and nothing else."""
    logical = getattr(result, "logical", None)
    if logical is None:
        return False
    snapshots = {n.lower() for names in getattr(con, "_system_snapshots", {}).values() for n in names}
    scans, stack = [], [logical]
    while stack:
        node = stack.pop()
        if isinstance(node, L.Scan):
            scans.append(node.table.lower())
        stack.extend(node.children)
    return bool(scans) and all(t in snapshots for t in scans)


def query_memory(con, result) -> int:
    """The device memory a planned query is estimated to need (working
    memory and breaker state); a result with no plan (already made) none."""
    logical = getattr(result, "logical", None)
    if logical is None:
        return 0
    try:
        state = breaker_memory(con, logical)
        rows = _largest_scan(con, logical)
    except Exception:  # noqa: BLE001 - an estimate that fails: a full chunk's working memory, no state
        state, rows = 0, None
    return working_memory(con, rows) + state


def _largest_scan(con, plan: L.LogicalNode) -> float:
    """The rows of the plan's largest scanned table (1 without a scan)."""
    est = Estimator(con)
    rows, stack = 1.0, [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, L.Scan):
            rows = max(rows, est.rows(node))
        stack.extend(node.children)
    return rows
