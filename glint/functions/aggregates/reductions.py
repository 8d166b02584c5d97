"""PRODUCT, BIT_AND / BIT_OR / BIT_XOR and COUNT_IF: reductions whose states
are one value per group (glint.kernels.group_pick), and MODE and ENTROPY,
which count each group's distinct values at once.

- PRODUCT(x): [product as DOUBLE, count of values]; NULL without values;
- BIT_AND / BIT_OR / BIT_XOR(x) over INTEGER, BIGINT and HUGEINT: [the
  reduction, NULL without values], in the input's type (a HUGEINT beyond 64
  bits limb by limb: its [hi, lo] form is two's complement over 96 bits);
- COUNT_IF(b): [count of TRUE values] (0 without any);
- MODE(x): the most frequent value; among equally frequent ones the one that
  comes first in input order, or in the ORDER BY's order inside the call;
- ENTROPY(x): -sum p log2 p over the frequencies p of the distinct values
  (0 without values).

>>> import torch, pyarrow as pa
>>> from glint.kernels.groupby import Slots
>>> from glint.plan.expr import AggCall
>>> x = Column.from_arrow(pa.array([3, 2, 2, 3, 1, None]))
>>> s = Slots(torch.tensor([0, 0, 0, 0, 0, 1]), 2)
>>> mode(AggCall("mode", (), T.BIGINT), x, s, []).to_arrow().to_pylist()
[3, None]
>>> entropy(AggCall("entropy", (), T.DOUBLE), x, s, []).to_arrow().to_pylist()
[1.5219280948873621, 0.0]
>>> bit = AggCall("bit_xor", (), T.BIGINT)
>>> bits_final(bit, bits_states(bit, x, s)).to_arrow().to_pylist()
[1, None]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.functions.aggregates.picks import order_key
from glint.kernels import group_pick as P
from glint.kernels import groupby as G
from glint.kernels.sort import lexsort


# ------------------------------------------------------------------ PRODUCT
def product_states(agg, x: Column, slots) -> list[Column]:
    valid = x.validity()
    values = torch.where(valid, x.data.double(), torch.ones_like(x.data, dtype=torch.float64))
    return [Column(T.DOUBLE, P.product(values, slots)), Column(T.BIGINT, G.count(slots, x.valid))]


def product_combine(agg, cols: list[Column], slots) -> list[Column]:
    p, c = cols
    return [Column(T.DOUBLE, P.product(p.data, slots)), Column(T.BIGINT, slots.fold(slots.scatter_add(c.data), "sum"))]


def product_final(agg, cols: list[Column]) -> Column:
    p, c = cols
    has = c.data > 0
    return Column(T.DOUBLE, torch.where(has, p.data, torch.zeros_like(p.data)), has)


# ------------------------------------------------------------------ BIT_AND, BIT_OR, BIT_XOR
def bits_states(agg, x: Column, slots) -> list[Column]:
    op = agg.fn[4:]
    valid = x.validity()
    s = slots if x.valid is None else slots.subset(valid)
    data = x.data if x.valid is None else x.data[valid]
    if data.dim() == 2:
        out = torch.stack([P.bitwise(data[:, 0], s, op), P.bitwise(data[:, 1], s, op)], dim=1)
    else:
        out = P.bitwise(data.long(), s, op).to(x.data.dtype)
    return [Column(x.dtype, out, G.count(slots, x.valid) > 0)]


def bits_final(agg, cols: list[Column]) -> Column:
    x = cols[0]
    return Column(agg.type, x.data, x.valid)


# ------------------------------------------------------------------ COUNT_IF
def count_if_states(agg, x: Column, slots) -> list[Column]:
    return [Column(T.BIGINT, G.count(slots, x.validity() & x.data.bool()))]


# ------------------------------------------------------------------ MODE, ENTROPY
def _value_counts(x: Column, slots, order):
    """For each distinct (group, value) of the non-NULL rows: (its group, its
    count, the position of its first row in the order, that row)."""
    rows = x.validity().nonzero().squeeze(1)
    gid = slots.gid[rows]
    key = order_key(x.take(rows)) if rows.numel() else rows
    position = torch.arange(rows.shape[0], device=rows.device)
    if order:  # positions in the ORDER BY's order (ties keep input order)
        keys = [(order_key(c.take(rows)), None if c.valid is None else c.valid[rows], d, nf) for c, d, nf in order]
        perm = lexsort(keys) if rows.numel() else rows
        position = torch.empty_like(perm).index_copy_(0, perm, position)
    if rows.numel() == 0:
        return gid, rows, rows, rows
    perm = lexsort([(gid, None, False, False), (key, None, False, False)])
    g, k = gid[perm], key[perm]
    start = torch.ones_like(g, dtype=torch.bool)
    start[1:] = (g[1:] != g[:-1]) | (k[1:] != k[:-1])
    pair = torch.cumsum(start.long(), 0) - 1
    n_pairs = int(pair[-1]) + 1
    pairs = G.Slots(pair, n_pairs)
    counts = G.count(pairs)
    first_pos = G.extreme(position[perm], pairs, False)
    first_row = rows[perm][P.best_rows(-position[perm], pairs, True)]
    return g[start], counts, first_pos, first_row


def mode(agg, x: Column, slots, order) -> Column:
    pair_gid, counts, first_pos, first_row = _value_counts(x, slots, order)
    n = slots.n
    if pair_gid.numel() == 0:
        return Column.nulls(agg.type, n, x.device)
    groups = G.Slots(pair_gid, n)
    # the largest count, then the earliest first row: one int64 key
    score = counts * (int(first_pos.max()) + 2) - first_pos
    best = P.best_rows(score, groups, True)
    has = best >= 0
    v = x.take(first_row[best.clamp(min=0)])
    out = Column(agg.type, v.data, has, v.dictionary)
    return out.compact() if agg.type.is_string else out


def entropy(agg, x: Column, slots, order) -> Column:
    pair_gid, counts, _, _ = _value_counts(x, slots, ())
    n = slots.n
    if pair_gid.numel() == 0:
        return Column(T.DOUBLE, torch.zeros(n, dtype=torch.float64, device=x.device))
    groups = G.Slots(pair_gid, n)
    total = G.float_sum(counts.double(), groups)
    p = counts.double() / total[pair_gid]
    return Column(T.DOUBLE, G.float_sum(-p * torch.log2(p), groups))
