"""Aggregates as window functions: each row's value over its frame, for all
rows and partitions at once.

COUNT, SUM, AVG, MIN and MAX have kernels of their own (prefix sums, segment
trees and scans of glint.kernels.window). Every other aggregate runs from its
registry evaluator (:func:`from_states`):

- over a frame that is the whole partition (no ORDER BY, or UNBOUNDED
  PRECEDING to UNBOUNDED FOLLOWING), as a GROUP BY of the partitions, so
  holistic aggregates (MODE, ENTROPY) and sketches work there too;
- over any other frame, from a segment tree of its states: each row is a
  leaf's state, each level combines pairs of the one below, and a row's frame
  combines the O(log n) nodes covering it, in order (FIRST and LAST see them
  left to right). Rows are taken in blocks, so the nodes gathered at once
  stay bounded.

Each evaluator takes (the window call, its arguments in sorted order, the
sorted rows: glint.exec.window.SortedRows, whose ``frame_pieces`` give every
row's frame as [lo, hi) pieces) and returns its column in sorted order.
"""

from __future__ import annotations

import functools

import torch

from glint.columnar import types as T
from glint.columnar.column import Column, concat_columns
from glint.errors import NotSupported
from glint.functions.aggregates.picks import order_key
from glint.functions.aggregates.states import sum_input, sum_result
from glint.kernels import groupby as G
from glint.kernels import wide as W
from glint.kernels import window as K


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
        key = order_key(x)
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


# ------------------------------------------------------------------ any aggregate, from its evaluator
BLOCK_ENTRIES = 1 << 22  # segment-tree nodes gathered at once


def whole_frame(w) -> bool:
    """Whether every row's frame is its whole partition."""
    f = w.frame
    if f.exclude or f.start.kind != "unbounded":
        return False
    return f.end.kind == "unbounded" or (not w.order and f.kind != "rows" and f.end.kind == "current")


def from_states(ev, name: str, framed: bool = True):
    """The window form of an aggregate of evaluator ``ev`` (an
    AggregateEvaluator). ``framed`` False: only over whole partitions."""

    def run(w, args, r) -> Column:
        x = list(args) if ev.takes_rows else args[0]
        if whole_frame(w):
            return _per_partition(ev, w, x, r)
        if not framed or ev.states is None:
            raise NotSupported(f"{name.upper()} over a window frame other than the whole partition")
        return _segment_tree(ev, w, x, r)

    return run


def _per_partition(ev, w, x, r) -> Column:
    n = r.part_id.shape[0]
    slots = G.Slots(r.part_id, int(r.part_id[-1]) + 1 if n else 0)
    value = ev.whole(w, x, slots, []) if ev.whole is not None else ev.final(w, ev.states(w, x, slots))
    return value.take(r.part_id)


def _segment_tree(ev, w, x, r) -> Column:
    n = r.pos.shape[0]
    dev = r.pos.device
    if n == 0:
        return Column.nulls(w.type, 0, dev)
    levels = [ev.states(w, x, G.Slots(torch.arange(n, device=dev), n))]
    while len(levels[-1][0]) > 1:
        m = len(levels[-1][0])
        pairs = G.Slots(torch.arange(m, device=dev) // 2, (m + 1) // 2)
        levels.append(ev.combine(w, levels[-1], pairs))
    pieces = r.frame_pieces(w.frame)
    block = max(1, BLOCK_ENTRIES // (2 * len(levels) * len(pieces)))
    out = []
    for s in range(0, n, block):
        e = min(n, s + block)
        rows, starts, states = _covering(levels, [(lo[s:e], hi[s:e]) for lo, hi in pieces])
        order = torch.argsort(rows * (n + 1) + starts)
        cols = [c.take(order) for c in states]
        out.append(ev.final(w, _fold_in_pairs(ev, w, cols, rows[order], e - s)))
    return concat_columns(out)


def _fold_in_pairs(ev, w, cols, rows: torch.Tensor, m: int):
    """The states of each row's covering nodes (sorted by row, then left to
    right) combined into one state per row, two at a time: node 2j with node
    2j + 1, then again, until one is left. A combine of two states adds two
    DOUBLEs per slot, which gives one sum in either order; a combine of a row's
    dozens of nodes at once adds them with a GPU's atomics in whatever order
    they land, so rows with the same frame could differ in the last bit (a
    window's peers then stayed apart under DISTINCT or UNION)."""
    count = torch.bincount(rows, minlength=m)
    if rows.shape[0] == 0 or int(count.max()) <= 2:
        return ev.combine(w, cols, G.Slots(rows, m))
    first = torch.cumsum(count, 0) - count
    rank = torch.arange(rows.shape[0], device=rows.device) - first[rows]
    while True:
        half = (count + 1) // 2
        base = torch.cumsum(half, 0) - half
        ids = base[rows] + rank // 2
        cols = ev.combine(w, cols, G.Slots(ids, int(half.sum())))
        count = half
        rows = torch.repeat_interleave(torch.arange(m, device=rows.device), count)
        if int(count.max()) <= 1:
            return ev.combine(w, cols, G.Slots(rows, m))
        first = torch.cumsum(count, 0) - count
        rank = torch.arange(rows.shape[0], device=rows.device) - first[rows]


def _covering(levels, pieces):
    """(row, first leaf, state columns) of every node covering the rows'
    [lo, hi) pieces: the bottom-up walk, one level at a time for all rows."""
    rows, starts, taken = [], [], []
    for lo, hi in pieces:
        left, right = lo.clone(), hi.clone()
        for k in range(len(levels)):
            take = (left < right) & (left % 2 == 1)
            idx = take.nonzero().squeeze(1)
            rows.append(idx)
            starts.append(left[idx] << k)
            taken.append((k, left[idx]))
            left = left + take.long()
            take = (left < right) & (right % 2 == 1)
            right = right - take.long()
            idx = take.nonzero().squeeze(1)
            rows.append(idx)
            starts.append(right[idx] << k)
            taken.append((k, right[idx]))
            left, right = left // 2, right // 2
    n_states = len(levels[0])
    states = [concat_columns([levels[k][j].take(node) for k, node in taken]) for j in range(n_states)]
    return torch.cat(rows), torch.cat(starts), states
