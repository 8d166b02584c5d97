"""Merging t-digests per group: APPROX_QUANTILE's mergeable state.

A group's digest is at most ``C`` centroids (a mean and a weight each, in
order of their means) plus its exact minimum and maximum. Values and
centroids are clustered by the k1 scale function of Dunning and Ertl ("The
t-digest: efficient estimates of distributions", 2019): a point whose
cumulative rank fraction is q goes to cluster floor(C / pi * asin(2q - 1) +
C / 2). Near the middle a cluster holds about pi / (2C) of the group's
values (1.6% for C = 100); towards the ends the clusters shrink
quadratically, so extreme quantiles are sharper, and a group of up to about
C / 2 values keeps every value on its own.

Building (a chunk's rows) and merging (states of chunks, partitions or
ranks) are the same step for every group at once: sort the points by group
and value, take each one's rank fraction, and sum the points of each
(group, cluster) into one centroid. A merged digest is the digest of the
union within the clusters' widths, whatever the order of the merges.

A quantile q is read at rank q * N (N the group's count) by linear
interpolation between the neighbouring centroids' centres (the cumulative
weight before a centroid plus half its own), and between the minimum (rank
0) or the maximum (rank N) and the outermost centroids. Its rank error is at
most about half the width of the cluster it falls in; the tests bound it
(tests/functions/test_approx_aggregates.py). Where many rows hold equal
values, a centroid of them has no width, and a result read between two
such centroids lies between the two values, whose rank may then be off by
up to half of one value's share of the rows.

>>> import torch
>>> x = torch.arange(1000, dtype=torch.float64)
>>> d = build(x, torch.zeros(1000, dtype=torch.int64), 1)
>>> [round(v) for v in quantile(*d, 0.5).tolist()], quantile(*d, 0.0).tolist(), quantile(*d, 1.0).tolist()
([500], [0.0], [999.0])
>>> half = [build(x[:600], torch.zeros(600, dtype=torch.int64), 1), build(x[600:], torch.zeros(400, dtype=torch.int64), 1)]
>>> m = merge(*(torch.cat(p) for p in zip(*half)), torch.zeros(2, dtype=torch.int64), 1)
>>> round(float(quantile(*m, 0.25)[0]))
250
"""

from __future__ import annotations

import math

import torch

from glint.kernels import groupby as G
from glint.kernels.sort import float_order_key, lexsort

C = 100  # centroids per group


def _cluster(q: torch.Tensor) -> torch.Tensor:
    k = torch.asin((2.0 * q - 1.0).clamp(-1.0, 1.0)) * (C / math.pi) + C / 2
    return torch.floor(k).long().clamp(0, C - 1)


def _sum(values: torch.Tensor, gid: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=values.dtype, device=values.device).index_add_(0, gid, values)


def _pack(values: torch.Tensor, weights: torch.Tensor, gid: torch.Tensor, n: int):
    """Points sorted by (group, value) with their weights, summed into each
    (group, cluster) centroid: (means (n, C), weights (n, C))."""
    dev = values.device
    if values.shape[0] == 0:
        z = torch.zeros((n, C), dtype=torch.float64, device=dev)
        return z, z.clone()
    total = _sum(weights, gid, n)
    cum = torch.cumsum(weights, 0)
    start = torch.cumsum(total, 0) - total  # the weight before each group
    before = cum - weights - start[gid]
    q = (before + weights / 2) / total[gid]
    key = gid * C + _cluster(q)
    w = torch.zeros(n * C, dtype=torch.float64, device=dev).index_add_(0, key, weights)
    share = weights / w[key]
    # a weighted mean as the sum of each point's share of it: no sum of large values overflows
    means = torch.zeros(n * C, dtype=torch.float64, device=dev).index_add_(0, key, share * values)
    return means.view(n, C), w.view(n, C)


def _sorted(values: torch.Tensor, gid: torch.Tensor) -> torch.Tensor:
    return lexsort([(gid, None, False, False), (float_order_key(values), None, False, False)])


def _extremes(values: torch.Tensor, gid: torch.Tensor, n: int):
    slots = G.Slots(gid, n)
    if values.shape[0] == 0:
        z = torch.zeros(n, dtype=torch.float64, device=values.device)
        return z, z.clone()
    return G.extreme(values, slots, False), G.extreme(values, slots, True)


def build(x: torch.Tensor, gid: torch.Tensor, n: int):
    """(means, weights, minimum, maximum) of the float64 values ``x`` (no
    NaNs) of rows in groups ``gid`` of ``n``."""
    x = x.double()
    perm = _sorted(x, gid)
    means, weights = _pack(x[perm], torch.ones_like(x), gid[perm], n)
    lo, hi = _extremes(x, gid, n)
    return means, weights, lo, hi


def merge(means, weights, lo, hi, gid: torch.Tensor, n: int):
    """The digests of several state rows per group (``gid``) merged."""
    k = means.shape[0]
    g = gid.repeat_interleave(C) if k else gid
    v, w = means.reshape(-1), weights.reshape(-1)
    keep = w > 0
    v, w, g = v[keep], w[keep], g[keep]
    perm = _sorted(v, g)
    new_means, new_weights = _pack(v[perm], w[perm], g[perm], n)
    has = weights.sum(1) > 0
    lo_m, _ = _extremes(lo[has], gid[has], n)
    _, hi_m = _extremes(hi[has], gid[has], n)
    return new_means, new_weights, lo_m, hi_m


def count(weights: torch.Tensor) -> torch.Tensor:
    return weights.sum(1)


def quantile(means, weights, lo, hi, q: float) -> torch.Tensor:
    """The q-quantile of each group's digest (float64; anything for an empty group)."""
    n = weights.shape[0]
    dev = weights.device
    if n == 0:
        return torch.zeros(0, dtype=torch.float64, device=dev)
    total = weights.sum(1)
    t = (total * q)[:, None]
    centre = torch.cumsum(weights, 1) - weights / 2
    present = weights > 0
    idx = torch.arange(C, device=dev).expand(n, C)
    left = torch.where(present & (centre <= t), idx, torch.full_like(idx, -1)).amax(1)
    right = torch.where(present & (centre >= t), idx, torch.full_like(idx, C)).amin(1)
    rows = torch.arange(n, device=dev)
    cl, ml = centre[rows, left.clamp(min=0)], means[rows, left.clamp(min=0)]
    cr, mr = centre[rows, right.clamp(max=C - 1)], means[rows, right.clamp(max=C - 1)]
    x0 = torch.where(left < 0, torch.zeros_like(cl), cl)
    y0 = torch.where(left < 0, lo, ml)
    x1 = torch.where(right >= C, total, cr)
    y1 = torch.where(right >= C, hi, mr)
    span = x1 - x0
    f = torch.where(span > 0, (t[:, 0] - x0) / span.clamp(min=1e-300), torch.zeros_like(span))
    out = torch.where(f <= 0, y0, torch.where(f >= 1, y1, y0 + (y1 - y0) * f))
    out = torch.where(left == right, ml, out)
    return torch.minimum(torch.maximum(out, lo), hi)
