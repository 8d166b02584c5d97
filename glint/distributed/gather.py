"""Gather: every rank's rows to rank 0 (``single``): the final step of a
query, and the input of what must see all rows at once (ORDER BY, LIMIT, a
COUNT(DISTINCT) without GROUP BY). In rounds (:mod:`glint.distributed.rounds`): each
round, one uneven all-to-all per column buffer in which every rank sends up
to ``round_bytes`` of its input to rank 0 only, so no rank holds its whole
input and rank 0 takes in each round's rows before the next arrives; ranks
other than 0 output no rows. ``hold_input``: see :mod:`glint.distributed.shuffle`.
"""

from __future__ import annotations

from dataclasses import dataclass

from glint.distributed.exchange import communicator
from glint.distributed.rounds import InRounds, exchange_rounds, round_size
from glint.exec.base import PhysicalNode


@dataclass(frozen=True, slots=True, eq=False)
class GatherExec(InRounds, PhysicalNode):
    child: PhysicalNode
    est_rows: float = 0.0
    round_bytes: int = 0  # input bytes per rank and round (0: from the rank's memory budget)
    hold_input: bool = False  # read the input to its end before the first round

    def describe(self):
        return "Gather to rank 0"

    def stream(self, ctx, inp):
        comm = communicator(ctx, self)
        n = comm.size

        def split(batch):
            return batch, [batch.num_rows if r == 0 else 0 for r in range(n)]

        yield from exchange_rounds(
            ctx,
            comm,
            inp,
            split,
            "alltoall",
            "gather",
            self.describe(),
            limit=round_size(ctx.memory, self.round_bytes, comm.packed),
            hold=self.hold_input,
        )
