"""Hash aggregation: GROUP BY keys to dense group ids, then one scatter
reduction per aggregate. NULL group keys form a group of their own; aggregates
skip NULL inputs; SUM of integers and DECIMALs is exact (limb sums)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import types as T
from ..errors import NotSupported
from ..kernels import groupby as G
from ..kernels import wide as W
from ..kernels.keys import encode_keys
from ..plan.expr import AggCall, Expr, Field
from ..storage.column import Batch, Column
from .base import PhysicalNode
from .expr_eval import evaluate
from .functions import strings


@dataclass(frozen=True, slots=True, eq=False)
class HashAggregateExec(PhysicalNode):
    child: PhysicalNode
    groups: tuple[tuple[Field, Expr], ...]
    aggs: tuple[tuple[Field, AggCall], ...]
    est_rows: float = 0.0

    def describe(self):
        g = ", ".join(f"{e!r}" for _, e in self.groups)
        a = ", ".join(f"{e!r}" for _, e in self.aggs)
        return f"HashAggregate groups=[{g}] aggs=[{a}]"

    def execute(self, ctx, batch: Batch) -> Batch:
        dev = batch.device
        out = {}
        if self.groups:
            key_cols = [evaluate(e, batch) for _, e in self.groups]
            if batch.num_rows == 0:
                gid = torch.zeros(0, dtype=torch.int64, device=dev)
                n, first = 0, gid
            else:
                ((key, _),) = encode_keys([key_cols], nulls_equal=True)
                gid, n, first = G.group_ids(key)
            for (f, _), c in zip(self.groups, key_cols):
                out[f.id] = c.take(first)
        else:
            gid = torch.zeros(batch.num_rows, dtype=torch.int64, device=dev)
            n = 1
        slots = G.Slots(gid, n)
        for f, agg in self.aggs:
            out[f.id] = aggregate(agg, batch, slots)
        return Batch(out, n, dev)


def aggregate(agg: AggCall, batch: Batch, slots: G.Slots) -> Column:
    if agg.fn == "count_star":
        return Column(T.BIGINT, G.count(slots))
    x = evaluate(agg.args[0], batch)
    if agg.distinct:
        x, slots = _distinct_rows(x, slots)
    valid = x.valid
    if agg.fn == "count":
        return Column(T.BIGINT, G.count(slots, valid))
    if x.is_wide:
        raise NotSupported(f"{agg.fn.upper()} over values beyond 64 bits")
    counts = G.count(slots, valid)
    has = counts > 0
    if agg.fn in ("min", "max"):
        if x.dtype.is_string:       # by byte order, not by code
            return strings.extreme_rows(x, slots, agg.fn == "max", has)
        data, s = (x.data, slots) if valid is None else (x.data[valid], slots.subset(valid))
        return Column(agg.type, G.extreme(data, s, agg.fn == "max"), has, x.dictionary)
    data = x.data if valid is None else torch.where(valid, x.data, torch.zeros_like(x.data))
    if x.dtype.kind == "DOUBLE":
        s = G.float_sum(data, slots)
        if agg.fn == "sum":
            return Column(T.DOUBLE, s, has)
        return Column(T.DOUBLE, s / counts.clamp(min=1).double(), has)
    if x.dtype.kind == "BOOLEAN" or x.dtype.kind == "NULL":
        data = data.long()
    wide = G.exact_sum(data, slots)
    if agg.fn == "sum":
        return Column(agg.type, G.narrow_if_fits(wide), has)
    if agg.fn == "avg":
        scale = x.dtype.scale if x.dtype.is_decimal else 0
        # sum / (count * 10**scale) rounded as DuckDB rounds it (extended precision, then double)
        den = W.scale(counts.clamp(min=1), 10 ** scale) if scale else counts.clamp(min=1)
        return Column(T.DOUBLE, W.quotient_ld(wide, den), has)
    raise NotSupported(f"aggregate {agg.fn}")


def _distinct_rows(x: Column, slots: G.Slots):
    """The first row of each distinct (group, value) pair."""
    gid = slots.gid
    if gid.numel() == 0:
        return x, slots
    gcol = Column(T.BIGINT, gid)
    ((key, _),) = encode_keys([[gcol, x]], nulls_equal=True)
    _, _, first = G.group_ids(key)
    return x.take(first), G.Slots(gid[first], slots.n)
