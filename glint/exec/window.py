"""Window functions: every input row, with the value of each window call.

A pipeline breaker: the input is held under the operator's memory
reservation, then for each distinct (PARTITION BY, ORDER BY) the rows are
sorted once by partition keys and order keys (kernels.sort.lexsort, as ORDER
BY sorts). On the sorted rows, partition and peer boundaries are found by
comparing neighbours; each call is then a vectorised step over all rows and
partitions at once (glint.kernels.window): positions against segment starts
for the ranking functions, clamped frame bounds [start, end) per row, prefix
sums and segment trees for the framed aggregates, gathers for LAG / LEAD /
FIRST_VALUE / LAST_VALUE. Results go back to the input order through the
inverse permutation, so calls with different specs line up.

When the input (with the sort's working memory) does not fit the memory
budget, it is hash-partitioned by the PARTITION BY expressions all calls
share, spilling as it goes, and each part is computed alone; without such a
shared expression it stops with OutOfMemory naming the operator.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar.column import Batch, Column, concat_batches, rechunk
from glint.errors import OutOfMemory
from glint.exec.base import PhysicalNode
from glint.exec.hashing import hash_columns, partition_of
from glint.exec.sort import order_values
from glint.functions.builtins import BUILTINS
from glint.functions.dates import timestamps
from glint.functions.evaluate import evaluate
from glint.kernels import window as K
from glint.kernels.sort import lexsort
from glint.plan.expr import Field
from glint.plan.logical import Frame, FrameBound, IntervalOffset, WindowFunc
from glint.runtime.memory import format_bytes
from glint.runtime.spill import PartitionedBatches

_FUNCS = BUILTINS.window_evaluators()  # name -> evaluate(window call, its arguments sorted, SortedRows)
WINDOW_OVERHEAD = 4  # working memory: about this many times the input (sort, keys, results)
MAX_PARTS = 4096  # fan-out of the out-of-core split
MIN_PART_ROWS = 4096  # ... and the fewest rows a part is cut to on average


@dataclass(frozen=True, slots=True, eq=False)
class WindowExec(PhysicalNode):
    child: PhysicalNode
    funcs: tuple[tuple[Field, WindowFunc], ...]
    est_rows: float = 0.0
    breaker = True

    def describe(self):
        return "Window " + ", ".join(f"{w!r} AS {f!r}" for f, w in self.funcs)

    def stream(self, ctx, inp):
        res = ctx.memory.reservation(f"Window {self.describe()[:60]}")
        held = PartitionedBatches(1, ctx.spill, res)
        try:
            first = held.hold(inp)
            size = held.nbytes()
            if not held.spilled and res.grow(WINDOW_OVERHEAD * size):
                batch = concat_batches(held.take(0)) if held.held[0] else first
                yield from rechunk([self._compute(batch)], ctx.chunk_rows)
                return
            keys = self._common_partition()
            if not keys:
                raise OutOfMemory(
                    f"out of memory in Window: its input of {format_bytes(size)} and working "
                    "memory exceed the memory budget, and its window functions share no "
                    "PARTITION BY column to split the input by"
                )
            yield from self._partitioned(ctx, held, res, keys, size)
        finally:
            held.drop()
            res.release()

    def _common_partition(self) -> list:
        """The PARTITION BY expressions every window function has."""
        common = set.intersection(*(set(w.partition) for _, w in self.funcs))
        return sorted(common, key=repr)

    def _partitioned(self, ctx, held: PartitionedBatches, res, keys, size: int):
        """Out of core: the rows hash-partitioned by PARTITION BY expressions
        every call shares (a window partition never spans two of these), each
        part computed on its own. One window partition larger than the budget
        still has to fit."""
        budget = max(1, ctx.memory.limit - ctx.memory.headroom)
        # enough parts for a part's work to take half the budget, but not parts so
        # small that the per-part steps (a sort, a few host syncs) cost more than the rows
        most = min(MAX_PARTS, max(2, held.rows() // MIN_PART_ROWS))
        parts = 2
        while parts < most and WINDOW_OVERHEAD * size / parts > budget / 2:
            parts *= 2
        ctx.note(self, f"input {size:,} bytes over budget: {parts} hash partitions")
        split = PartitionedBatches(parts, ctx.spill, res)
        try:
            for b in held.drain(0):
                split.add(b, partition_of(hash_columns([evaluate(e, b) for e in keys]), parts))
            for p in range(parts):
                if split.held[p]:
                    yield from rechunk([self._compute(concat_batches(split.take(p)))], ctx.chunk_rows)
        finally:
            split.drop()
        ctx.io.spilled_bytes = ctx.spill.spilled_bytes

    def _compute(self, batch: Batch) -> Batch:
        out = dict(batch.columns)
        specs: dict[tuple, list[tuple[Field, WindowFunc]]] = {}
        for f, w in self.funcs:
            specs.setdefault((w.partition, w.order), []).append((f, w))
        for (partition, order), members in specs.items():
            rows = SortedRows(batch, partition, order)
            for f, w in members:
                args = [evaluate(a, batch).take(rows.perm) for a in w.args]
                out[f.id] = _FUNCS[w.fn](w, args, rows).take(rows.inverse)
        return Batch(out, batch.num_rows, batch.device)


class SortedRows:
    """The rows of a batch sorted by (partition keys, order keys): the
    permutation and its inverse, and per sorted row its position and the
    bounds [start, end) of its partition and of its peer group (rows equal on
    every order key; the whole partition without ORDER BY)."""

    __slots__ = (
        "perm",
        "inverse",
        "pos",
        "part_id",
        "part_start",
        "part_end",
        "peer_start",
        "peer_end",
        "peers",
        "order",
        "first_key",
    )

    def __init__(self, batch: Batch, partition, order):
        n, dev = batch.num_rows, batch.device
        pkeys = [_key(evaluate(e, batch)) for e in partition]
        okeys = [_key(evaluate(k.expr, batch)) for k in order]
        spec = [(v, valid, False, False) for v, valid in pkeys] + [
            (v, valid, k.descending, k.nulls_first) for (v, valid), k in zip(okeys, order)
        ]
        self.pos = torch.arange(n, device=dev)
        self.perm = lexsort(spec) if spec and n > 1 else self.pos
        self.inverse = torch.empty_like(self.perm)
        self.inverse[self.perm] = self.pos

        def sorted_keys(keys):
            return [(v[self.perm], None if valid is None else valid[self.perm]) for v, valid in keys]

        parts = K.boundaries(sorted_keys(pkeys), n, dev)
        sorted_order = sorted_keys(okeys)
        self.order, self.first_key = order, sorted_order[0] if order else None
        self.peers = parts | K.boundaries(sorted_order, n, dev)
        self.part_id = torch.cumsum(parts.long(), 0) - 1
        self.part_start, self.part_end = K.segment_start(parts), K.segment_end(parts)
        self.peer_start, self.peer_end = K.segment_start(self.peers), K.segment_end(self.peers)

    def frame(self, frame: Frame) -> tuple[torch.Tensor, torch.Tensor]:
        """Each row's frame [start, end), clamped to its partition (start == end: empty)."""
        start = self._bound(frame, frame.start, True).clamp(min=self.part_start)
        start = torch.minimum(start, self.part_end)
        end = torch.minimum(torch.maximum(self._bound(frame, frame.end, False), start), self.part_end)
        return start, end

    def frame_pieces(self, frame: Frame) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """The frame as ordered, disjoint [lo, hi) pieces: the whole frame, or
        what is left around the rows EXCLUDE leaves out."""
        start, end = self.frame(frame)
        if not frame.exclude:
            return [(start, end)]

        def clip(x):
            return torch.minimum(torch.maximum(x, start), end)

        if frame.exclude == "current_row":
            return [(start, clip(self.pos)), (clip(self.pos + 1), end)]
        if frame.exclude == "group":
            return [(start, clip(self.peer_start)), (clip(self.peer_end), end)]
        # ties: the peers go, the row itself stays
        return [(start, clip(self.peer_start)), (clip(self.pos), clip(self.pos + 1)), (clip(self.peer_end), end)]

    def _bound(self, frame: Frame, b: FrameBound, is_start: bool) -> torch.Tensor:
        if b.kind == "unbounded":
            return self.part_start if is_start else self.part_end
        if b.kind == "current":
            if frame.kind != "rows":
                return self.peer_start if is_start else self.peer_end
            return self.pos if is_start else self.pos + 1
        offset = b.offset if b.kind == "following" else -b.offset
        if frame.kind == "range":
            return self._range_bound(offset, is_start)
        if frame.kind == "groups":
            return self._groups_bound(offset, is_start)
        return self.pos + (offset if is_start else offset + 1)

    def _groups_bound(self, offset: int, is_start: bool) -> torch.Tensor:
        """GROUPS n PRECEDING / FOLLOWING: the start (end) of the peer group
        n groups before (after) the row's own, within its partition."""
        group = torch.cumsum(self.peers.long(), 0) - 1
        starts = torch.cat([self.peers.nonzero().squeeze(1), self.pos.new_full((1,), self.pos.shape[0])])
        first, last = group[self.part_start], group[(self.part_end - 1).clamp(min=0)]
        g = group + offset
        if is_start:
            return torch.where(g > last, self.part_end, starts[g.clamp(min=first, max=last)])
        return torch.where(g < first, self.part_start, starts[g.clamp(min=first, max=last) + 1])

    def _range_bound(self, offset, is_start: bool) -> torch.Tensor:
        """RANGE n PRECEDING / FOLLOWING: the first row of the partition whose
        key is not before (start) / not at or before (end) key + offset in the
        ORDER BY direction, found by binary search. Rows with a NULL or NaN key
        get their peers."""
        key = self.order[0]
        v, valid = self.first_key
        desc = key.descending
        if isinstance(offset, IntervalOffset):
            # DATE / TIMESTAMP keys: compared as microseconds with key +/- INTERVAL (DuckDB's error past the range)
            keys = timestamps.as_timestamp(Column(key.expr.type, v, valid))
            step = -offset if desc else offset
            v = keys.data
            target = timestamps.add_interval(keys, step.months, step.days, step.micros).data
        else:
            v = v.double() if v.is_floating_point() else v.long()
            target = v - offset if desc else v + offset
        nan = torch.isnan(v) if v.is_floating_point() else None

        def before(p):
            x, t = v[p], target
            if desc:
                hit = (x > t) if is_start else (x >= t)
                hit = hit | nan[p] if nan is not None else hit  # NaN sorts first when descending
            else:
                hit = (x < t) if is_start else (x <= t)  # NaN compares False: last
            if valid is not None:
                hit = torch.where(valid[p], hit, key.nulls_first)
            return hit

        bound = K.bisect_rows(before, self.part_start, self.part_end)
        special = ~valid if valid is not None else None
        if nan is not None:
            special = nan if special is None else special | nan
        if special is not None:
            bound = torch.where(special, self.peer_start if is_start else self.peer_end, bound)
        return bound


def _key(c: Column) -> tuple[torch.Tensor, torch.Tensor | None]:
    return order_values(c), c.valid
