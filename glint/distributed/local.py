"""Distribution changes that need no communication.

- :class:`PartitionFilterExec`: a ``replicated`` relation as ``hash(keys)``:
  each rank keeps the rows that hash to it (every rank holds them all).
- :class:`RootOnlyExec`: a ``replicated`` or ``single`` relation as
  ``partitioned``: rank 0 keeps its rows, the others none (so that, say, a
  UNION ALL with a spread input counts them once).
"""

from __future__ import annotations

from dataclasses import dataclass

from glint.columnar.column import slice_batch
from glint.distributed.exchange import communicator
from glint.exec.base import PhysicalNode
from glint.exec.hashing import hash_columns, partition_of
from glint.functions.evaluate import evaluate
from glint.plan.expr import Expr


@dataclass(frozen=True, slots=True, eq=False)
class PartitionFilterExec(PhysicalNode):
    child: PhysicalNode
    keys: tuple[Expr, ...]
    est_rows: float = 0.0

    def describe(self):
        return f"PartitionFilter hash({', '.join(map(repr, self.keys))})"

    def stream(self, ctx, inp):
        comm = communicator(ctx, self)
        for b in inp:
            if b.num_rows == 0:
                yield b
                continue
            dest = partition_of(hash_columns([evaluate(k, b) for k in self.keys]), comm.size)
            mine = dest == comm.rank
            yield b.filter(mine, int(mine.sum()))


@dataclass(frozen=True, slots=True, eq=False)
class RootOnlyExec(PhysicalNode):
    child: PhysicalNode
    est_rows: float = 0.0

    def describe(self):
        return "RootOnly"

    def stream(self, ctx, inp):
        root = communicator(ctx, self).rank == 0
        for b in inp:
            yield b if root else slice_batch(b, 0, 0)
