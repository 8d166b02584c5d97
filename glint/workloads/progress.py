"""Progress of a data set's generation on stderr: a rich progress bar on a
terminal; elsewhere (a log file, a CI job, a remote run) a plain line when it
starts, one every ``GLINT_PROGRESS_INTERVAL`` seconds (default 5) while it
runs, and one when it is done, so that a long generation shows how far it got
(``tpchgen-cli SF 100: 3/8 tables customer, orders 5,120 MB (65.0 s)``).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from glint.errors import GlintError

DEFAULT_INTERVAL_S = 5.0


def progress_interval() -> float:
    """Seconds between the plain progress lines (GLINT_PROGRESS_INTERVAL)."""
    text = os.environ.get("GLINT_PROGRESS_INTERVAL", "").strip()
    if not text:
        return DEFAULT_INTERVAL_S
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0:
        raise GlintError(f"GLINT_PROGRESS_INTERVAL must be a positive number of seconds, got {text!r}")
    return value


class GenerationProgress:
    """A generation's progress: ``update(completed=, info=)`` as it goes
    (``total`` steps of ``unit``, or None when it has no steps to count).
    ``done``: the line printed at the end (default "generated TITLE in S s").
    ``tty``: a bar (True) or plain lines (False); default: whether stderr is
    a terminal."""

    def __init__(self, title: str, total: int | None = None, unit: str = "", done: str | None = None, tty=None):
        self.title, self.total, self.unit = title, total, unit
        self.done = done if done is not None else f"generated {title}"
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.completed, self.info = 0, ""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar = self._task = None

    def __enter__(self):
        self.t0 = time.perf_counter()
        if self.tty:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            columns = [SpinnerColumn(), TextColumn("{task.description}")]
            if self.total is not None:
                columns += [BarColumn(), MofNCompleteColumn()]
            columns += [TextColumn("{task.fields[info]}"), TimeElapsedColumn()]
            self._bar = Progress(*columns, console=Console(stderr=True), transient=True)
            self._bar.start()
            self._task = self._bar.add_task(self.title, total=self.total, info="")
        else:
            interval = progress_interval()
            self._line()
            self._thread = threading.Thread(target=self._tick, args=(interval,), name="glint-progress", daemon=True)
            self._thread.start()
        return self

    def update(self, completed: int | None = None, info: str | None = None, advance: int = 0) -> None:
        with self._lock:
            if completed is not None:
                self.completed = completed
            self.completed += advance
            if info is not None:
                self.info = info
        if self._bar is not None:
            self._bar.update(self._task, completed=self.completed, info=self.info)

    def _line(self) -> None:
        with self._lock:
            count = f" {self.completed}/{self.total}{' ' + self.unit if self.unit else ''}" if self.total else ""
            info = f" {self.info}" if self.info else ""
        elapsed = time.perf_counter() - self.t0
        print(f"{self.title}:{count}{info} ({elapsed:.1f} s)", file=sys.stderr, flush=True)

    def _tick(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self._line()

    def __exit__(self, exc_type, *_):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.stop()
        if exc_type is None:
            elapsed = time.perf_counter() - self.t0
            if self.tty:
                from rich.console import Console

                Console(stderr=True).print(f"[dim]{self.done} in {elapsed:.1f} s[/]")
            else:
                print(f"{self.done} in {elapsed:.1f} s", file=sys.stderr, flush=True)
        return False
