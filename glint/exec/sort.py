"""ORDER BY (in memory, or an external sort), and ORDER BY ... LIMIT as a
streaming top-k.

The sort holds its input in batches that spill when its reservation cannot
grow. When everything fits it sorts once. Otherwise (external sort) each held
batch is a sorted run; a sample of rows from every run gives P-1 splitter rows,
each run is cut at the splitters (the cut points found by sorting the run's
keys together with the splitters, so any mix of key types, strings and NULL
placement included, compares exactly as the final order does), and each of the
P ranges is gathered from all runs, sorted and emitted in turn: a range
partition merge of sorted runs, as Vortex merges partitions found by binary
search.

Top-k keeps only the best k rows seen so far: each chunk is merged into them
and cut back to k, so memory stays bounded whatever the input size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, concat_batches, rechunk
from glint.exec.base import PhysicalNode
from glint.functions.evaluate import evaluate
from glint.functions.strings import core as strings
from glint.kernels.sort import float_order_key, lexsort
from glint.plan.logical import SortKey
from glint.runtime.spill import PartitionedBatches


def order_values(c) -> torch.Tensor:
    """What to sort a column's rows by: its data, or for strings their byte-order ranks."""
    return strings.order_ranks(c) if c.dtype.is_string else c.data


SORT_OVERHEAD = 3  # working memory of a sort: about this many times its input
SAMPLE_PER_RUN = 1024


def sort_order(keys: tuple[SortKey, ...], batch) -> torch.Tensor:
    spec = []
    for k in keys:
        c = evaluate(k.expr, batch)
        spec.append((order_values(c), c.valid, k.descending, k.nulls_first))
    return lexsort(spec)


@dataclass(frozen=True, slots=True, eq=False)
class SortExec(PhysicalNode):
    child: PhysicalNode
    keys: tuple[SortKey, ...]
    est_rows: float = 0.0
    breaker = True

    def describe(self):
        return "Sort " + ", ".join(map(repr, self.keys))

    def stream(self, ctx, inp):
        res = ctx.memory.reservation(f"Sort {self.describe()[:60]}")
        held = PartitionedBatches(1, ctx.spill, res)
        try:
            first = held.hold(inp)
            if not held.held[0]:
                yield first
                return
            if not held.spilled and res.grow(SORT_OVERHEAD * held.nbytes()):
                batch = concat_batches(held.take(0))
                if batch.num_rows > 1:
                    batch = batch.take(sort_order(self.keys, batch))
                yield from rechunk([batch], ctx.chunk_rows)
                return
            yield from self._external(ctx, held, res)
        finally:
            held.drop()
            res.release()

    def _external(self, ctx, held: PartitionedBatches, res):
        total = held.nbytes()
        budget = max(1, ctx.memory.limit - ctx.memory.headroom)
        parts = 2
        while parts < 4096 and SORT_OVERHEAD * total / parts > budget / 2:
            parts *= 2
        ctx.note(self, f"input {total:,} bytes over budget: external sort, {len(held.held[0])} runs, {parts} ranges")
        # sorted runs (back in the holder, spilling as they go) and a sample of each
        runs = PartitionedBatches(1, ctx.spill, res)
        samples = []
        for b in held.drain(0):
            b = b.take(sort_order(self.keys, b))
            step = max(1, b.num_rows // SAMPLE_PER_RUN)
            samples.append(b.take(torch.arange(0, b.num_rows, step, device=b.device)))
            runs.add_part(0, b)
        sample = concat_batches(samples)
        sample = sample.take(sort_order(self.keys, sample))
        cut = torch.linspace(0, sample.num_rows, parts + 1, device=sample.device)[1:-1].long()
        cut = cut.clamp(max=max(sample.num_rows - 1, 0)).unique()
        splitters = sample.take(cut)
        ranges = PartitionedBatches(splitters.num_rows + 1, ctx.spill, res)
        for run in runs.drain(0):
            ranges.add(run, self._range_of(run, splitters))
        for p in range(ranges.parts):
            if not ranges.held[p]:
                continue
            batch = concat_batches(ranges.take(p))
            if batch.num_rows > 1:
                batch = batch.take(sort_order(self.keys, batch))
            yield from rechunk([batch], ctx.chunk_rows)
        ctx.io.spilled_bytes = ctx.spill.spilled_bytes

    def _range_of(self, run: Batch, splitters: Batch) -> torch.Tensor:
        """For each row, how many splitters sort before it (ties go left), by
        ordering the rows and the splitters together."""
        both = concat_batches([splitters, _with_columns(run, splitters)])
        order = sort_order(self.keys, both)
        is_split = order < splitters.num_rows
        before = torch.cumsum(is_split.long(), 0)  # splitters at or before each position
        rng = torch.empty(run.num_rows, dtype=torch.int64, device=run.device)
        rows = ~is_split
        rng[order[rows] - splitters.num_rows] = before[rows]
        return rng


def _with_columns(b: Batch, like: Batch) -> Batch:
    return Batch({k: b.columns[k] for k in like.columns}, b.num_rows, b.device)


@dataclass(frozen=True, slots=True, eq=False)
class TopKExec(PhysicalNode):
    """The first `limit` rows (after `offset`) in key order, without sorting
    every row: each chunk is merged with the best rows so far and cut back
    (torch.topk picks candidates when one numeric key decides)."""

    child: PhysicalNode
    keys: tuple[SortKey, ...]
    limit: int
    offset: int = 0
    est_rows: float = 0.0
    breaker = True

    def describe(self):
        return f"TopK {self.limit} OFFSET {self.offset} BY " + ", ".join(map(repr, self.keys))

    def stream(self, ctx, inp):
        k = self.limit + self.offset
        best = None
        for b in inp:
            best = b if best is None else concat_batches([best, b]) if b.num_rows else best
            if best.num_rows > k:
                best = self._top(best, k)
        order = sort_order(self.keys, best) if best.num_rows > 1 else torch.arange(best.num_rows, device=best.device)
        yield best.take(order[self.offset : self.offset + self.limit])

    def _top(self, batch: Batch, k: int) -> Batch:
        n = batch.num_rows
        if len(self.keys) == 1 and k < n // 4:
            key = self.keys[0]
            c = evaluate(key.expr, batch)
            if c.valid is None and c.data.dim() == 1 and c.data.dtype != torch.bool and not c.dtype.is_string:
                data = float_order_key(c.data) if c.data.is_floating_point() else c.data
                # candidates: every row tied with the k-th value stays, so ties are cut by the full order
                kth = torch.topk(data, k, largest=key.descending, sorted=False).values
                bound = kth.min() if key.descending else kth.max()
                keep = (data >= bound) if key.descending else (data <= bound)
                batch = batch.take(keep.nonzero().squeeze(1))
                if batch.num_rows <= k:
                    return batch
        order = sort_order(self.keys, batch)
        return batch.take(order[:k])


__all__ = ["SortExec", "TopKExec", "sort_order", "T"]
