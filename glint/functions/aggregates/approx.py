"""APPROX_COUNT_DISTINCT and APPROX_QUANTILE: sketches that combine from
states, so they stream, spill and run on many ranks like SUM does.

- APPROX_COUNT_DISTINCT(x): a HyperLogLog of 2**11 one-byte registers per
  group (glint.kernels.hll): relative standard error 2.3%; counts up to a
  few dozen are nearly always exact. Values hash by content (equal strings
  in any dictionary alike, 0.0 and -0.0 alike, every NaN alike).
- APPROX_QUANTILE(x, q): a merging t-digest of 100 centroids per group
  (glint.kernels.tdigest), read at rank q * n: the result's rank is within
  0.5% of n of q * n (typically within 0.01%); q = 0 and q = 1 give the exact
  minimum and maximum. NaNs are skipped. Integers, DATEs and TIMESTAMPs are
  interpolated in doubles and rounded half to even, as DuckDB casts the
  digest's double back.

A state column holding a sketch is two-dimensional: one row per group, its
registers or centroids as int64 words (the bits of uint8 registers or of
float64 means and weights), so that it concatenates, spills and crosses
ranks like any int64 column.

>>> import torch, pyarrow as pa
>>> from glint.kernels.groupby import Slots
>>> from glint.plan.expr import AggCall
>>> x = Column.from_arrow(pa.array(["a", "b", "a", None, "c"]))
>>> s = Slots(torch.tensor([0, 0, 0, 0, 1]), 2)
>>> agg = AggCall("approx_count_distinct", (), T.BIGINT)
>>> hll_final(agg, hll_states(agg, x, s)).to_arrow().to_pylist()
[2, 1]
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.kernels import hll as H
from glint.kernels import tdigest as D
from glint.kernels import wide as W
from glint.kernels.strings.columns import hash64

_NAN_BITS = 0x7FF8000000000000


def value_hash(x: Column) -> torch.Tensor:
    """A well-mixed int64 per row that depends on the value only."""
    d = x.data
    if x.dtype.is_string:
        bits = hash64(x)
    elif d.dim() == 2:  # wide [hi, lo]: as the int64 it is when it fits one
        hi, lo = d[:, 0], d[:, 1]
        fits = (hi >= -(1 << 31)) & (hi < (1 << 31))
        bits = torch.where(fits, (hi << 32) | lo, H.mix64(hi) ^ lo)
    elif d.is_floating_point():
        d = d.double() + 0.0  # -0.0 -> 0.0
        raw = d.view(torch.int64)
        bits = torch.where(torch.isnan(d), torch.full_like(raw, _NAN_BITS), raw)
    else:
        bits = d.long()
    return H.mix64(bits)


# ------------------------------------------------------------------ APPROX_COUNT_DISTINCT
def _registers(col: Column) -> torch.Tensor:
    return col.data.contiguous().view(torch.uint8)


def _register_column(regs: torch.Tensor) -> Column:
    return Column(T.BIGINT, regs.contiguous().view(torch.int64))


def hll_states(agg, x: Column, slots) -> list[Column]:
    valid = x.validity()
    rows = valid.nonzero().squeeze(1)
    h = value_hash(x.take(rows)) if rows.numel() else rows
    return [_register_column(H.registers(h, slots.gid[rows], slots.n))]


def hll_combine(agg, cols: list[Column], slots) -> list[Column]:
    return [_register_column(H.merge(_registers(cols[0]), slots.gid, slots.n))]


def hll_final(agg, cols: list[Column]) -> Column:
    return Column(T.BIGINT, torch.round(H.estimate(_registers(cols[0]))).long())


# ------------------------------------------------------------------ APPROX_QUANTILE
def _as_words(t: torch.Tensor) -> Column:
    return Column(T.BIGINT, t.contiguous().view(torch.int64))


def _digest(cols: list[Column]):
    means, weights, lo, hi = cols
    return (
        means.data.contiguous().view(torch.float64),
        weights.data.contiguous().view(torch.float64),
        lo.data,
        hi.data,
    )


def _digest_columns(means, weights, lo, hi) -> list[Column]:
    return [_as_words(means), _as_words(weights), Column(T.DOUBLE, lo), Column(T.DOUBLE, hi)]


def digest_states(agg, x: Column, slots) -> list[Column]:
    values = W.to_double(x.data) if x.is_wide else x.data.double()
    keep = x.validity() & ~torch.isnan(values)
    return _digest_columns(*D.build(values[keep], slots.gid[keep], slots.n))


def digest_combine(agg, cols: list[Column], slots) -> list[Column]:
    return _digest_columns(*D.merge(*_digest(cols), slots.gid, slots.n))


def digest_final(agg, cols: list[Column]) -> Column:
    means, weights, lo, hi = _digest(cols)
    has = D.count(weights) > 0
    v = D.quantile(means, weights, lo, hi, agg.params[0].value)
    t = agg.type
    if t.kind == "DOUBLE":
        return Column(t, torch.where(has, v, torch.zeros_like(v)), has)
    r = torch.round(torch.where(has, v, torch.zeros_like(v)))  # half to even
    if t.kind == "HUGEINT" and bool((r.abs() >= 2.0**62).any()):
        return Column(t, W.from_double(r), has)
    if t.kind in ("INTEGER", "DATE"):
        r = r.clamp(-(2.0**31), 2.0**31 - 1)
        return Column(t, r.to(torch.int32), has)
    return Column(t, r.clamp(-(2.0**63), 2.0**63 - 1024).long(), has)
