"""Adaptive join exchange: broadcast the build side or shuffle both sides,
decided at run time from the build side's actual size (Theseus's adaptive
exchange, with the cost model of "Terabyte-scale analytics in the blink of
an eye", eq. 3).

The planner picks broadcast or shuffle from cardinality estimates, which
filters and skew can put far off. When both are correct for the join and
the build side's size is an estimate, it plans this node instead
(:mod:`glint.distributed.planner`). Each rank:

1. reads its build input to the end and holds it (a hash join's build is a
   pipeline breaker anyway; held under a reservation, spilled when it does
   not fit);
2. posts its held rows and bytes and its memory budget in one size exchange,
   so every rank sees the same numbers and takes the same decision
   (:func:`decide`): broadcasting the build side R costs N - 1 times its
   share per rank, shuffling costs a 1/N-th of what moves (R when it is not
   yet hashed on the keys, plus the probe side S, when it is not), with R
   counted as its actual rows and S as the planner's estimate (the probe is
   never read before the decision: it streams through exactly one of the two
   paths); a broadcast that would take more than a quarter of a rank's memory
   budget is not chosen;
3. broadcast: the held rows go to every rank (:class:`BroadcastExec`'s
   exchange) and the probe streams past them where it is; shuffle: the held
   rows and the probe stream each go through a shuffle in rounds on the join
   keys (:class:`ShuffleExec`), the held side first;
4. joins as :class:`~glint.exec.join.JoinExec` does, building the
   held side.

Only alternatives correct for the join kind are planned: the right side is
broadcast for inner, left, semi, anti, mark and scalar joins, the left side
for inner and right joins; a full join never is (it needs both sides'
unmatched rows once). A NOT IN / IN-mark shuffles on its other keys only
(its IN key's NULLs concern every outer row), and without other keys it is
never adaptive. Where the join allows it (``kept``: set by the planner, see
:mod:`glint.distributed.skew_join`), the shuffle path keeps one side's heavy
keys apart: their rows on that side stay, those on the other side go to
every rank. The decision shows in EXPLAIN ANALYZE (a note on the node)
and in ``Result.rank_stats`` (an exchange record of kind ``decision`` whose
``detail`` holds the sizes seen, the costs and the choice).

>>> d = decide([10, 12, 0], [240, 288, 0], [1 << 30] * 3, side="right", row_bytes=24, probe_rows=10_000,
...            probe_bytes=240_000, build_moves=True, probe_moves=True, ranks=3)
>>> d["choice"], d["reason"]
('broadcast right', 'eq. 3')
>>> decide([4000] * 3, [96_000] * 3, [1 << 30] * 3, side="right", row_bytes=24, probe_rows=10_000,
...        probe_bytes=240_000, build_moves=True, probe_moves=True, ranks=3)["choice"]
'shuffle'
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass

from glint.distributed.broadcast import BroadcastExec
from glint.distributed.cost import ExchangeCost
from glint.distributed.exchange import communicator
from glint.distributed.shuffle import ShuffleExec
from glint.distributed.skew_join import skew_join
from glint.distributed.stats import ExchangeStats, describe_decision
from glint.exec.join import JoinExec
from glint.plan.expr import Expr
from glint.runtime.spill import PartitionedBatches

BROADCAST_SHARE = 4  # a broadcast build side may take up to 1 / this of a rank's memory budget


def decide(
    rows: list[int],
    nbytes: list[int],
    budgets: list[int],
    *,
    side: str,
    row_bytes: int,
    probe_rows: float,
    probe_bytes: float,
    build_moves: bool,
    probe_moves: bool,
    ranks: int,
    hosts: int = 1,
) -> dict:
    """The choice from every rank's held build rows and bytes and memory
    budget (the same lists on every rank, so the same choice), as the record
    EXPLAIN ANALYZE and the statistics show."""
    m = ExchangeCost(ranks, hosts)
    r = float(sum(rows) * row_bytes)  # the planner's units: rows x the row width of the types
    bcast = m.broadcast(r)
    shuffle = (m.shuffle(r) if build_moves else 0.0) + (m.shuffle(probe_bytes) if probe_moves else 0.0)
    fits = sum(nbytes) * BROADCAST_SHARE <= min(budgets)
    if bcast <= shuffle and fits:
        choice, reason = f"broadcast {side}", "eq. 3"
    else:
        choice = "shuffle"
        reason = "eq. 3" if bcast > shuffle else f"broadcast over 1/{BROADCAST_SHARE} of a rank's memory"
    return {
        "choice": choice,
        "reason": reason,
        "side": side,
        "rows": list(rows),
        "bytes": list(nbytes),
        "probe_rows_est": int(probe_rows),
        "probe_bytes_est": int(probe_bytes),
        "broadcast_cost": bcast,
        "shuffle_cost": shuffle,
        "ranks": ranks,
    }


@dataclass(frozen=True, slots=True, eq=False)
class AdaptiveJoinExec(JoinExec):
    """A hash join whose inputs arrive unexchanged; it builds the
    ``build_right`` side, which it may broadcast."""

    left_shuffle: tuple[Expr, ...] | None = None  # shuffle path: the left side hashed on these (None: it stays)
    right_shuffle: tuple[Expr, ...] | None = None
    probe_rows: float = 0.0  # the planner's estimate of the other side (all ranks)
    probe_bytes: float = 0.0
    row_bytes: int = 1  # the planner's width of a build-side row
    hosts: int = 1
    round_bytes: int = 0  # the shuffles' rounds (0: from the rank's memory budget)
    hold_probe: bool = False  # the probe's shuffle reads it to its end first
    kept: str | None = None  # the shuffle path keeps this side's heavy keys apart (glint.distributed.skew_join)
    exchange = True  # a step every rank takes together (see steps.has_exchange)

    @classmethod
    def of(cls, join: JoinExec, **adaptive) -> AdaptiveJoinExec:
        return cls(**{f.name: getattr(join, f.name) for f in dataclasses.fields(JoinExec)}, **adaptive)

    @property
    def side(self) -> str:
        return "right" if self.build_right else "left"

    def describe(self):
        moves = [
            f"{name} on ({', '.join(map(repr, keys))})"
            for name, keys in (("left", self.left_shuffle), ("right", self.right_shuffle))
            if keys is not None
        ]
        return (
            "Adaptive"
            + JoinExec.describe(self).removeprefix("Equi")
            + f": broadcast {self.side} or shuffle {', '.join(moves)}"
            + (f", {self.kept}'s heavy keys stay" if self.kept else "")
        )

    def stream(self, ctx, left, right):
        comm = communicator(ctx, self)
        build_inp, probe_inp = (right, left) if self.build_right else (left, right)
        build_keys, probe_keys = (
            (self.right_shuffle, self.left_shuffle) if self.build_right else (self.left_shuffle, self.right_shuffle)
        )
        res = ctx.memory.reservation(f"AdaptiveJoin build {self.describe()[:60]}")
        held = PartitionedBatches(1, ctx.spill, res)
        try:
            first = held.hold(build_inp)
            choice = self._decide(ctx, comm, held, build_keys is not None, probe_keys is not None)
            build = itertools.chain([first], held.drain(0))
            probe = probe_inp
            if choice == "shuffle" and self.kept is not None:
                lhs, rhs = (probe, build) if self.build_right else (build, probe)
                yield from skew_join(
                    self,
                    ctx,
                    lhs,
                    rhs,
                    self.left_shuffle,
                    self.right_shuffle,
                    kept=self.kept,
                    round_bytes=self.round_bytes,
                    hold_left=self.hold_probe and self.build_right,
                    hold_right=self.hold_probe and not self.build_right,
                )
                return
            if choice != "shuffle":
                build = BroadcastExec(None).stream(ctx, build)
            else:
                if build_keys is not None:
                    build = ShuffleExec(None, build_keys, round_bytes=self.round_bytes).stream(ctx, build)
                if probe_keys is not None:
                    probe = ShuffleExec(
                        None, probe_keys, round_bytes=self.round_bytes, hold_input=self.hold_probe
                    ).stream(ctx, probe)
            lhs, rhs = (probe, build) if self.build_right else (build, probe)
            yield from JoinExec.stream(self, ctx, lhs, rhs)
        finally:
            held.drop()
            res.release()

    def _decide(self, ctx, comm, held: PartitionedBatches, build_moves: bool, probe_moves: bool) -> str:
        t0 = time.perf_counter()
        what = f"{self.describe()}: decision"
        posts, wait_s = comm.sync((held.rows(), held.nbytes(), ctx.memory.limit), what)
        rows, nbytes, budgets = (list(x) for x in zip(*posts))
        d = decide(
            rows,
            nbytes,
            budgets,
            side=self.side,
            row_bytes=self.row_bytes,
            probe_rows=self.probe_rows,
            probe_bytes=self.probe_bytes,
            build_moves=build_moves,
            probe_moves=probe_moves,
            ranks=comm.size,
            hosts=self.hosts,
        )
        comm.stats.record(
            ExchangeStats(
                comm.step,
                "decision",
                self.describe(),
                wait_s=wait_s,
                seconds=time.perf_counter() - t0 - wait_s,
                detail=d,
            )
        )
        ctx.note(self, "decided at run time: " + describe_decision(d))
        return d["choice"]
