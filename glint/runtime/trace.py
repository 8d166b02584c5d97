"""A timeline of what glint's threads do, in Chrome's trace format (open it in
chrome://tracing or https://ui.perfetto.dev): which thread decodes, stages,
copies or computes when. Off unless started, and then a span costs a clock
read and a list append.

    from glint.runtime import trace
    trace.start()
    con.sql(...).arrow()
    trace.stop("q1.json")          # or: GLINT_TRACE=q1.json python ...

``GLINT_TRACE=path`` (the trace setting) starts it when the process's first
connection opens and writes the file at exit.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from contextlib import contextmanager

_events: list | None = None
_t0 = 0.0
_lock = threading.Lock()


def active() -> bool:
    return _events is not None


def start() -> None:
    """Start recording (drops what an earlier start recorded)."""
    global _events, _t0
    with _lock:
        _events = []
        _t0 = time.perf_counter()


def stop(path: str | None = None) -> list:
    """Stop recording; write the events to ``path`` when given; return them."""
    global _events
    with _lock:
        events, _events = _events or [], None
    if path:
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    return events


def add(name: str, t0: float, t1: float, **args) -> None:
    """A finished span from perf_counter times t0..t1 on the calling thread."""
    ev = _events
    if ev is None:
        return
    th = threading.current_thread()
    e = {"name": name, "ph": "X", "ts": (t0 - _t0) * 1e6, "dur": (t1 - t0) * 1e6, "pid": os.getpid(), "tid": th.name}
    if args:
        e["args"] = args
    ev.append(e)  # list.append is atomic under the GIL


@contextmanager
def span(name: str, **args):
    """Record the time the body takes as a span named ``name``."""
    if _events is None:
        yield
        return
    t0 = time.perf_counter()
    try:
        yield
    finally:
        add(name, t0, time.perf_counter(), **args)


def write_at_exit(path: str) -> None:
    """Start recording now and write the events to ``path`` when the process
    exits (the trace setting, GLINT_TRACE: the first connection of a process
    applies it)."""
    start()
    atexit.register(stop, path)
