"""Aggregates whose value is one row's: ARG_MAX / ARG_MIN (MAX_BY / MIN_BY,
and the _NULL forms), FIRST / LAST / ANY_VALUE, with or without ORDER BY
inside the call.

Their states are the picked row's columns, so states combine by picking
again among them (glint.kernels.group_pick):

- ARG_MAX(x, y) / ARG_MIN(x, y): [x, y] of the first row with the largest
  (smallest) y among the rows where both are present (y NULL: no value
  yet); ARG_MAX_NULL / ARG_MIN_NULL keep rows whose x is NULL;
- FIRST(x) / LAST(x): [x, seen] of the first (last) row, NULL or not
  (``seen``: the group had a row); chunks and partitions combine in input
  order;
- ANY_VALUE(x): [x] of the first row whose x is present.

With an ORDER BY inside the call, FIRST / LAST / ANY_VALUE see a group's
rows at once, sorted by the keys (ties keep input order).

>>> import torch, pyarrow as pa
>>> from glint.kernels.groupby import Slots
>>> from glint.plan.expr import AggCall
>>> x = Column.from_arrow(pa.array(["a", "b", None, "d"]))
>>> y = Column.from_arrow(pa.array([3, 7, 9, None]))
>>> s = Slots(torch.tensor([0, 0, 0, 1]), 2)
>>> agg = AggCall("arg_max", (), T.VARCHAR)
>>> arg_final(agg, arg_states(agg, [x, y], s)).to_arrow().to_pylist()
['b', None]
>>> first = AggCall("last", (), T.VARCHAR)
>>> edge_final(first, edge_states(first, [x], s)).to_arrow().to_pylist()
[None, 'd']
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.functions.strings import core as strings
from glint.kernels import group_pick as P
from glint.kernels import groupby as G
from glint.kernels import window as K
from glint.kernels.sort import float_order_key, lexsort


def order_key(x: Column) -> torch.Tensor:
    """One int64 per row that orders as the values do (DuckDB's order:
    strings by bytes, NaN above every number, -0.0 equal to 0.0); wide
    values by their rank. NULL rows: anything."""
    if x.is_wide:
        perm = lexsort([(x.data, None, False, False)])
        rank = torch.cumsum(K.boundaries([(x.data[perm], None)], len(x)).long(), 0)
        key = torch.empty_like(rank)
        key[perm] = rank
        return key
    if x.dtype.is_string:
        return strings.order_ranks(x)
    if x.data.is_floating_point():
        return float_order_key(x.data).long()
    return x.data.long()


def _take(x: Column, rows: torch.Tensor, valid: torch.Tensor) -> Column:
    """Rows ``rows`` of ``x`` (-1: none), NULL where ``valid`` is False;
    strings keep only their own dictionary entries."""
    t = x.take(rows.clamp(min=0)) if len(x) else Column.nulls(x.dtype, rows.shape[0], x.device)
    out = Column(x.dtype, t.data, valid & t.validity(), t.dictionary)
    return out.compact() if x.dtype.is_string else out


# ------------------------------------------------------------------ ARG_MAX, ARG_MIN
def _largest(agg) -> bool:
    return agg.fn.startswith("arg_max")


def _keeps_null(agg) -> bool:
    return agg.fn.endswith("_null")


def _pick(agg, x: Column, y: Column, slots, mask: torch.Tensor) -> list[Column]:
    rows = P.best_rows(order_key(y), slots, _largest(agg), mask)
    has = rows >= 0
    return [_take(x, rows, has), _take(y, rows, has)]


def arg_states(agg, cols: list[Column], slots) -> list[Column]:
    x, y = cols
    mask = y.validity() if _keeps_null(agg) else y.validity() & x.validity()
    return _pick(agg, x, y, slots, mask)


def arg_combine(agg, cols: list[Column], slots) -> list[Column]:
    x, y = cols
    return _pick(agg, x, y, slots, y.validity())


def arg_final(agg, cols: list[Column]) -> Column:
    x = cols[0]
    return Column(agg.type, x.data, x.valid, x.dictionary)


# ------------------------------------------------------------------ FIRST, LAST, ANY_VALUE
def _edge(agg, x: Column, slots, mask: torch.Tensor | None) -> list[Column]:
    rows = (P.last_rows if agg.fn == "last" else P.first_rows)(slots, mask)
    has = rows >= 0
    if agg.fn == "any_value":
        return [_take(x, rows, has)]
    return [_take(x, rows, has), Column(T.BOOLEAN, has)]


def edge_states(agg, cols: list[Column], slots) -> list[Column]:
    (x,) = cols
    return _edge(agg, x, slots, x.valid if agg.fn == "any_value" else None)


def edge_combine(agg, cols: list[Column], slots) -> list[Column]:
    x = cols[0]
    seen = x.validity() if agg.fn == "any_value" else cols[1].data
    return _edge(agg, x, slots, seen)


def edge_final(agg, cols: list[Column]) -> Column:
    x = cols[0]
    return Column(agg.type, x.data, x.valid, x.dictionary)


def edge_whole(agg, cols: list[Column], slots, order) -> Column:
    """FIRST / LAST / ANY_VALUE of each group's rows in the ORDER BY's order."""
    if not order:
        return edge_final(agg, edge_states(agg, cols, slots))
    (x,) = cols
    keys = [(slots.gid, None, False, False)]
    for col, desc, nulls_first in order:
        keys.append((order_key(col), col.valid, desc, nulls_first))
    perm = lexsort(keys) if len(x) else slots.gid
    ordered = G.Slots(slots.gid[perm], slots.n)
    return edge_final(agg, edge_states(agg, [x.take(perm)], ordered))
