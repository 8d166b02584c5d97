"""Broadcast: every rank ends up with every row (``replicated``).

Each rank's rows go to all the others with the backend's one-to-all
broadcast, one per sending rank (Algorithm 2 of "Terabyte-scale analytics in
the blink of an eye": a collective broadcast, not N point-to-point copies),
each into its slice of the receive buffer. This is the broadcast side of a
join (the small input, eq. 3 of the paper), and how partial aggregation
states of a few groups reach every rank.

``source="root"``: the input is ``single`` (rank 0's rows); only rank 0 sends.
"""

from __future__ import annotations

from dataclasses import dataclass

from glint.columnar.column import rechunk
from glint.distributed.exchange import collect, communicator, exchange
from glint.exec.base import PhysicalNode


@dataclass(frozen=True, slots=True, eq=False)
class BroadcastExec(PhysicalNode):
    child: PhysicalNode
    source: str = "all"  # all | root
    est_rows: float = 0.0
    breaker = True
    exchange = True  # a step every rank takes together (see steps.has_exchange)

    def describe(self):
        return "Broadcast" + (" from rank 0" if self.source == "root" else " to all ranks")

    def stream(self, ctx, inp):
        comm = communicator(ctx, self)
        batch = collect(inp, keep=self.source == "all" or comm.rank == 0)
        out = exchange(comm, batch, [batch.num_rows], "allgather", "broadcast", self.describe())
        yield from rechunk([out], ctx.chunk_rows)
