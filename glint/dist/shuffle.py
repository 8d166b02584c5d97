"""Shuffle: every row to the rank its keys hash to.

Each rank reads its input to the end, computes each row's destination
(``partition_of(hash_columns(keys), ranks)``, the hash the out-of-core
operators partition by: equal values hash alike across types, devices and
processes), groups its rows by destination, and the ranks exchange them in
one uneven all-to-all per column buffer after the size exchange
(:func:`glint.dist.exchange.exchange`). Afterwards all rows with equal keys
are on one rank: the output is ``hash(keys)`` distributed.

``source="root"``: the input is ``single`` (rank 0's rows); only rank 0 sends.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..exec.base import PhysicalNode
from ..exec.expr_eval import evaluate
from ..kernels.hashing import hash_columns, partition_of
from ..plan.expr import Expr
from ..storage.column import rechunk
from .exchange import by_destination, collect, communicator, exchange


@dataclass(frozen=True, slots=True, eq=False)
class ShuffleExec(PhysicalNode):
    child: PhysicalNode
    keys: tuple[Expr, ...]
    source: str = "all"              # all | root
    est_rows: float = 0.0
    breaker = True
    exchange = True                  # a step every rank takes together (see planner._has_exchange)

    def describe(self):
        src = " from rank 0" if self.source == "root" else ""
        return f"Shuffle hash({', '.join(map(repr, self.keys))}){src}"

    def stream(self, ctx, inp):
        comm = communicator(ctx, self)
        batch = collect(inp, keep=self.source == "all" or comm.rank == 0)
        dest = partition_of(hash_columns([evaluate(k, batch) for k in self.keys]), comm.size)
        batch, counts = by_destination(batch, dest, comm.size)
        out = exchange(comm, batch, counts, "alltoall", "shuffle", self.describe())
        yield from rechunk([out], ctx.chunk_rows)
