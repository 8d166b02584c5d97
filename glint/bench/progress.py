"""Progress of a ``glint bench`` phase on stderr."""

from __future__ import annotations

import os
import time


class Phase:
    """A transient rich progress bar on stderr (when it is a terminal), else
    one log line per step with the seconds since the phase began (so that a
    run cut off by a time limit still shows how far it got and where the time
    went); one summary line when the phase ends."""

    def __init__(self, err, title: str, total: int, show: bool):
        self.err, self.title, self.total, self.show = err, title, total, show
        self.bar = self.task = None
        self.log = not show and os.environ.get("GLINT_BENCH_LOG", "") not in ("", "0")

    def __enter__(self):
        self.t0 = time.perf_counter()
        if self.show:
            # rich is imported when it is used: the glint command imports this module at every start
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.err,
                transient=True,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.title, total=self.total)
        return self

    def update(self, what: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, description=f"{self.title}: {what}")
        elif self.log:
            self.err.print(
                f"{self.title}: {what} (+{time.perf_counter() - self.t0:.1f} s)",
                style="dim",
                markup=False,
                highlight=False,
            )

    def advance(self) -> None:
        if self.bar is not None:
            self.bar.advance(self.task)

    def __exit__(self, exc_type, *_):
        if self.bar is not None:
            self.bar.stop()
        if exc_type is None:
            self.err.print(
                f"{self.title}: {time.perf_counter() - self.t0:.1f} s", style="dim", markup=False, highlight=False
            )
        return False
