"""Equi-join matching on int64 keys: sort the build side, binary-search each
probe key, expand the match ranges into (probe row, build row) pairs.
One host synchronisation: the number of pairs.

>>> import torch
>>> p, b = match_pairs(torch.tensor([1, 2, 2]), None, torch.tensor([2, 3, 2, 1]), None)
>>> sorted(zip(p.tolist(), b.tolist()))   # (probe row, build row)
[(0, 1), (0, 2), (2, 1), (2, 2), (3, 0)]
"""

from __future__ import annotations

import torch

DIRECT_LIMIT = 1 << 26


class SortedBuild:
    """A build side prepared for probing: keys sorted, with their row ids.
    Probes binary-search the sorted keys."""

    __slots__ = ("keys", "rows")

    def __init__(self, key: torch.Tensor, valid: torch.Tensor | None):
        rows = torch.arange(key.shape[0], device=key.device)
        if valid is not None:
            rows = rows[valid]
            key = key[valid]
        order = torch.argsort(key, stable=True)
        self.keys = key[order]
        self.rows = rows[order]

    def match(self, probe_key, probe_valid):
        lo = torch.searchsorted(self.keys, probe_key, right=False)
        hi = torch.searchsorted(self.keys, probe_key, right=True)
        return lo, _mask_counts(hi - lo, probe_valid)


class DirectBuild:
    """A build side over a dense key range: per key value, where its rows
    start and how many there are, so a probe is two gathers. Row ids are
    placed by a counting sort when keys are unique (the common primary-key case)."""

    __slots__ = ("lo", "span", "starts", "counts", "rows")

    def __init__(self, key, rows, lo, span):
        dev = key.device
        k = key - lo
        counts = torch.zeros(span, dtype=torch.int64, device=dev)
        counts.scatter_add_(0, k, torch.ones_like(k))
        self.starts = torch.cumsum(counts, 0) - counts
        self.counts = counts
        self.lo, self.span = lo, span
        if int(counts.max()) <= 1:
            placed = torch.empty_like(rows)
            placed[self.starts[k]] = rows
            self.rows = placed
        else:
            self.rows = rows[torch.argsort(k, stable=True)]

    def match(self, probe_key, probe_valid):
        idx = probe_key - self.lo
        inside = (idx >= 0) & (idx < self.span)
        idx = idx.clamp(0, self.span - 1)
        counts = torch.where(inside, self.counts[idx], torch.zeros_like(idx))
        return self.starts[idx], _mask_counts(counts, probe_valid)


def _mask_counts(counts, valid):
    return counts if valid is None else torch.where(valid, counts, torch.zeros_like(counts))


def build_side(key: torch.Tensor, valid: torch.Tensor | None):
    """The faster build structure for these keys: direct addressing when the
    key range is at most a few times the number of rows, else sorted keys."""
    rows = torch.arange(key.shape[0], device=key.device)
    if valid is not None:
        rows = rows[valid]
        key = key[valid]
    if key.shape[0] == 0:
        return SortedBuild(key, None)
    lo, hi = torch.stack([key.min(), key.max()]).tolist()
    span = hi - lo + 1
    if span <= max(4 * key.shape[0], 1 << 22) and span <= DIRECT_LIMIT:
        return DirectBuild(key, rows, lo, span)
    b = SortedBuild(key, None)
    b.rows = rows[b.rows]
    return b


def match_counts(build, probe_key: torch.Tensor, probe_valid: torch.Tensor | None):
    """(start position in the build's row order, number of matches) per probe row."""
    return build.match(probe_key, probe_valid)


def expand_matches(build: SortedBuild, lo: torch.Tensor, counts: torch.Tensor):
    """All (probe row, build row) pairs from per-probe-row match ranges."""
    total = int(counts.sum())
    n = counts.shape[0]
    dev = counts.device
    probe_idx = torch.repeat_interleave(torch.arange(n, device=dev), counts, output_size=total)
    if total == 0:
        return probe_idx, probe_idx.clone()
    starts = torch.cumsum(counts, 0) - counts
    within = torch.arange(total, device=dev) - starts[probe_idx]
    build_idx = build.rows[lo[probe_idx] + within]
    return probe_idx, build_idx


def match_pairs(build_key, build_valid, probe_key, probe_valid):
    b = build_side(build_key, build_valid)
    lo, counts = match_counts(b, probe_key, probe_valid)
    return expand_matches(b, lo, counts)
