"""UNION [ALL], INTERSECT [ALL], EXCEPT [ALL] over streams.

UNION ALL streams both inputs through, one after the other. The others need
whole inputs: rows compare with NULL equal to NULL (set semantics), and the
ALL variants of INTERSECT / EXCEPT number the duplicates of each row (1st,
2nd, ...) and then match (row, occurrence) pairs, which gives min(m, n) and
max(m - n, 0) copies. Inputs that do not fit the operator's reservation are
hash-partitioned on all their columns (spilling) and each pair of partitions
is processed on its own: equal rows always share a partition.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar.column import Batch, Column, concat_batches, rechunk, slice_batch
from glint.exec.base import PhysicalNode
from glint.exec.hashing import hash_columns, partition_of
from glint.exec.keys import encode_keys
from glint.kernels import groupby as G
from glint.kernels.join import build_side, match_counts
from glint.plan.expr import Field
from glint.runtime.spill import PartitionedBatches

PARTITIONS = 16


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

    @property
    def breaker(self):
        return not (self.kind == "union" and self.all)

    def describe(self):
        return f"{self.kind.upper()}{' ALL' if self.all else ''}"

    def _rename(self, b: Batch, fields) -> Batch:
        return Batch({f.id: b[g.id] for f, g in zip(self.fields, fields)}, b.num_rows, b.device)

    def stream(self, ctx, left, right):
        if self.kind == "union" and self.all:
            for b in left:
                yield self._rename(b, self.left_fields)
            for b in right:
                yield self._rename(b, self.right_fields)
            return
        res = ctx.memory.reservation(f"{self.describe()}")
        sides = [PartitionedBatches(1, ctx.spill, res), PartitionedBatches(1, ctx.spill, res)]
        firsts = [None, None]
        try:
            for i, (inp, fields) in enumerate(((left, self.left_fields), (right, self.right_fields))):
                for b in inp:
                    b = self._rename(b, fields)
                    if firsts[i] is None:
                        firsts[i] = slice_batch(b, 0, 0)
                    if b.num_rows:
                        sides[i].add_part(0, b)
            if not sides[0].spilled and not sides[1].spilled:
                lb = concat_batches(sides[0].take(0) or [firsts[0]])
                rb = concat_batches(sides[1].take(0) or [firsts[1]])
                yield from rechunk([self._combine(lb, rb)], ctx.chunk_rows)
                return
            ctx.note(self, f"inputs over budget: {PARTITIONS} partitions")
            parts = [PartitionedBatches(PARTITIONS, ctx.spill, res) for _ in range(2)]
            for src, dst in zip(sides, parts):
                for b in src.drain(0):
                    dst.add(b, partition_of(hash_columns([b[f.id] for f in self.fields]), PARTITIONS))
            for p in range(PARTITIONS):
                lb = concat_batches(parts[0].take(p) or [firsts[0]])
                rb = concat_batches(parts[1].take(p) or [firsts[1]])
                yield from rechunk([self._combine(lb, rb)], ctx.chunk_rows)
            for x in parts:
                x.drop()
        finally:
            for x in sides:
                x.drop()
            res.release()
        ctx.io.spilled_bytes = ctx.spill.spilled_bytes

    def _combine(self, lb: Batch, rb: Batch) -> Batch:
        lcols = [lb[f.id] for f in self.fields]
        rcols = [rb[f.id] for f in self.fields]
        if self.kind == "union":
            cols, n = _distinct([_concat(a, b) for a, b in zip(lcols, rcols)], lb.num_rows + rb.num_rows)
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


def _concat(a: Column, b: Column) -> Column:
    from glint.columnar.column import concat_columns

    return concat_columns([a, b])


def _distinct(cols: list[Column], n: int):
    if n == 0:
        return cols, 0
    ((key, _),) = encode_keys([cols], nulls_equal=True)
    _, g, first = G.group_ids(key)
    first, _ = torch.sort(first)
    return [c.take(first) for c in cols], g


def _with_occurrence(key: torch.Tensor):
    """(key, k) where k numbers the rows sharing a key 0, 1, 2..."""
    from glint.columnar import types as T

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
