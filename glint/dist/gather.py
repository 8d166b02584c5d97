"""Gather: every rank's rows to rank 0 (``single``): the final step of a
query, and the input of what must see all rows at once (ORDER BY, LIMIT, a
COUNT(DISTINCT) without GROUP BY). One uneven all-to-all per column buffer in
which every rank sends to rank 0 only; ranks other than 0 output no rows.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..exec.base import PhysicalNode
from ..storage.column import rechunk
from .exchange import collect, communicator, exchange


@dataclass(frozen=True, slots=True, eq=False)
class GatherExec(PhysicalNode):
    child: PhysicalNode
    est_rows: float = 0.0
    breaker = True
    exchange = True                  # a step every rank takes together (see planner._has_exchange)

    def describe(self):
        return "Gather to rank 0"

    def stream(self, ctx, inp):
        comm = communicator(ctx, self)
        batch = collect(inp)
        counts = [batch.num_rows if r == 0 else 0 for r in range(comm.size)]
        out = exchange(comm, batch, counts, "alltoall", "gather", self.describe())
        yield from rechunk([out], ctx.chunk_rows)
