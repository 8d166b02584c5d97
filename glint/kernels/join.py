"""Equi-join matching on int64 keys: sort the build side, binary-search each
probe key, expand the match ranges into (probe row, build row) pairs.
One host synchronisation: the number of pairs.

>>> import torch
>>> p, b = match_pairs(torch.tensor([1, 2, 2]), None, torch.tensor([2, 3, 2, 1]), None)
>>> sorted(zip(p.tolist(), b.tolist()))
[(0, 3), (1, 0), (1, 2), (2, 0), (2, 2)]
"""
from __future__ import annotations

import torch


class SortedBuild:
    """A build side prepared for probing: keys sorted, with their row ids."""
    __slots__ = ("keys", "rows")

    def __init__(self, key: torch.Tensor, valid: torch.Tensor | None):
        rows = torch.arange(key.shape[0], device=key.device)
        if valid is not None:
            rows = rows[valid]
            key = key[valid]
        order = torch.argsort(key, stable=True)
        self.keys = key[order]
        self.rows = rows[order]


def match_counts(build: SortedBuild, probe_key: torch.Tensor, probe_valid: torch.Tensor | None):
    """(start position in the sorted build, number of matches) per probe row."""
    lo = torch.searchsorted(build.keys, probe_key, right=False)
    hi = torch.searchsorted(build.keys, probe_key, right=True)
    counts = hi - lo
    if probe_valid is not None:
        counts = torch.where(probe_valid, counts, torch.zeros_like(counts))
    return lo, counts


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
    b = SortedBuild(build_key, build_valid)
    lo, counts = match_counts(b, probe_key, probe_valid)
    return expand_matches(b, lo, counts)
