"""Running a query from the command line (``glint sql``, ``glint shell``):
Ctrl-C cancels it (:meth:`~glint.engine.connection.Connection.interrupt`;
the query stops at its next chunk with :class:`~glint.errors.Interrupted`
and the connection stays usable; a second Ctrl-C stops at once), and a query
that runs longer than about two seconds shows a progress line on standard
error when that is a terminal: the rows its scans have read of the rows of
the tables they read.
"""

from __future__ import annotations

import signal
import sys
import threading
from contextlib import contextmanager

from glint.cli.common import result_arrow

PROGRESS_AFTER_S = 2.0
PROGRESS_EVERY_S = 0.1


@contextmanager
def interruptible(con):
    """While the body runs, Ctrl-C cancels the connection's running query
    (before one runs, or a second time, it interrupts the body at once)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = []

    def on_sigint(signum, frame):
        if pressed or not con.interrupt():
            raise KeyboardInterrupt
        pressed.append(True)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def progress_line(con, stream=None, after: float = PROGRESS_AFTER_S):
    """While the body runs, a progress line on ``stream`` (standard error)
    from ``after`` seconds on, when it is a terminal; it is gone afterwards."""
    stream = stream if stream is not None else sys.stderr
    if not (hasattr(stream, "isatty") and stream.isatty()):
        yield
        return
    stop = threading.Event()
    shower = threading.Thread(target=_show, args=(con, stream, after, stop), name="glint-progress", daemon=True)
    shower.start()
    try:
        yield
    finally:
        stop.set()
        shower.join()


def _show(con, stream, after: float, stop: threading.Event) -> None:
    if stop.wait(after):
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("[dim]query"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.fields[rows]}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(file=stream), transient=True) as bar:
        task = bar.add_task("query", total=None, rows="")
        while not stop.wait(PROGRESS_EVERY_S):
            p = con.query_progress()
            if p is None:
                continue
            rows = f"{p.rows_scanned:,} of {p.rows_total:,} rows scanned"
            bar.update(task, total=max(p.rows_total, 1), completed=min(p.rows_scanned, p.rows_total), rows=rows)


def run_query(con, sql: str):
    """(the Result, its rows as Arrow) of ``sql`` on ``con``, interruptible by
    Ctrl-C and with a progress line after two seconds."""
    with interruptible(con), progress_line(con):
        res = con.sql(sql)
        return res, result_arrow(res)
