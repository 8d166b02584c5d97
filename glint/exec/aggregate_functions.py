"""The aggregate functions over grouped rows (``slots``: each row's group,
glint.kernels.groupby.Slots): partial states of a chunk, their combination,
final values, and the whole-batch evaluation of any aggregate (DISTINCT and
holistic ones included). Which functions combine from states is in
glint.plan.aggregates.

States of one aggregate are a list of columns (one row per group):

- COUNT(*), COUNT: [count]; SUM, AVG: [sum (DOUBLE or exact [hi, lo]
  limbs), count]; MIN, MAX, BOOL_AND, BOOL_OR: [extreme, NULL where the
  group had no value];
- VAR_* / STDDEV_*: [count, mean, M2] (glint.kernels.moments);
- STRING_AGG without ORDER BY: [the group's strings joined so far].

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
from glint.errors import ExecutionError, NotSupported
from glint.kernels import groupby as G
from glint.kernels import moments as M
from glint.kernels import wide as W
from glint.exec.keys import encode_keys
from glint.plan import aggregates as A
from glint.plan.expr import AggCall
from glint.columnar.column import Batch, Column
from glint.exec.expr_eval import evaluate, predicate_mask
from glint.functions.strings import core as strings
from glint.functions.aggregates.quantile import quantile
from glint.functions.aggregates.string_agg import string_agg


def decomposable(aggs) -> bool:
    """Whether every aggregate of ``aggs`` ((field, AggCall) pairs) combines from partial states.

    >>> from glint.plan.expr import AggCall
    >>> decomposable([(None, AggCall("sum", (), T.BIGINT))]), decomposable([(None, AggCall("sum", (), T.BIGINT, True))])
    (True, False)
    """
    return all(A.decomposable(a) for _, a in aggs)


def n_states(agg: AggCall) -> int:
    if agg.fn in ("sum", "avg"):
        return 2
    return 3 if agg.fn in A.MOMENTS else 1


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


def sum_input(x: Column) -> tuple[torch.Tensor, bool]:
    """(values with NULLs as 0, is floating)."""
    data = x.data if x.valid is None else torch.where(
        x.valid if x.data.dim() == 1 else x.valid[:, None], x.data, torch.zeros_like(x.data))
    if x.dtype.kind == "DOUBLE":
        return data, True
    if x.dtype.kind in ("BOOLEAN", "NULL"):
        data = data.long()
    return data, False


def _no_wide(agg: AggCall, x: Column) -> None:
    if x.is_wide and agg.fn not in A.AS_EXTREME and agg.fn not in ("sum", "avg"):
        raise NotSupported(f"{agg.fn.upper()} over values beyond 64 bits")


def wide_ranks(data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(distinct values in order, each row's rank among them) of wide [hi, lo]
    rows: 0 <= lo < 2**32, so the rows' lexicographic order is their numeric order.

    >>> v, r = wide_ranks(torch.tensor([[1, 0], [-1, 5], [0, 7], [-1, 5]]))
    >>> v.tolist(), r.tolist()
    ([[-1, 5], [0, 7], [1, 0]], [2, 0, 1, 0])
    """
    return torch.unique(data, dim=0, return_inverse=True)


# ------------------------------------------------------------------ partial states
def partial_states(agg: AggCall, batch: Batch, slots: G.Slots) -> list[Column]:
    if agg.fn == "count_star":
        return [Column(T.BIGINT, G.count(slots, filter_mask(agg, batch)))]
    return states_of(agg, agg_input(agg, batch), slots)


def states_of(agg: AggCall, x: Column, slots: G.Slots) -> list[Column]:
    """The states of the rows of ``x`` (the argument, FILTER applied)."""
    if agg.fn == "count":
        return [Column(T.BIGINT, G.count(slots, x.valid))]
    _no_wide(agg, x)
    if agg.fn in A.AS_EXTREME:
        return [extreme(x, slots, A.AS_EXTREME[agg.fn] == "max", G.count(slots, x.valid) > 0)]
    if agg.fn in A.MOMENTS:
        n, mean, m2 = M.moments(x.data.double(), x.valid, slots)
        return [Column(T.BIGINT, n), Column(T.DOUBLE, mean), Column(T.DOUBLE, m2)]
    if agg.fn == "string_agg":
        return [string_agg(x, slots, agg.params[0])]
    if agg.fn not in ("sum", "avg"):
        raise NotSupported(f"partial states of {agg.fn}")
    counts = G.count(slots, x.valid)
    data, floating = sum_input(x)
    if floating:
        return [Column(T.DOUBLE, G.float_sum(data, slots)), Column(T.BIGINT, counts)]
    if x.is_wide:
        # the hi limbs add in int64: a sum past the wide range is DuckDB's overflow error
        W.check_magnitude(G.float_sum(W.to_double(data), slots), None, f"{agg.fn.upper()} of {x.dtype}")
        return [Column(T.HUGEINT, G.exact_sum_wide(data, slots)), Column(T.BIGINT, counts)]
    return [Column(T.HUGEINT, G.exact_sum(data, slots)), Column(T.BIGINT, counts)]


def extreme(x: Column, slots: G.Slots, largest: bool, has: torch.Tensor) -> Column:
    """MIN or MAX per group (NULL where ``has`` is False); strings by byte order."""
    valid = x.valid
    data, s = (x.data, slots) if valid is None else (x.data[valid], slots.subset(valid))
    if x.dtype.is_string:               # by byte order, not by dictionary code
        return strings.extreme_rows(x, slots, largest, has)
    if x.is_wide:                       # the extreme rank, then its value
        if data.shape[0] == 0:
            return Column(x.dtype, torch.zeros((slots.n, 2), dtype=torch.int64, device=data.device), has)
        values, ranks = wide_ranks(data)
        best = G.extreme(ranks, s, largest).clamp(0, values.shape[0] - 1)
        return Column(x.dtype, values[best], has)
    return Column(x.dtype, G.extreme(data, s, largest), has, x.dictionary)


def combine_states(agg: AggCall, cols: list[Column], slots: G.Slots) -> list[Column]:
    """States of several rows per group (chunks, partitions, ranks) combined."""
    if agg.fn in ("count_star", "count"):
        return [Column(T.BIGINT, slots.fold(slots.scatter_add(cols[0].data), "sum"))]
    if agg.fn in A.AS_EXTREME:
        x = cols[0]
        return [extreme(x, slots, A.AS_EXTREME[agg.fn] == "max", G.count(slots, x.valid) > 0)]
    if agg.fn in A.MOMENTS:
        n, mean, m2 = M.merge(cols[0].data, cols[1].data, cols[2].data, slots)
        return [Column(T.BIGINT, n), Column(T.DOUBLE, mean), Column(T.DOUBLE, m2)]
    if agg.fn == "string_agg":
        return [string_agg(cols[0], slots, agg.params[0])]
    s, c = cols
    counts = slots.fold(slots.scatter_add(c.data), "sum")
    if s.dtype.kind == "DOUBLE":
        return [Column(T.DOUBLE, G.float_sum(s.data, slots)), Column(T.BIGINT, counts)]
    return [Column(T.HUGEINT, G.exact_sum_wide(s.data, slots)), Column(T.BIGINT, counts)]


# ------------------------------------------------------------------ final values
def final_value(agg: AggCall, cols: list[Column]) -> Column:
    if agg.fn in ("count_star", "count"):
        return Column(T.BIGINT, cols[0].data)
    if agg.fn in A.AS_EXTREME or agg.fn == "string_agg":
        x = cols[0]
        return Column(agg.type, x.data, x.valid, x.dictionary)
    if agg.fn in A.MOMENTS:
        return moments_result(agg.fn, cols[0].data, cols[2].data)
    s, c = cols
    return sum_result(agg, s.data, c.data, s.dtype.kind == "DOUBLE")


_MOMENT_NAMES = {"var_samp": "VARSAMP", "var_pop": "VARPOP", "stddev_samp": "STDDEV_SAMP",
                 "stddev_pop": "STDDEV_POP"}


def moments_result(fn: str, n: torch.Tensor, m2: torch.Tensor) -> Column:
    """VAR_SAMP / VAR_POP / STDDEV_SAMP / STDDEV_POP from counts and M2, as
    DuckDB finishes them: the sample ones are NULL below two values, the
    population ones 0 for one value; a result that is not finite (an
    overflow, a NaN input) is DuckDB's "out of range" error."""
    sample = fn.endswith("_samp")
    nd = n.double()
    den = nd - 1.0 if sample else nd
    value = m2 / den.clamp(min=1.0)
    if not sample:
        value = torch.where(n > 1, value, torch.zeros_like(value))
    if fn.startswith("stddev"):
        value = torch.sqrt(value)
    valid = n > 1 if sample else n > 0
    bad = valid & ~torch.isfinite(value)
    if bool(bad.any()):
        raise ExecutionError(f"Out of Range Error: {_MOMENT_NAMES[fn]} is out of range!")
    return Column(T.DOUBLE, torch.where(valid, value, torch.zeros_like(value)), valid)


def sum_result(agg, s: torch.Tensor, counts: torch.Tensor, floating: bool) -> Column:
    """SUM or AVG (``agg.fn``) of groups from their sums (float64, or exact
    [hi, lo] limbs) and their counts of non-NULL inputs; NULL where a group
    counted none. ``agg`` is an AggCall or a WindowFunc."""
    has = counts > 0
    if floating:
        return Column(T.DOUBLE, s if agg.fn == "sum" else s / counts.clamp(min=1).double(), has)
    if agg.fn == "sum":
        return Column(agg.type, G.narrow_if_fits(s), has)
    scale = agg.args[0].type.scale if agg.args[0].type.is_decimal else 0
    # sum / (count * 10**scale) rounded as DuckDB rounds it (extended precision, then double)
    den = W.scale(counts.clamp(min=1), 10 ** scale) if scale else counts.clamp(min=1)
    return Column(T.DOUBLE, W.quotient_ld(s, den), has)


# ------------------------------------------------------------------ whole batches
def aggregate(agg: AggCall, batch: Batch, slots: G.Slots) -> Column:
    """``agg`` over all rows of ``batch`` at once (DISTINCT and holistic aggregates too)."""
    if agg.fn == "count_star":
        return Column(T.BIGINT, G.count(slots, filter_mask(agg, batch)))
    x = agg_input(agg, batch)
    order = [(evaluate(k.expr, batch), k.descending, k.nulls_first) for k in agg.order]
    if agg.distinct:
        # a DISTINCT aggregate's ORDER BY is on its argument (the binder checks), so the
        # first row of each distinct value carries the value's sort key too
        x, slots, first = _distinct_rows(x, slots)
        if first is not None:
            order = [(c.take(first), desc, nulls_first) for c, desc, nulls_first in order]
    if agg.fn in A.QUANTILES:
        return quantile(x, slots, agg.params[0], agg.fn == "quantile_cont", agg.type)
    if agg.fn == "string_agg" and order:
        return string_agg(x, slots, agg.params[0], order)
    return final_value(agg, states_of(agg, x, slots))


def _distinct_rows(x: Column, slots):
    """(the first row of each distinct (group, value) pair, their slots, their
    positions; None when there are no rows)."""
    gid = slots.gid
    if gid.numel() == 0:
        return x, slots, None
    gcol = Column(T.BIGINT, gid)
    ((key, _),) = encode_keys([[gcol, x]], nulls_equal=True)
    _, _, first = G.group_ids(key)
    return x.take(first), G.Slots(gid[first], slots.n), first
