"""MEDIAN, QUANTILE_CONT and QUANTILE_DISC of grouped rows: each group's
values sorted (once for all groups), then the row at the quantile's position
(glint.kernels.quantiles) taken or interpolated, with DuckDB 1.4's types and
arithmetic:

- discrete: the value itself (any orderable type: numbers, DATE, VARCHAR by
  byte order, BOOLEAN);
- continuous over DOUBLE (integers are cast first): lo * (1 - f) + hi * f;
- continuous over TIMESTAMP (a DATE is cast first): llround(lo * (1 - f) + hi * f)
  in doubles;
- continuous over DECIMAL(p <= 18): lo + trunc(double(hi - lo) * f), in the
  DECIMAL's own scale (so 0.1 and 0.2 interpolate to 0.1, -0.1 and -0.2 to -0.2);
  over DECIMAL(p > 18) (a HUGEINT in DuckDB): trunc(lo * (1 - f) + hi * f) in
  doubles.

NaN sorts above every number (as DuckDB orders doubles).

>>> import torch, pyarrow as pa
>>> from decimal import Decimal
>>> from glint.kernels.groupby import Slots
>>> from glint.plan.aggregates import Quantile
>>> s = Slots(torch.tensor([0, 0, 1, 1, 0]), 2)
>>> x = Column.from_arrow(pa.array([Decimal("0.1"), Decimal("0.2"), Decimal("-0.1"), Decimal("-0.2"), None], pa.decimal128(4, 1)))
>>> quantile(x, s, Quantile(0.5, 1, 2, False), True, x.dtype).to_arrow().to_pylist()
[Decimal('0.1'), Decimal('-0.2')]
>>> f = Column.from_arrow(pa.array([1.0, 4.0, float("nan"), 2.0, 3.0]))
>>> quantile(f, s, Quantile(0.5, 1, 2, False), True, T.DOUBLE).to_arrow().to_pylist()
[3.0, nan]
>>> quantile(f, s, Quantile(0.5, 1, 2, True), False, T.DOUBLE).to_arrow().to_pylist()
[3.0, nan]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.functions.strings import core as strings
from glint.kernels import groupby as G
from glint.kernels import wide as W
from glint.kernels.quantiles import continuous_position, discrete_position, group_starts, sort_in_groups


def quantile(x: Column, slots: G.Slots, q, continuous: bool, out_type: T.DataType) -> Column:
    """The quantile ``q`` (a glint.plan.aggregates.Quantile) of the non-NULL
    values of ``x`` in each group of ``slots``; NULL for groups without any."""
    dev, n = x.device, slots.n
    counts = G.count(slots, x.valid)
    rows = x.validity().nonzero().squeeze(1)
    m = rows.shape[0]
    if m == 0 or n == 0:
        return Column.nulls(out_type, n, dev)
    xv = x.take(rows)
    if xv.is_wide:  # wide [hi, lo] rows: ordered by their rank
        key = torch.unique(xv.data, dim=0, return_inverse=True)[1]
    else:
        key = strings.order_ranks(xv) if xv.dtype.is_string else xv.data
    perm = sort_in_groups(slots.gid[rows], key, q.descending)
    starts = group_starts(counts)
    has = counts > 0

    def at(pos):
        return xv.take(perm[(starts + pos).clamp(max=m - 1)])

    if not continuous:
        v = at(discrete_position(counts, q.value, q.num, q.den))
        out = Column(out_type, v.data, has, v.dictionary)
        return out.compact() if out_type.is_string else out
    lo_pos, hi_pos, frac = continuous_position(counts, q.value)
    lo, hi = at(lo_pos).data, at(hi_pos).data
    same = lo_pos == hi_pos
    if lo.dim() == 2 or out_type.is_decimal and out_type.precision > 18:
        # a DECIMAL of more than 18 digits is a HUGEINT underneath in DuckDB, which interpolates
        # those in doubles, lo * (1 - f) + hi * f, truncated back, so digits past a double's are
        # lost (MEDIAN of DECIMAL(21,1) values near 10**15: fuzz seed 620 q775)
        x = torch.trunc(W.to_double(lo) * (1.0 - frac) + W.to_double(hi) * frac)
        if lo.dim() == 2 or bool((x.abs() >= 2.0**62).any()):
            return Column(out_type, torch.where(same[:, None], W.to_wide(lo), W.from_double(x)), has)
        return Column(out_type, torch.where(same, lo, x.long()), has)
    if out_type.is_decimal:
        step = torch.trunc((hi - lo).double() * frac).long()
        return Column(out_type, torch.where(same, lo, lo + step), has)
    # DuckDB interpolates as lo * (1 - f) + hi * f (so two infinities give an infinity, where
    # lo + (hi - lo) * f gives NaN; finite values round as DuckDB's do)
    x = lo.double() * (1.0 - frac) + hi.double() * frac
    if out_type.kind == "TIMESTAMP":
        # llround of that in doubles, so microseconds are lost far from 1970 (half away from
        # zero; torch.round would round half to even)
        r = torch.where(x >= 0, torch.floor(x + 0.5), torch.ceil(x - 0.5)).long()
        return Column(out_type, torch.where(same, lo, r), has)
    return Column(out_type, torch.where(same, lo.double(), x), has)
