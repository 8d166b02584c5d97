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

The threads are daemon threads, and the process waits for them at exit
(:func:`shutdown_all`, run by ``atexit``): the tasks running then finish and
the queued ones are dropped. A daemon thread still inside torch or pyarrow
(the GIL released) when the interpreter shuts down aborts the process as it
comes back ("terminate called without an active exception", exit 134), as
when a query failed while other scans were still decoding.
"""

from __future__ import annotations

import atexit
import heapq
import itertools
import os
import threading
import time
import weakref
from concurrent.futures import Future

# the priority of work submitted without one (a caller waits for it now:
# the planner's samples, a table's read), before every scan's
URGENT = (-1,)
# seconds the process waits at exit for a pool's running tasks
EXIT_WAIT_S = 10.0
_POOLS: weakref.WeakSet = weakref.WeakSet()


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
        self._closed = False
        _POOLS.add(self)

    def _after_fork(self) -> None:
        """A forked child has none of the parent's threads: start afresh
        (the parent's queued tasks are the parent's)."""
        self._heap, self._threads, self._idle = [], [], 0
        self._cv = threading.Condition()
        self._pid = os.getpid()
        self._closed = False

    def submit(self, fn, /, *args, priority=URGENT, **kwargs) -> Future:
        fut: Future = Future()
        if self._pid != os.getpid():
            self._after_fork()
        with self._cv:
            if self._closed:
                raise RuntimeError(f"the thread pool {self._name!r} is shut down")
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

    def shutdown(self, timeout: float | None = None) -> None:
        """Drops the queued tasks (their futures cancelled) and waits, at most
        ``timeout`` seconds in all, for the running ones; the threads end.
        Later submits raise."""
        if self._pid != os.getpid():
            self._after_fork()
        with self._cv:
            self._closed = True
            queued, self._heap = self._heap, []
            self._cv.notify_all()
        for item in queued:
            item[2].cancel()
        end = None if timeout is None else time.monotonic() + timeout
        for t in list(self._threads):
            if t is not threading.current_thread():
                t.join(None if end is None else max(0.0, end - time.monotonic()))

    def _work(self) -> None:
        while True:
            with self._cv:
                while not self._heap and not self._closed:
                    self._idle += 1
                    self._cv.wait()
                    self._idle -= 1
                if self._closed:
                    return
                _, _, fut, fn, args, kwargs = heapq.heappop(self._heap)
            if fut.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as e:  # noqa: BLE001 -- handed to whoever waits for the future
                    fut.set_exception(e)
                else:
                    fut.set_result(result)
            del fut, fn, args, kwargs  # (a finished task's arguments are not kept alive)


@atexit.register
def shutdown_all() -> None:
    """Shuts every pool of the process down (see the module's text), waiting
    at most EXIT_WAIT_S seconds for each one's running tasks."""
    for pool in list(_POOLS):
        if pool._pid == os.getpid():
            pool.shutdown(EXIT_WAIT_S)
