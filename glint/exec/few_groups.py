"""COUNT, SUM and AVG of a chunk in one pass per eight input columns
(glint.kernels.group_reduce), instead of one scatter per state.

Used by the hash aggregation's partial step on CUDA when the chunk has at most
``group_reduce.MAX_GROUPS`` groups (TPC-H Q1's four, or one without GROUP BY:
per-program accumulators) or ``group_reduce.MANY_GROUPS`` to
``ATOMIC_MAX_GROUPS`` (atomics, one read of the group ids for all the columns).
The states are the same columns the per-function partial states give (COUNT:
[count]; SUM, AVG: [sum, count] with an exact [hi, lo] or a DOUBLE sum), so
combining and finishing them is unchanged. Each distinct input column is read
once however many aggregates take it (``sum(x)`` and ``avg(x)``), and COUNT(*)
reuses the row count of any input without NULLs.

Aggregates it does not take (DISTINCT, MIN / MAX, the moments, STRING_AGG, an
input wider than 64 bits) keep their own partial states.
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.functions import fused_sums as FS
from glint.functions.evaluate import FUSED_ARITHMETIC, evaluate
from glint.functions.validity import predicate_mask
from glint.kernels import group_reduce as R
from glint.kernels.backend import triton_enabled
from glint.kernels.groupby import Slots

_FUSED = ("count_star", "count", "sum", "avg")
_SUMMABLE = ("INTEGER", "BIGINT", "HUGEINT", "DECIMAL", "DOUBLE")  # 1-D int64 / int32 / float64 storage


def applies(aggs, slots: Slots, batch: Batch, enabled: bool) -> bool:
    """Whether the fused pass takes any of ``aggs`` for this chunk."""
    return (
        enabled
        and batch.device.type == "cuda"
        and R.fits(slots.n, batch.num_rows)
        and batch.num_rows > 0
        and any(a.fn in _FUSED and not a.distinct for _, a in aggs)
    )


def takes_all(aggs) -> bool:
    """Whether the fused pass computes every one of ``aggs`` (their types
    permitting): COUNT, SUM and AVG, none DISTINCT, of summable inputs."""
    return all(
        a.fn in _FUSED
        and not a.distinct
        and (a.fn == "count_star" or a.fn == "count" or a.args[0].type.kind in _SUMMABLE)
        for _, a in aggs
    )


def fused_states(
    aggs, batch: Batch, slots: Slots, gid: torch.Tensor | None, rows: torch.Tensor | None = None, counts: bool = False
) -> dict[int, list[Column]]:
    """Partial states of the COUNT / SUM / AVG aggregates of ``aggs`` (by
    position), computed together; ``gid`` is each row's group (None: one
    group). ``rows``: the rows that count (a WHERE folded into the
    aggregation; None: all). With ``rows``, or ``counts``, the result also
    holds, under key -1, the count of the rows that count per group."""
    if batch.device.type == "cuda" and FUSED_ARITHMETIC.get() is not None and triton_enabled() and FS.takes(aggs):
        # inputs that are expressions: computed inside the summing kernel, not into columns first
        got = FS.fused_sums(aggs, batch, slots.n, gid, rows, counts)
        if got is not None:
            return got
    inputs: list[R.SumInput] = []
    index: dict[tuple, int] = {}
    plan: dict[int, tuple[str, int]] = {}

    def add(values: torch.Tensor, valid, floating: bool) -> int:
        key = (id(values), id(valid) if valid is not None else None, floating)
        if key not in index:
            index[key] = len(inputs)
            inputs.append(R.SumInput(values, valid, floating))
        return index[key]

    # (``rows`` is not ANDed into each input's mask: group_sums leaves its rows out of all)
    pending_rows = [-1] if rows is not None or counts else []
    for i, (_, agg) in enumerate(aggs):
        if agg.fn not in _FUSED or agg.distinct:
            continue
        mask = None if agg.filter is None else predicate_mask(evaluate(agg.filter, batch))
        if agg.fn == "count_star":
            if mask is None:
                pending_rows.append(i)
            else:
                plan[i] = ("count", add(mask, mask, False))
            continue
        x = evaluate(agg.args[0], batch)
        if x.is_wide or x.data.dim() != 1 or x.dtype.kind not in _SUMMABLE:
            continue
        valid = x.valid if mask is None else (mask if x.valid is None else x.valid & mask)
        floating = x.dtype.kind == "DOUBLE"
        plan[i] = ("count" if agg.fn == "count" else "sum", add(x.data, valid, floating))
    if pending_rows:
        # COUNT(*): the count of an input without NULLs, else that of a column read for it
        # (the narrowest at hand: the WHERE's mask, the group ids)
        free = next((j for j, x in enumerate(inputs) if x.valid is None), None)
        if free is None:
            src = rows if rows is not None else gid
            if src is None:
                src = torch.zeros(batch.num_rows, dtype=torch.bool, device=batch.device)
            free = add(src, None, False)
        for i in pending_rows:
            plan[i] = ("count", free)
    if not inputs:
        return {}
    results = R.group_sums(gid, slots.n, inputs, rows)
    out = {}
    for i, (what, j) in plan.items():
        total, counts = results[j]
        if what == "count":
            out[i] = [Column(T.BIGINT, counts)]
        elif inputs[j].floating:
            out[i] = [Column(T.DOUBLE, total), Column(T.BIGINT, counts)]
        else:
            out[i] = [Column(T.HUGEINT, total), Column(T.BIGINT, counts)]
    return out
