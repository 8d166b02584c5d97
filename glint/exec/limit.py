"""LIMIT / OFFSET over a stream: rows are counted as chunks pass, and the
input is not read any further once the limit is reached, unless ``drain``:
on the ranks of a distributed plan, an exchange below may still have steps
to take with the other ranks (rounds of a gather), so the rest of the input
is read and dropped."""

from __future__ import annotations

from dataclasses import dataclass

from glint.columnar.column import slice_batch
from glint.exec.base import PhysicalNode


@dataclass(frozen=True, slots=True, eq=False)
class LimitExec(PhysicalNode):
    child: PhysicalNode
    limit: int | None
    offset: int = 0
    est_rows: float = 0.0
    drain: bool = False  # read the input to its end after the limit

    def describe(self):
        return f"Limit {self.limit if self.limit is not None else 'ALL'} OFFSET {self.offset}"

    def stream(self, ctx, inp):
        skip = self.offset
        left = self.limit
        empty = None  # yielded when nothing passes: it keeps the column types
        for batch in inp:
            if empty is None:
                empty = slice_batch(batch, 0, 0)
            if left is not None and left <= 0:
                if self.drain:
                    continue
                break
            n = batch.num_rows
            if skip >= n:
                skip -= n
                continue
            stop = n if left is None else min(n, skip + left)
            out = slice_batch(batch, skip, stop)
            skip = 0
            if left is not None:
                left -= out.num_rows
            yield out
            empty = False
        if empty is not None and empty is not False:
            yield empty
