"""The aggregate functions over grouped rows (``slots``: each row's group,
glint.kernels.groupby.Slots): partial states of a chunk, their combination,
final values, and the whole-batch evaluation of any aggregate (DISTINCT and
holistic ones included). Each function's states and values are its
registry entry's (glint.functions.aggregates); which functions combine from
states is in glint.plan.aggregates.

FILTER (WHERE c) makes the rows where c is not TRUE count as NULL inputs
(and not count at all for COUNT(*)).

>>> import torch, pyarrow as pa
>>> from glint.plan.expr import AggCall, ColRef, Field
>>> from glint.columnar.column import Batch
>>> x = Field(1, "x", T.DOUBLE)
>>> b = Batch({1: Column.from_arrow(pa.array([1.0, 2.0, 4.0, None]))}, 4)
>>> s = G.Slots(torch.tensor([0, 0, 0, 1]), 2)
>>> aggregate(AggCall("var_samp", (ColRef(x),), T.DOUBLE), b, s).to_arrow().to_pylist()
[2.333333333333333, None]
>>> from glint.plan.aggregates import Quantile
>>> aggregate(AggCall("quantile_cont", (ColRef(x),), T.DOUBLE, params=(Quantile(0.5, 1, 2, False),)), b, s).to_arrow().to_pylist()
[2.0, None]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column
from glint.errors import NotSupported
from glint.exec.keys import encode_keys
from glint.functions.aggregates.states import final_value_of_state
from glint.functions.builtins import BUILTINS
from glint.functions.evaluate import evaluate
from glint.functions.validity import predicate_mask
from glint.kernels import groupby as G
from glint.plan import aggregates as A
from glint.plan.expr import AggCall

_EVALUATORS = BUILTINS.aggregate_evaluators()


def decomposable(aggs) -> bool:
    """Whether every aggregate of ``aggs`` ((field, AggCall) pairs) combines from partial states.

    >>> from glint.plan.expr import AggCall
    >>> decomposable([(None, AggCall("sum", (), T.BIGINT))]), decomposable([(None, AggCall("sum", (), T.BIGINT, True))])
    (True, False)
    """
    return all(A.decomposable(a) for _, a in aggs)


def n_states(agg: AggCall) -> int:
    return _EVALUATORS[agg.fn].n_states


# ------------------------------------------------------------------ inputs
def filter_mask(agg: AggCall, batch: Batch) -> torch.Tensor | None:
    """Rows FILTER (WHERE ...) keeps (None: all)."""
    return None if agg.filter is None else predicate_mask(evaluate(agg.filter, batch))


def agg_input(agg: AggCall, batch: Batch) -> Column:
    """The argument, NULL where FILTER rejects the row."""
    x = evaluate(agg.args[0], batch)
    mask = filter_mask(agg, batch)
    if mask is None:
        return x
    return Column(x.dtype, x.data, mask if x.valid is None else x.valid & mask, x.dictionary)


def row_inputs(agg: AggCall, batch: Batch, slots: G.Slots, order=()):
    """(every argument's column, the slots, the ORDER BY columns) of the rows
    FILTER keeps (an aggregate whose evaluator takes rows)."""
    cols = [evaluate(a, batch) for a in agg.args]
    mask = filter_mask(agg, batch)
    if mask is None:
        return cols, slots, list(order)
    order = [(c.filter(mask), desc, nulls_first) for c, desc, nulls_first in order]
    return [c.filter(mask) for c in cols], slots.subset(mask), order


# ------------------------------------------------------------------ partial states
def partial_states(agg: AggCall, batch: Batch, slots: G.Slots) -> list[Column]:
    ev = _EVALUATORS[agg.fn]
    if ev.states is None:
        raise NotSupported(f"partial states of {agg.fn}")
    if not agg.args:  # COUNT(*): the rows FILTER keeps
        return ev.states(agg, filter_mask(agg, batch), slots)
    if ev.takes_rows:
        cols, slots, _ = row_inputs(agg, batch, slots)
        return ev.states(agg, cols, slots)
    return ev.states(agg, agg_input(agg, batch), slots)


def combine_states(agg: AggCall, cols: list[Column], slots: G.Slots) -> list[Column]:
    """States of several rows per group (chunks, partitions, ranks) combined."""
    return _EVALUATORS[agg.fn].combine(agg, cols, slots)


def final_value(agg: AggCall, cols: list[Column]) -> Column:
    return _EVALUATORS[agg.fn].final(agg, cols)


def final_computes(agg: AggCall) -> bool:
    """Whether ``agg``'s value is computed from its states (SUM, AVG, COUNT,
    the moments), not one of them as it is (MIN, MAX, STRING_AGG)."""
    return _EVALUATORS[agg.fn].final is not final_value_of_state


# ------------------------------------------------------------------ whole batches
def aggregate(agg: AggCall, batch: Batch, slots: G.Slots) -> Column:
    """``agg`` over all rows of ``batch`` at once (DISTINCT and holistic aggregates too)."""
    ev = _EVALUATORS[agg.fn]
    if not agg.args:  # COUNT(*)
        return ev.final(agg, ev.states(agg, filter_mask(agg, batch), slots))
    order = [(evaluate(k.expr, batch), k.descending, k.nulls_first) for k in agg.order]
    if ev.takes_rows:
        cols, slots, order = row_inputs(agg, batch, slots, order)
    else:
        cols = [agg_input(agg, batch)]
    if agg.distinct:
        # a DISTINCT aggregate's ORDER BY is on its argument (the binder checks), so the
        # first row of each distinct value carries the value's sort key too
        cols, slots, first = _distinct_rows(cols, slots)
        if first is not None:
            order = [(c.take(first), desc, nulls_first) for c, desc, nulls_first in order]
    x = cols if ev.takes_rows else cols[0]
    if ev.whole is not None:
        return ev.whole(agg, x, slots, order)
    return ev.final(agg, ev.states(agg, x, slots))


def _distinct_rows(cols: list[Column], slots):
    """(the first row of each distinct (group, values) combination, their
    slots, their positions; None when there are no rows)."""
    gid = slots.gid
    if gid.numel() == 0:
        return cols, slots, None
    gcol = Column(T.BIGINT, gid)
    ((key, _),) = encode_keys([[gcol, *cols]], nulls_equal=True)
    _, _, first = G.group_ids(key)
    return [c.take(first) for c in cols], G.Slots(gid[first], slots.n), first
