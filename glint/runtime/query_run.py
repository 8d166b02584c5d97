"""A running query's cancellation flag and progress.

A connection makes one :class:`QueryRun` for each query it runs (over its
re-runs after running out of memory) and hands it to the run's
ExecContext: the scans count the rows they have read against the rows of
the tables they read, and every operator looks at the flag between chunks,
so ``Connection.interrupt()`` (from another thread) or Ctrl-C stops the
query at the next chunk with :class:`~glint.errors.Interrupted`.

>>> seen = []
>>> run = QueryRun(1000, callback=lambda p: seen.append(p.rows_scanned))
>>> run.add_rows(400); run.new_attempt(); run.add_rows(300); run.add_rows(300); run.add_rows(300)
>>> seen, run.progress().fraction
([400, 600, 900], 0.9)
>>> run.cancel(); run.check()
Traceback (most recent call last):
...
glint.errors.Interrupted: Interrupted: the query was cancelled
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from glint.errors import Interrupted


@dataclass(frozen=True)
class Progress:
    """How far a query has read its tables: rows scanned (or ruled out by
    statistics) of the rows of every table scan in its plan."""

    rows_scanned: int
    rows_total: int
    elapsed_s: float

    @property
    def fraction(self) -> float:
        """rows_scanned / rows_total, between 0 and 1 (1 for a query that reads no table)."""
        return min(1.0, self.rows_scanned / self.rows_total) if self.rows_total else 1.0


class QueryRun:
    """One query's cancellation flag and scan progress; ``callback`` gets a
    :class:`Progress` each time the rows scanned grow (in the query's thread).
    The rows reported never go down: a re-run counts again from zero, and is
    reported once it passes what the failed run had read."""

    __slots__ = ("rows_total", "callback", "started", "_cancelled", "_attempt_rows", "_shown")

    def __init__(self, rows_total: int, callback: Callable[[Progress], None] | None = None):
        self.rows_total = int(rows_total)
        self.callback = callback
        self.started = time.monotonic()
        self._cancelled = False
        self._attempt_rows = 0
        self._shown = 0

    # -------------------------------------------------------------- cancel
    def cancel(self) -> None:
        """Ask the query to stop (safe from any thread: one flag, read between chunks)."""
        self._cancelled = True

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def check(self) -> None:
        """Raises Interrupted once the query was cancelled."""
        if self._cancelled:
            raise Interrupted()

    # -------------------------------------------------------------- progress
    def new_attempt(self) -> None:
        """The query runs again from its start (after running out of memory)."""
        self._attempt_rows = 0

    def add_rows(self, rows: int) -> None:
        """A scan read (or skipped) ``rows`` more rows."""
        self._attempt_rows += int(rows)
        if self._attempt_rows > self._shown:
            self._shown = self._attempt_rows
            if self.callback is not None:
                self.callback(self.progress())

    def progress(self) -> Progress:
        return Progress(min(self._shown, self.rows_total), self.rows_total, time.monotonic() - self.started)
