"""COUNT, SUM, AVG, MIN and MAX as window functions: each row's value over
its frame, for all rows and partitions at once (glint.kernels.window).

Each takes (the window call, its arguments in sorted order, the sorted rows:
glint.exec.window.SortedRows, whose ``frame_pieces`` give every row's frame
as [lo, hi) pieces) and returns its column in sorted order.
"""

from __future__ import annotations

import functools

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.functions.aggregates.states import sum_input, sum_result
from glint.functions.strings import core as strings
from glint.kernels import wide as W
from glint.kernels import window as K
from glint.kernels.sort import float_order_key, lexsort


def count(w, args, r) -> Column:
    """COUNT(x) and COUNT(*) over the frame."""
    mask = args[0].valid if args else None
    return Column(T.BIGINT, sum(K.range_count(mask, lo, hi) for lo, hi in r.frame_pieces(w.frame)))


def sum_avg(w, args, r) -> Column:
    (x,) = args
    pieces = r.frame_pieces(w.frame)
    counts = sum(K.range_count(x.valid, lo, hi) for lo, hi in pieces)
    data, floating = sum_input(x)
    if floating:
        s = sum(K.range_sum_float(data, lo, hi) for lo, hi in pieces)
    else:
        s = functools.reduce(W.add, (K.range_sum_exact(data, lo, hi) for lo, hi in pieces))
    return sum_result(w, s, counts, floating)


def extreme(largest: bool):
    """MIN (largest False) or MAX over the frame."""

    def run(w, args, r) -> Column:
        (x,) = args
        key = _order_key(x)
        best = None
        for i, (lo, hi) in enumerate(r.frame_pieces(w.frame)):
            if i == 0 and w.frame.start.kind == "unbounded":  # from the partition's start: one segmented scan
                b = K.running_best_row(key, x.valid, r.part_id, lo, hi, largest)
            else:
                b = K.range_best_row(key, x.valid, lo, hi, largest)
            ok = x.validity()
            best = b if best is None else K.best_of(key, ok, best, b, largest)
        v = x.take(best.clamp(min=0))
        return Column(x.dtype, v.data, best >= 0, x.dictionary)

    return run


def _order_key(x: Column) -> torch.Tensor:
    """One integer per row that orders as the values do (DuckDB's order:
    strings by bytes, NaN above every number); wide values by their rank."""
    if x.is_wide:
        perm = lexsort([(x.data, None, False, False)])
        rank = torch.cumsum(K.boundaries([(x.data[perm], None)], len(x)).long(), 0)
        key = torch.empty_like(rank)
        key[perm] = rank
        return key
    if x.dtype.is_string:
        return strings.order_ranks(x)
    if x.data.is_floating_point():
        return float_order_key(x.data)
    return x.data.long()
