"""A thread pool that runs the most urgent work first.

A cold query reads every table it scans at once (glint.exec.scan.start_scans),
and all of those scans share the decoding and staging threads. With the
first-in-first-out queues of ``concurrent.futures.ThreadPoolExecutor`` a scan
that the query needs first waited behind the ones it needs last: in TPC-H Q9
at SF 100 the 25 rows of ``nation`` (the first build side) reached the GPU
after 560 ms, queued behind hundreds of 16 MB windows of lineitem, partsupp
and orders, while the query could do nothing else. Here each task carries a
priority (glint's scans use (the scan's place in the order the run asks for
them, the chunk's index)); the lowest runs first, tasks of equal priority in
the order they came. A task only ever waits for tasks submitted before it
with a priority at least as urgent (a chunk's pieces wait for its row groups'
reads), so those are taken first and the pool cannot deadlock where the FIFO
pool did not.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
from concurrent.futures import Future

# the priority of work submitted without one (a caller waits for it now:
# the planner's samples, a table's read), before every scan's
URGENT = (-1,)


class PriorityPool:
    """``workers`` daemon threads running submitted calls, lowest priority
    first. The ``submit`` / ``map`` subset of ``concurrent.futures.Executor``
    that glint uses, with a ``priority`` keyword (any value that compares
    with the others: glint uses tuples of ints).

    >>> pool = PriorityPool(1, "doc")
    >>> gate = threading.Event()
    >>> first = pool.submit(gate.wait)              # holds the only thread
    >>> order = []
    >>> done = [pool.submit(order.append, n, priority=(p,)) for n, p in (("late", 2), ("soon", 1), ("next", 1))]
    >>> gate.set(); [f.result() for f in done] and order
    ['soon', 'next', 'late']
    """

    def __init__(self, workers: int, name: str):
        self._max_workers = int(workers)
        self._name = name
        self._heap: list = []
        self._seq = itertools.count()
        self._cv = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._pid = os.getpid()

    def _after_fork(self) -> None:
        """A forked child has none of the parent's threads: start afresh
        (the parent's queued tasks are the parent's)."""
        self._heap, self._threads, self._idle = [], [], 0
        self._cv = threading.Condition()
        self._pid = os.getpid()

    def submit(self, fn, /, *args, priority=URGENT, **kwargs) -> Future:
        fut: Future = Future()
        if self._pid != os.getpid():
            self._after_fork()
        with self._cv:
            heapq.heappush(self._heap, (priority, next(self._seq), fut, fn, args, kwargs))
            if len(self._heap) > self._idle and len(self._threads) < self._max_workers:
                t = threading.Thread(target=self._work, name=f"{self._name}_{len(self._threads)}", daemon=True)
                self._threads.append(t)
                t.start()
            self._cv.notify()
        return fut

    def map(self, fn, *iterables, priority=URGENT):
        """Like Executor.map: the calls submitted now, their results in order."""
        futures = [self.submit(fn, *args, priority=priority) for args in zip(*iterables)]

        def results():
            for f in futures:
                yield f.result()

        return results()

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._heap:
                    self._idle += 1
                    self._cv.wait()
                    self._idle -= 1
                _, _, fut, fn, args, kwargs = heapq.heappop(self._heap)
            if fut.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as e:  # noqa: BLE001 -- handed to whoever waits for the future
                    fut.set_exception(e)
                else:
                    fut.set_result(result)
            del fut, fn, args, kwargs  # (a finished task's arguments are not kept alive)
