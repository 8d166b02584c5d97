"""Shuffle: every row to the rank its keys hash to.

Each rank computes each row's destination (``partition_of(hash_columns(keys),
ranks)``, the hash the out-of-core operators partition by: equal values hash
alike across types, devices and processes), groups its rows by destination,
and the ranks exchange them, one uneven all-to-all per column buffer after
the size exchange (:mod:`glint.distributed.exchange`). It runs in rounds
(:mod:`glint.distributed.rounds`): each round takes up to ``round_bytes`` of each
rank's input (0: a size from the rank's memory budget), and the rows
received in a round go downstream while the next round is read and hashed.
Afterwards all rows with equal keys are on one rank: the output is
``hash(keys)`` distributed.

``source="root"``: the input is ``single`` (rank 0's rows); only rank 0 sends.
``hold_input``: the input is read to its end (and held) before the first
round, because it may take exchange steps of its own after its first batch
(set by the planner, :func:`glint.distributed.steps.settle`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from glint.columnar.column import Batch
from glint.distributed.exchange import by_destination, communicator
from glint.distributed.rounds import InRounds, exchange_rounds, round_size
from glint.exec.base import PhysicalNode
from glint.exec.hashing import hash_columns, partition_of
from glint.functions.evaluate import evaluate
from glint.plan.expr import Expr


@dataclass(frozen=True, slots=True, eq=False)
class ShuffleExec(InRounds, PhysicalNode):
    child: PhysicalNode
    keys: tuple[Expr, ...]
    source: str = "all"  # all | root
    est_rows: float = 0.0
    round_bytes: int = 0  # input bytes per rank and round (0: from the rank's memory budget)
    hold_input: bool = False  # read the input to its end before the first round

    def describe(self):
        src = " from rank 0" if self.source == "root" else ""
        return f"Shuffle hash({', '.join(map(repr, self.keys))}){src}"

    def stream(self, ctx, inp):
        comm = communicator(ctx, self)
        yield from shuffle_rounds(
            ctx,
            comm,
            inp,
            hash_split(self.keys, comm.size),
            self.describe(),
            round_bytes=self.round_bytes,
            keep=self.source == "all" or comm.rank == 0,
            hold=self.hold_input,
        )


def hash_split(keys: tuple[Expr, ...], ranks: int) -> Callable[[Batch], tuple[Batch, list[int]]]:
    """A shuffle's grouping of a round's rows: each to the rank its keys hash to."""

    def split(batch: Batch) -> tuple[Batch, list[int]]:
        dest = partition_of(hash_columns([evaluate(k, batch) for k in keys]), ranks)
        return by_destination(batch, dest, ranks)

    return split


def shuffle_rounds(
    ctx,
    comm,
    inp: Iterator[Batch],
    split: Callable[[Batch], tuple[Batch, list[int]]],
    what: str,
    *,
    round_bytes: int = 0,
    keep: bool = True,
    hold: bool = False,
) -> Iterator[Batch]:
    """The rows this rank receives from a shuffle in rounds whose rows
    ``split`` groups by destination (:func:`hash_split`, or a skew-aware
    routing: :mod:`glint.distributed.skew_join`)."""
    yield from exchange_rounds(
        ctx,
        comm,
        inp,
        split,
        "alltoall",
        "shuffle",
        what,
        limit=round_size(ctx.memory, round_bytes, comm.packed),
        keep=keep,
        hold=hold,
    )
