"""The aggregate functions' states over grouped rows (``slots``: each row's
group, glint.kernels.groupby.Slots): the partial states of a chunk, their
combination, and the final values. Which functions combine from states is
in glint.plan.aggregates.

States of one aggregate are a list of columns (one row per group):

- COUNT(*), COUNT: [count]; SUM, AVG: [sum (DOUBLE or exact [hi, lo]
  limbs), count]; MIN, MAX, BOOL_AND, BOOL_OR: [extreme, NULL where the
  group had no value];
- VAR_* / STDDEV_*: [count, mean, M2] (glint.kernels.moments);
- STRING_AGG without ORDER BY: [the group's strings joined so far].

>>> import torch, pyarrow as pa
>>> from glint.plan.expr import AggCall
>>> x = Column.from_arrow(pa.array([1.0, 2.0, 4.0, None]))
>>> s = G.Slots(torch.tensor([0, 0, 0, 1]), 2)
>>> agg = AggCall("var_samp", (), T.DOUBLE)
>>> final_moments(agg, moments_states(agg, x, s)).to_arrow().to_pylist()
[2.333333333333333, None]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import ExecutionError, NotSupported
from glint.functions.aggregates.string_agg import string_agg
from glint.functions.strings import core as strings
from glint.kernels import groupby as G
from glint.kernels import moments as M
from glint.kernels import wide as W
from glint.plan import aggregates as A


# ------------------------------------------------------------------ inputs
def sum_input(x: Column) -> tuple[torch.Tensor, bool]:
    """(values with NULLs as 0, is floating)."""
    data = (
        x.data
        if x.valid is None
        else torch.where(x.valid if x.data.dim() == 1 else x.valid[:, None], x.data, torch.zeros_like(x.data))
    )
    if x.dtype.kind == "DOUBLE":
        return data, True
    if x.dtype.kind in ("BOOLEAN", "NULL"):
        data = data.long()
    return data, False


def _no_wide(agg, x: Column) -> None:
    if x.is_wide:
        raise NotSupported(f"{agg.fn.upper()} over values beyond 64 bits")


def wide_ranks(data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(distinct values in order, each row's rank among them) of wide [hi, lo]
    rows: 0 <= lo < 2**32, so the rows' lexicographic order is their numeric order.

    >>> v, r = wide_ranks(torch.tensor([[1, 0], [-1, 5], [0, 7], [-1, 5]]))
    >>> v.tolist(), r.tolist()
    ([[-1, 5], [0, 7], [1, 0]], [2, 0, 1, 0])
    """
    return torch.unique(data, dim=0, return_inverse=True)


# ------------------------------------------------------------------ COUNT
def count_rows_states(agg, mask: torch.Tensor | None, slots: G.Slots) -> list[Column]:
    """COUNT(*): the rows FILTER keeps (``mask``; None: all)."""
    return [Column(T.BIGINT, G.count(slots, mask))]


def count_states(agg, x: Column, slots: G.Slots) -> list[Column]:
    return [Column(T.BIGINT, G.count(slots, x.valid))]


def combine_counts(agg, cols: list[Column], slots: G.Slots) -> list[Column]:
    return [Column(T.BIGINT, slots.fold(slots.scatter_add(cols[0].data), "sum"))]


def final_count(agg, cols: list[Column]) -> Column:
    return Column(T.BIGINT, cols[0].data)


# ------------------------------------------------------------------ MIN, MAX, BOOL_AND, BOOL_OR
def extreme(x: Column, slots: G.Slots, largest: bool, has: torch.Tensor) -> Column:
    """MIN or MAX per group (NULL where ``has`` is False); strings by byte order."""
    valid = x.valid
    data, s = (x.data, slots) if valid is None else (x.data[valid], slots.subset(valid))
    if x.dtype.is_string:  # by byte order, not by dictionary code
        return strings.extreme_rows(x, slots, largest, has)
    if x.is_wide:  # the extreme rank, then its value
        if data.shape[0] == 0:
            return Column(x.dtype, torch.zeros((slots.n, 2), dtype=torch.int64, device=data.device), has)
        values, ranks = wide_ranks(data)
        best = G.extreme(ranks, s, largest).clamp(0, values.shape[0] - 1)
        return Column(x.dtype, values[best], has)
    return Column(x.dtype, G.extreme(data, s, largest), has, x.dictionary)


def extreme_states(agg, x: Column, slots: G.Slots) -> list[Column]:
    """The extreme of each group's rows; also the combination of such states."""
    return [extreme(x, slots, A.AS_EXTREME[agg.fn] == "max", G.count(slots, x.valid) > 0)]


def combine_extremes(agg, cols: list[Column], slots: G.Slots) -> list[Column]:
    return extreme_states(agg, cols[0], slots)


def final_value_of_state(agg, cols: list[Column]) -> Column:
    """The single state is the value (MIN, MAX, BOOL_*, STRING_AGG)."""
    x = cols[0]
    return Column(agg.type, x.data, x.valid, x.dictionary)


# ------------------------------------------------------------------ SUM, AVG
def sum_states(agg, x: Column, slots: G.Slots) -> list[Column]:
    counts = G.count(slots, x.valid)
    data, floating = sum_input(x)
    if floating:
        return [Column(T.DOUBLE, G.float_sum(data, slots)), Column(T.BIGINT, counts)]
    if x.is_wide:
        # the hi limbs add in int64: a sum past the wide range is DuckDB's overflow error
        W.check_magnitude(G.float_sum(W.to_double(data), slots), None, f"{agg.fn.upper()} of {x.dtype}")
        return [Column(T.HUGEINT, G.exact_sum_wide(data, slots)), Column(T.BIGINT, counts)]
    return [Column(T.HUGEINT, G.exact_sum(data, slots)), Column(T.BIGINT, counts)]


def combine_sums(agg, cols: list[Column], slots: G.Slots) -> list[Column]:
    s, c = cols
    counts = slots.fold(slots.scatter_add(c.data), "sum")
    if s.dtype.kind == "DOUBLE":
        return [Column(T.DOUBLE, G.float_sum(s.data, slots)), Column(T.BIGINT, counts)]
    return [Column(T.HUGEINT, G.exact_sum_wide(s.data, slots)), Column(T.BIGINT, counts)]


def final_sum(agg, cols: list[Column]) -> Column:
    s, c = cols
    return sum_result(agg, s.data, c.data, s.dtype.kind == "DOUBLE")


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
    den = W.scale(counts.clamp(min=1), 10**scale) if scale else counts.clamp(min=1)
    return Column(T.DOUBLE, W.quotient_ld(s, den), has)


# ------------------------------------------------------------------ VAR_*, STDDEV_*
def moments_states(agg, x: Column, slots: G.Slots) -> list[Column]:
    _no_wide(agg, x)
    n, mean, m2 = M.moments(x.data.double(), x.valid, slots)
    return [Column(T.BIGINT, n), Column(T.DOUBLE, mean), Column(T.DOUBLE, m2)]


def combine_moments(agg, cols: list[Column], slots: G.Slots) -> list[Column]:
    n, mean, m2 = M.merge(cols[0].data, cols[1].data, cols[2].data, slots)
    return [Column(T.BIGINT, n), Column(T.DOUBLE, mean), Column(T.DOUBLE, m2)]


def final_moments(agg, cols: list[Column]) -> Column:
    return moments_result(agg.fn, cols[0].data, cols[2].data)


_MOMENT_NAMES = {"var_samp": "VARSAMP", "var_pop": "VARPOP", "stddev_samp": "STDDEV_SAMP", "stddev_pop": "STDDEV_POP"}


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


# ------------------------------------------------------------------ STRING_AGG
def string_agg_states(agg, x: Column, slots: G.Slots) -> list[Column]:
    """The group's strings joined (states of states join the same way: concatenation is associative)."""
    _no_wide(agg, x)
    return [string_agg(x, slots, agg.params[0])]


def string_agg_whole(agg, x: Column, slots: G.Slots, order) -> Column:
    if order:
        return string_agg(x, slots, agg.params[0], order)
    return final_value_of_state(agg, string_agg_states(agg, x, slots))
