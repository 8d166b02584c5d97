"""glint.runtime.priority_pool: the decoding and staging threads' pool, which
runs the most urgent task first (a scan's tasks carry (chunk, scan) ranks)."""

import os
import subprocess
import sys
import threading
import warnings

import pytest

from glint.runtime.priority_pool import URGENT, PriorityPool


def _blocked(pool, workers):
    """Occupies every thread of the pool until the returned event is set."""
    gate, started = threading.Event(), threading.Barrier(workers + 1)

    def hold():
        started.wait()
        gate.wait()

    held = [pool.submit(hold) for _ in range(workers)]
    started.wait()
    return gate, held


def test_lowest_priority_first_and_equal_ones_in_order():
    pool = PriorityPool(1, "t")
    gate, held = _blocked(pool, 1)
    order = []
    futs = [
        pool.submit(order.append, name, priority=p)
        for name, p in [("c0", (2, 0)), ("a0", (0, 0)), ("b0", (1, 0)), ("a1", (0, 0)), ("urgent", URGENT)]
    ]
    gate.set()
    for f in held + futs:
        f.result(timeout=10)
    assert order == ["urgent", "a0", "a1", "b0", "c0"]


def test_results_exceptions_map_and_cancel():
    pool = PriorityPool(3, "t")
    assert pool.submit(lambda a, b=0: a + b, 2, b=3).result(timeout=10) == 5
    with pytest.raises(ZeroDivisionError):
        pool.submit(lambda: 1 / 0).result(timeout=10)
    assert list(pool.map(lambda x, y: x * y, range(5), range(5))) == [0, 1, 4, 9, 16]
    gate, held = _blocked(pool, 3)
    ran = []
    late = pool.submit(ran.append, "late", priority=(5,))
    assert late.cancel()  # not started: cancelled, never run
    gate.set()
    for f in held:
        f.result(timeout=10)
    assert pool.submit(lambda: "after").result(timeout=10) == "after" and ran == [] and late.cancelled()


def test_a_task_waiting_for_an_earlier_one_of_its_rank_finishes():
    """A chunk's pieces wait for the row-group reads submitted before them
    with the same priority: with one thread the read still runs first."""
    pool = PriorityPool(2, "t")
    read = pool.submit(lambda: 41, priority=(0, 1))
    piece = pool.submit(lambda: read.result(timeout=10) + 1, priority=(0, 1))
    assert piece.result(timeout=10) == 42


def test_threads_grow_up_to_the_limit_only():
    pool = PriorityPool(3, "t")
    gate, held = _blocked(pool, 3)
    extra = [pool.submit(lambda: None) for _ in range(10)]
    assert len(pool._threads) == 3
    gate.set()
    for f in held + extra:
        f.result(timeout=10)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_threads():
    pool = PriorityPool(2, "t")
    assert pool.submit(lambda: 1).result(timeout=10) == 1  # threads started in the parent
    r, w = os.pipe()
    with warnings.catch_warnings():  # (Python 3.12 warns that the process has threads: the point here)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: the parent's threads are not there
        try:
            ok = pool.submit(lambda: 7).result(timeout=10) == 7
        except BaseException:  # noqa: BLE001
            ok = False
        os.write(w, b"1" if ok else b"0")
        os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.waitpid(pid, 0)
    assert got == b"1"


def _run_python(code: str, timeout: float = 120):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)


def test_exiting_while_tasks_run_in_native_code_exits_cleanly():
    """A process that exits while the pool's threads are inside torch (the
    GIL released) waits for those tasks and drops the queued ones: a daemon
    thread that came back to Python during the interpreter's shutdown aborted
    the process ("terminate called without an active exception", exit 134)."""
    code = """
import threading, torch
from glint.runtime.priority_pool import PriorityPool
x = torch.ones(1 << 22)
pool = PriorityPool(2, "t")
started = threading.Barrier(3)
ran = []
def work(i):
    started.wait()
    for _ in range(60):
        x.sum()
    ran.append(i)
futs = [pool.submit(work, i) for i in range(2)]
late = [pool.submit(ran.append, "late") for _ in range(4)]
started.wait()
"""
    for _ in range(3):
        r = _run_python(code)
        assert r.returncode == 0 and "terminate" not in r.stderr, (r.returncode, r.stderr)


def test_a_shut_down_pool_drops_its_queue_and_lets_its_threads_go():
    pool = PriorityPool(1, "t")
    gate, held = _blocked(pool, 1)
    ran = []
    queued = [pool.submit(ran.append, i) for i in range(3)]
    waiter = threading.Thread(target=pool.shutdown)
    waiter.start()
    waiter.join(0.2)
    assert waiter.is_alive()  # it waits for the running task
    gate.set()
    waiter.join(10)
    assert not waiter.is_alive() and held[0].result(timeout=1) is None
    assert all(f.cancelled() for f in queued) and ran == [] and not any(t.is_alive() for t in pool._threads)
    with pytest.raises(RuntimeError, match="shut down"):
        pool.submit(ran.append, 9)
