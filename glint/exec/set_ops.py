"""UNION [ALL], INTERSECT [ALL], EXCEPT [ALL].

Rows compare with NULL equal to NULL (set semantics). The ALL variants of
INTERSECT / EXCEPT number the duplicates of each row (1st, 2nd, ...) and then
match (row, occurrence) pairs, which gives min(m, n) and max(m - n, 0) copies.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..kernels import groupby as G
from ..kernels.join import build_side, match_counts
from ..kernels.keys import encode_keys
from ..plan.expr import Field
from ..storage.column import Batch, Column, concat_columns
from .base import PhysicalNode


@dataclass(frozen=True, slots=True, eq=False)
class SetOpExec(PhysicalNode):
    left: PhysicalNode
    right: PhysicalNode
    kind: str
    all: bool
    fields: tuple[Field, ...]
    left_fields: tuple[Field, ...]
    right_fields: tuple[Field, ...]
    est_rows: float = 0.0

    def describe(self):
        return f"{self.kind.upper()}{' ALL' if self.all else ''}"

    def execute(self, ctx, lb: Batch, rb: Batch) -> Batch:
        lcols = [lb[f.id] for f in self.left_fields]
        rcols = [rb[f.id] for f in self.right_fields]
        if self.kind == "union":
            cols = [concat_columns([a, b]) for a, b in zip(lcols, rcols)]
            n = lb.num_rows + rb.num_rows
            if not self.all:
                cols, n = _distinct(cols, n)
            return Batch({f.id: c for f, c in zip(self.fields, cols)}, n, lb.device)
        if not self.all:
            lcols, nl = _distinct(lcols, lb.num_rows)
        else:
            nl = lb.num_rows
        if nl == 0:
            return Batch({f.id: c for f, c in zip(self.fields, lcols)}, nl, lb.device)
        if rb.num_rows == 0:
            hit = torch.zeros(nl, dtype=torch.bool, device=lb.device)
        else:
            (lk, _), (rk, _) = encode_keys([lcols, rcols], nulls_equal=True)
            if self.all:
                lk2, rk2 = _with_occurrence(lk), _with_occurrence(rk)
                (lk, _), (rk, _) = encode_keys([[lk2[0], lk2[1]], [rk2[0], rk2[1]]])
            b = build_side(rk, None)
            _, counts = match_counts(b, lk, None)
            hit = counts > 0
        keep = hit if self.kind == "intersect" else ~hit
        idx = keep.nonzero().squeeze(1)
        return Batch({f.id: c.take(idx) for f, c in zip(self.fields, lcols)}, int(idx.shape[0]), lb.device)


def _distinct(cols: list[Column], n: int):
    if n == 0:
        return cols, 0
    ((key, _),) = encode_keys([cols], nulls_equal=True)
    _, g, first = G.group_ids(key)
    first, _ = torch.sort(first)
    return [c.take(first) for c in cols], g


def _with_occurrence(key: torch.Tensor):
    """(key, k) where k numbers the rows sharing a key 0, 1, 2..."""
    from .. import types as T
    order = torch.argsort(key, stable=True)
    sk = key[order]
    n = key.shape[0]
    pos = torch.arange(n, device=key.device)
    starts = torch.ones(n, dtype=torch.bool, device=key.device)
    if n > 1:
        starts[1:] = sk[1:] != sk[:-1]
    group_start = torch.cummax(torch.where(starts, pos, torch.zeros_like(pos)), 0).values
    occ = torch.empty_like(pos)
    occ[order] = pos - group_start
    return Column(T.BIGINT, key), Column(T.BIGINT, occ)
