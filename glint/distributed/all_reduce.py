"""All-reduce: the final aggregation of COUNT, SUM, AVG, MIN, MAX, BOOL_AND and BOOL_OR without
GROUP BY, element by element across the ranks (ncclAllReduce / Gloo's
allreduce, as "Terabyte-scale analytics in the blink of an eye" finishes such
aggregates, §2.3): each rank's one-row partial state comes back as the
combined state on every rank (``replicated``), one collective per state
column instead of every rank's row to every other.

States and their reductions: counts sum; exact sums of integers and DECIMALs
are [hi, lo] limb pairs whose limbs sum separately (lo's carries are moved
into hi afterwards, so nothing overflows); DOUBLE sums sum; MIN / MAX of
integers, DECIMALs, DATEs, TIMESTAMPs and BOOLEANs take the minimum / maximum of the
ranks that have a value (the others contribute the operation's identity) and
are NULL when no rank has one. MIN / MAX of DOUBLE (NaN order) and VARCHAR go
through a broadcast of the states instead (see :func:`reducible`).

>>> from glint.columnar import types as T
>>> from glint.plan.expr import AggCall, ColRef, Field
>>> x = ColRef(Field(1, "x", T.DOUBLE))
>>> reducible([(None, AggCall("sum", (x,), T.DOUBLE)), (None, AggCall("count_star", (), T.BIGINT))])
True
>>> reducible([(None, AggCall("max", (x,), T.DOUBLE))])
False
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from glint.columnar.column import LIMB, Batch, Column
from glint.distributed.exchange import collect, communicator
from glint.distributed.stats import ExchangeStats
from glint.exec.base import PhysicalNode
from glint.plan.aggregates import AS_EXTREME
from glint.plan.expr import AggCall, Field

_EXTREME_KINDS = ("INTEGER", "BIGINT", "DECIMAL", "DATE", "TIMESTAMP", "BOOLEAN")


def reducible(aggs) -> bool:
    """Whether every aggregate's states combine by an element-wise reduction."""
    for _, a in aggs:
        if a.distinct:
            return False
        if a.fn in AS_EXTREME and a.args[0].type.kind not in _EXTREME_KINDS:
            return False
        if a.fn not in ("count_star", "count", "sum", "avg") and a.fn not in AS_EXTREME:
            return False
    return True


@dataclass(frozen=True, slots=True, eq=False)
class AllReduceExec(PhysicalNode):
    child: PhysicalNode  # a keyless partial aggregation: one state row
    aggs: tuple[tuple[Field, AggCall], ...]
    est_rows: float = 1.0
    breaker = True
    exchange = True  # a step every rank takes together (see steps.has_exchange)

    def describe(self):
        return "AllReduce " + ", ".join(repr(a) for _, a in self.aggs)

    def stream(self, ctx, inp):
        comm = communicator(ctx, self)
        state = collect(inp)
        what = self.describe()
        t0 = time.perf_counter()
        _, wait_s = comm.sync(None, what)  # all ranks are here: no collective can hang on a failed one
        ex = ExchangeStats(comm.step, "allreduce", what, wait_s=wait_s)
        out = {}
        for i, (_, agg) in enumerate(self.aggs):
            if agg.fn in ("count_star", "count"):
                out[("s", i, 0)] = _summed(comm, state[("s", i, 0)], what, ex)
            elif agg.fn in AS_EXTREME:
                out[("s", i, 0)] = _extreme(comm, state[("s", i, 0)], AS_EXTREME[agg.fn], what, ex)
            else:
                s, c = state[("s", i, 0)], state[("s", i, 1)]
                total = _summed(comm, s, what, ex)
                if total.is_wide:
                    hi, lo = total.data[:, 0], total.data[:, 1]
                    total = Column(total.dtype, torch.stack([hi + (lo >> 32), lo & (LIMB - 1)], dim=1))
                out[("s", i, 0)] = total
                out[("s", i, 1)] = _summed(comm, c, what, ex)
        if comm.device.type == "cuda":
            torch.cuda.synchronize(comm.device)
        ex.seconds = time.perf_counter() - t0 - wait_s
        comm.stats.record(ex)
        yield Batch(out, 1, comm.device)


def _reduce(comm, t: torch.Tensor, op: str, what: str, ex: ExchangeStats) -> torch.Tensor:
    t = t.contiguous().clone()
    comm.all_reduce(t, op, what)
    if comm.size > 1:
        ex.messages_sent += 1
        ex.bytes_sent += t.numel() * t.element_size()
        ex.bytes_received += t.numel() * t.element_size()
    return t


def _summed(comm, c: Column, what: str, ex: ExchangeStats) -> Column:
    return Column(c.dtype, _reduce(comm, c.data, "sum", what, ex))


def _extreme(comm, c: Column, fn: str, what: str, ex: ExchangeStats) -> Column:
    data = c.data.to(torch.uint8) if c.data.dtype == torch.bool else c.data
    info = torch.iinfo(data.dtype)
    identity = info.max if fn == "min" else info.min
    if c.valid is not None:
        data = torch.where(c.valid, data, torch.full_like(data, identity))
    data = _reduce(comm, data, fn, what, ex)
    has = _reduce(comm, c.validity().to(torch.uint8), "max", what, ex).bool()
    if c.data.dtype == torch.bool:
        data = data.bool()
    return Column(c.dtype, data, has, c.dictionary)
