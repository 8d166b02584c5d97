"""Joins of every kind (inner, left, right, full, semi, anti, mark, single),
over streams, in or out of core: ``EquiJoin`` when there are equality keys,
``NestedLoopJoin`` when there are none.

The build side (``build_right`` picks which input) is read whole and kept; the
other side streams past it chunk by chunk. Keys are encoded against the build
side once (exec.join_keys) and matched through a GPU hash table on CUDA, direct
addressing when the keys are dense, or sorted keys and binary search on the
CPU (kernels.join); a residual predicate filters the candidate pairs, which
are expanded in bounded pieces. Each join kind turns the surviving pairs into
output rows; the kinds that keep unmatched build rows (RIGHT/FULL with the
right side built, LEFT/FULL/SEMI/ANTI/MARK with the left side built) remember
which build rows matched and emit the rest after the last chunk.

When the build side does not fit the operator's memory reservation, both sides
are hash-partitioned on the join keys into held batches that spill
(GPU -> pinned host -> disk), and each pair of partitions is joined in memory:
a grace hash join. Joins without equality keys enumerate pairs in bounded
chunks (nested loop); their build side must fit in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column, concat_batches, merge_small, slice_batch
from glint.errors import ExecutionError, OutOfMemory
from glint.exec.base import PhysicalNode
from glint.exec.filter import filter_mask
from glint.exec.hashing import hash_columns, partition_of
from glint.exec.join_keys import BuildKeys
from glint.functions.evaluate import evaluate
from glint.kernels.join import build_side, expand_matches, match_counts, match_offsets
from glint.plan.expr import Expr, Field
from glint.runtime.memory import format_bytes
from glint.runtime.spill import PartitionedBatches

PAIR_CHUNK = 1 << 26  # candidate pairs materialised at once, at most (2 x 512 MiB of row ids)
PAIR_BYTES = 64  # device bytes a candidate pair costs: two row ids, the residual's gathers and mask


def pair_budget(memory) -> int:
    """Candidate pairs to materialise at once: what the memory kept for a
    chunk in flight holds (under a small budget 2**26 pairs alone would need
    gigabytes), between 2**16 and PAIR_CHUNK.

    >>> import torch
    >>> from glint.runtime.memory import MemoryManager
    >>> m = MemoryManager(torch.device("cpu"), 1 << 30, headroom=1 << 24)
    >>> pair_budget(m) == (1 << 24) // PAIR_BYTES
    True
    """
    return max(1 << 16, min(PAIR_CHUNK, memory.working_reserve() // PAIR_BYTES))


BUILD_ROW_BYTES = 24  # the sorted keys and row ids kept per build row


def build_row_bytes(device) -> int:
    """Device bytes a join keeps per build row besides the rows: sorted keys
    and row ids, or on CUDA a hash table (up to 2.7 slots of 12 bytes per key,
    glint.kernels.hash_table) with row ids, key ids and match ranges."""
    return BUILD_ROW_BYTES + (40 if torch.device(device).type == "cuda" else 0)


MAX_PARTITIONS = 256


@dataclass(frozen=True, slots=True, eq=False)
class JoinExec(PhysicalNode):
    left: PhysicalNode
    right: PhysicalNode
    kind: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    residual: Expr | None
    left_fields: tuple[Field, ...]
    right_fields: tuple[Field, ...]
    mark: Field | None = None
    null_aware: tuple[Expr, Expr] | None = None  # (outer x, inner y) of IN / NOT IN
    in_key: int = -1  # which key pair is x = y
    build_right: bool = True
    est_rows: float = 0.0
    keep: frozenset[int] | None = None  # the output columns a projection above reads (None: all)
    breaker = True  # on its build input

    def describe(self):
        keys = ", ".join(f"{a!r} = {b!r}" for a, b in zip(self.left_keys, self.right_keys))
        res = f" residual {self.residual!r}" if self.residual is not None else ""
        na = " null-aware" if self.null_aware else ""
        name = "EquiJoin" if self.left_keys else "NestedLoopJoin"
        side = "right" if self.build_right else "left"
        return f"{name} {self.kind.upper()}{na} [{keys}]{res} build={side}"

    def stream(self, ctx, left, right):
        build_inp, probe_inp = (right, left) if self.build_right else (left, right)
        res = ctx.memory.reservation(f"Join build {self.describe()[:60]}")
        held = PartitionedBatches(1, ctx.spill, res)
        scalar_in = self.null_aware is not None and len(self.left_keys) == 1 and self.residual is None
        try:
            first = None
            build_null_y = False
            for b in build_inp:
                if first is None:
                    first = slice_batch(b, 0, 0)
                if scalar_in and self.build_right and b.num_rows:
                    y = evaluate(self.null_aware[1], b)
                    build_null_y = build_null_y or (y.valid is not None and bool((~y.valid).any()))
                if b.num_rows:
                    held.add_part(0, _compact(b))
            # in memory the build rows are held, copied into one batch, and their keys encoded and sorted
            # (the rows themselves are reserved already)
            nbytes = held.nbytes()
            fits = not held.spilled and res.grow((JOIN_FACTOR - 1) * nbytes + build_row_bytes(ctx.device) * held.rows())
            if fits or not self.left_keys:
                if not fits:
                    res.release()
                    # a build of at most one chunk's rows is held as a chunk in flight is, in
                    # the working memory beside the budget (a scalar subquery's one row must not
                    # fail because the breakers above have taken the budget)
                    if not res.grow(nbytes) and held.rows() > ctx.chunk_rows:
                        raise OutOfMemory(
                            f"a join without equality conditions keeps its build input in memory: "
                            f"{format_bytes(nbytes)} do not fit the memory budget "
                            f"({format_bytes(ctx.memory.limit)}) in {self.describe()[:80]}"
                        )
                parts = held.take(0)  # (gives back the rows' device bytes: taken again below)
                res.grow(nbytes)
                build = concat_batches(parts) if parts else first
                del parts
                yield from _JoinRun(self, ctx, build).run(probe_inp)
                return
            yield from self._grace(ctx, held, first, probe_inp, res, (held.rows() > 0, build_null_y))
        finally:
            held.drop()
            res.release()

    # -------------------------------------------------------------- grace
    def _partition_keys(self):
        """(build key exprs, probe key exprs) that decide the partition."""
        bk, pk = (self.right_keys, self.left_keys) if self.build_right else (self.left_keys, self.right_keys)
        idx = list(range(len(bk)))
        if self.null_aware is not None and len(idx) > 1:
            # NULLs of the IN key matter to rows with equal other keys: keep those together
            idx = [i for i in idx if i != self.in_key]
        return [bk[i] for i in idx], [pk[i] for i in idx]

    def _grace(self, ctx, held: PartitionedBatches, first, probe_inp, res, build_flags):
        bexprs, pexprs = self._partition_keys()
        size = JOIN_FACTOR * held.nbytes() + build_row_bytes(ctx.device) * held.rows()
        budget = max(1, ctx.memory.limit - ctx.memory.headroom)
        parts = 4
        while parts < MAX_PARTITIONS and size / parts > budget / 4:
            parts *= 2
        ctx.note(self, f"build side {format_bytes(held.nbytes())} over budget: grace join, {parts} partitions")
        scalar_in = self.null_aware is not None and len(self.left_keys) == 1 and self.residual is None
        flags = build_flags if scalar_in and self.build_right else None
        bparts = PartitionedBatches(parts, ctx.spill, res)
        for b in held.drain(0):
            bparts.add(b, partition_of(hash_columns([evaluate(e, b) for e in bexprs]), parts))
        pparts = PartitionedBatches(parts, ctx.spill, res)
        probe_first = None
        rows, has_null = 0, False
        for b in probe_inp:
            if probe_first is None:
                probe_first = slice_batch(b, 0, 0)
            if scalar_in and not self.build_right and b.num_rows:
                rows += b.num_rows
                y = evaluate(self.null_aware[1], b)
                has_null = has_null or (y.valid is not None and bool((~y.valid).any()))
            if b.num_rows:
                pparts.add(_compact(b), partition_of(hash_columns([evaluate(e, b) for e in pexprs]), parts))
        if scalar_in and not self.build_right:
            flags = (rows > 0, has_null)
        try:
            yield from self._join_partitions(ctx, bparts, pparts, (first, probe_first), res, flags, 0)
        finally:
            bparts.drop()
            pparts.drop()
        ctx.io.spilled_bytes = ctx.spill.spilled_bytes

    def _join_partitions(self, ctx, bparts, pparts, empty, res, flags, depth):
        """Join each pair of partitions in memory, the memory its join needs
        reserved first (other partitions spill to make room); a partition whose
        join does not fit even then is split again on other hash bits."""
        first, probe_first = empty
        for p in range(bparts.parts):
            ctx.check_interrupt()
            need = JOIN_FACTOR * bparts.nbytes(p) + build_row_bytes(ctx.device) * bparts.rows(p)
            got = _reserve(res, need, (bparts, pparts), p)
            if not got and depth < MAX_DEPTH and bparts.rows(p) >= MIN_SPLIT_ROWS:
                ctx.note(self, f"partition of {format_bytes(bparts.nbytes(p))} split again (level {depth + 1})")
                bexprs, pexprs = self._partition_keys()
                sub = [_split(bparts, p, bexprs, ctx, res, depth + 1), _split(pparts, p, pexprs, ctx, res, depth + 1)]
                try:
                    yield from self._join_partitions(ctx, *sub, empty, res, flags, depth + 1)
                finally:
                    for s in sub:
                        s.drop()
                continue
            try:
                bl = list(bparts.drain(p))
                build = concat_batches(bl) if bl else first
                del bl
                probe = merge_small(pparts.drain(p), ctx.chunk_rows) if pparts.rows(p) else iter([probe_first])
                yield from _JoinRun(self, ctx, build, flags).run(probe)
            finally:
                res.shrink(got)


JOIN_FACTOR = 3  # device bytes an in-memory join of a partition needs per byte of its build rows
MAX_DEPTH = 3  # grace partitions split again at most this often
MIN_SPLIT_ROWS = 1 << 12  # smaller partitions are joined whatever their reservation says
SPLIT_PARTS = 8


def _reserve(res, need: int, partitioned, keep: int) -> int:
    """Grow ``res`` by ``need`` (spilling the device partitions other than
    ``keep`` when it cannot); the bytes it grew by (0: it could not)."""
    if res.grow(need):
        return need
    for pb in partitioned:
        pb.spill_others(keep)
    return need if res.grow(need) else 0


def _split(pb: PartitionedBatches, p: int, exprs, ctx, res, level: int) -> PartitionedBatches:
    """Partition ``p`` of ``pb`` split into SPLIT_PARTS by other hash bits."""
    out = PartitionedBatches(SPLIT_PARTS, ctx.spill, res)
    for b in pb.drain(p):
        out.add(b, partition_of(hash_columns([evaluate(e, b) for e in exprs]), SPLIT_PARTS, level))
    return out


def _compact(b: Batch) -> Batch:
    """Strings whose dictionaries are much larger than the rows are
    materialised before a breaker holds them."""
    cols = {}
    changed = False
    for k, c in b.columns.items():
        fn = getattr(c, "compact", None)
        if c.dtype.is_string and fn is not None:
            c2 = fn()
            changed |= c2 is not c
            c = c2
        cols[k] = c
    return Batch(cols, b.num_rows, b.device) if changed else b


class _JoinRun:
    """One in-memory join of a build batch with a stream of probe chunks."""

    def __init__(self, node: JoinExec, ctx, build: Batch, flags=None):
        self.n, self.ctx, self.build, self.flags = node, ctx, build, flags
        self.out = node.keep  # the output columns (None: all)
        self.br = node.build_right
        self.fused = ctx.settings.fused_filters  # residual conditions as one generated kernel, on CUDA
        self.kind = node.kind
        bk = node.right_keys if self.br else node.left_keys
        self.pk = node.left_keys if self.br else node.right_keys
        self.keys = None
        if bk:
            self.keys = BuildKeys([evaluate(e, build) for e in bk])
            self.struct = None if self.keys.joint else build_side(self.keys.key, self.keys.valid, self.keys.bounds())
        # per build row, across chunks: matched at all / IN bookkeeping (made on first use:
        # an inner join's probes need none of them)
        self._flags: dict[str, torch.Tensor] = {}
        self.probe_rows = 0
        self.probe_null_y = False
        self.other = None  # build keys of the non-IN keys (null-aware marks)

    def _flag(self, name: str) -> torch.Tensor:
        got = self._flags.get(name)
        if got is None:
            got = self._flags[name] = torch.zeros(self.build.num_rows, dtype=torch.bool, device=self.build.device)
        return got

    @property
    def hit(self) -> torch.Tensor:
        """Per build row: matched by a probe row (outer, semi and anti builds, marks)."""
        return self._flag("hit")

    @property
    def any_inner(self) -> torch.Tensor:
        return self._flag("any_inner")

    @property
    def null_y(self) -> torch.Tensor:
        return self._flag("null_y")

    # -------------------------------------------------------------- pairs
    def _pairs(self, probe: Batch, key_ids=None):
        """(probe rows, build rows) of matching pairs passing the residual, in pieces."""
        n = self.n
        residual = n.residual
        if key_ids is None:
            keys, struct, ids = self.keys, getattr(self, "struct", None), range(len(self.pk))
        else:
            keys, struct, ids = self._other_keys(key_ids)
        budget = pair_budget(self.ctx.memory)
        if keys is None:
            if residual is None:
                # every pair is an output row: a cross product streams in chunks of chunk_rows
                budget = max(1, min(budget, self.ctx.chunk_rows))
            for pairs in _nested_loop(probe, self.build, residual, self.br, budget, self.fused):
                self.ctx.check_interrupt()
                yield pairs
            return
        struct, lo, counts = _match(keys, struct, [evaluate(self.pk[i], probe) for i in ids])
        n = counts.shape[0]
        # a build of unique keys matches a probe row at most once: no need to count the pairs first
        unique = getattr(struct, "unique", False)
        if unique and n <= budget:
            bounds, sizes = [(0, n)], None
        else:
            # the pairs and the most of one probe row, read together (one host synchronisation)
            total, most = torch.stack([counts.sum(), counts.max()]).tolist() if n else (0, 0)
            bounds = _chunk_bounds(counts, budget, total)
            sizes = (total, most) if len(bounds) == 1 else None
        for start, stop in bounds:
            self.ctx.check_interrupt()  # (a piece may give no output row to stop at)
            pi, bi = expand_matches(struct, lo[start:stop], counts[start:stop], sizes)
            if start:
                pi = pi + start
            if residual is not None and pi.numel():
                li, ri = (pi, bi) if self.br else (bi, pi)
                lb, rb = (probe, self.build) if self.br else (self.build, probe)
                keep = _residual_mask(residual, lb, li, rb, ri, self.fused)
                pi, bi = pi[keep], bi[keep]
            yield pi, bi

    def _probe_matched(self, probe: Batch) -> torch.Tensor:
        """Which probe rows have a match (the build on the right): without a
        residual, the match counts say it, with no pair listed."""
        if self.n.residual is None and self.keys is not None:
            _, _, counts = _match(self.keys, self.struct, [evaluate(e, probe) for e in self.pk])
            return counts > 0
        matched = torch.zeros(probe.num_rows, dtype=torch.bool, device=probe.device)
        for pi, _ in self._pairs(probe):
            matched[pi] = True
        return matched

    def _other_keys(self, key_ids):
        if self.other is None:
            if not key_ids:
                self.other = (None, None, ())
            else:
                bk = self.n.right_keys if self.br else self.n.left_keys
                keys = BuildKeys([evaluate(bk[i], self.build) for i in key_ids])
                struct = None if keys.joint else build_side(keys.key, keys.valid, keys.bounds())
                self.other = (keys, struct, tuple(key_ids))
        return self.other

    # -------------------------------------------------------------- run
    def run(self, probe_inp):
        kind, br = self.kind, self.br
        dev = self.build.device
        template = None
        produced = False  # a batch of rows went out (else an empty one ends the stream)
        for probe in probe_inp:
            if template is None:
                template = slice_batch(probe, 0, 0)
            np_ = probe.num_rows
            self.probe_rows += np_
            lb, rb = (probe, self.build) if br else (self.build, probe)
            if kind in ("semi", "anti", "mark"):
                if br:
                    matched = self._probe_matched(probe)
                    yield from self._emit_semi(probe, matched, self._mark(probe, matched))
                else:
                    for _, bi in self._pairs(probe):
                        self.hit[bi] = True
                    self._mark_accumulate(probe)
                continue
            if kind == "single":
                yield from self._single(probe)
                continue
            probe_hit = torch.zeros(np_, dtype=torch.bool, device=dev) if kind != "inner" else None
            for pi, bi in self._pairs(probe):
                if probe_hit is not None and pi.numel():
                    probe_hit[pi] = True
                    self.hit[bi] = True
                li, ri = (pi, bi) if br else (bi, pi)
                if pi.numel():
                    produced = True
                    yield _combine(lb, li, rb, ri, keep=self.out)
            keep_probe = kind in ("left", "full") if br else kind in ("right", "full")
            if keep_probe:
                miss = (~probe_hit).nonzero().squeeze(1)
                if miss.numel():
                    produced = True
                    none = torch.full_like(miss, -1)
                    yield (
                        _combine(lb, miss, rb, none, True, self.out)
                        if br
                        else _combine(lb, none, rb, miss, True, self.out)
                    )
        if template is None:
            raise AssertionError("a join's probe stream yielded no batch")
        # after the last chunk: the build rows that were never matched
        lb, rb = (template, self.build) if br else (self.build, template)
        if kind in ("semi", "anti", "mark", "single"):
            if not br and kind != "single":
                yield from self._emit_semi(self.build, self.hit, self._mark_final())
            return  # (the left side streamed: every chunk gave its batch)
        keep_build = kind in ("right", "full") if br else kind in ("left", "full")
        if keep_build:
            miss = (~self.hit).nonzero().squeeze(1)
            if miss.numel() or not produced:
                none = torch.full_like(miss, -1)
                yield (
                    _combine(lb, none, rb, miss, True, self.out) if br else _combine(lb, miss, rb, none, True, self.out)
                )
        elif not produced:
            yield _combine(
                lb,
                torch.zeros(0, dtype=torch.int64, device=dev),
                rb,
                torch.zeros(0, dtype=torch.int64, device=dev),
                kind != "inner",
                self.out,
            )

    def _emit_semi(self, left: Batch, matched: torch.Tensor, mark: Column | None):
        if self.out is not None:
            left = Batch({k: c for k, c in left.columns.items() if k in self.out}, left.num_rows, left.device)
        if self.kind == "semi":
            yield left.take(matched.nonzero().squeeze(1))
            return
        if mark is None:
            mark = Column(T.BOOLEAN, matched)
        if self.kind == "mark":
            out = Batch(dict(left.columns), left.num_rows, left.device)
            out.columns[self.n.mark.id] = mark
            yield out
            return
        keep = ~mark.data & mark.validity()
        yield left.take(keep.nonzero().squeeze(1))

    # -------------------------------------------------------------- IN / NOT IN
    def _null_aware_parts(self):
        n = self.n
        other = [i for i in range(len(n.left_keys)) if i != n.in_key]
        return other, (not other and n.residual is None)

    def _mark(self, left: Batch, matched: torch.Tensor) -> Column | None:
        """(left side streams) TRUE where a match exists; for IN / NOT IN,
        NULL instead of FALSE where x is NULL or a NULL y could have matched."""
        n = self.n
        if n.null_aware is None or self.kind == "semi":
            return None
        x = evaluate(n.null_aware[0], left)
        y = evaluate(n.null_aware[1], self.build)
        if x.valid is None and y.valid is None and self.flags is None:
            return None
        nl = left.num_rows
        other, scalar = self._null_aware_parts()
        if scalar:
            if self.flags is not None:
                nonempty, has_null = self.flags
            else:
                nonempty = self.build.num_rows > 0
                has_null = bool((~y.validity()).any()) if self.build.num_rows else False
            any_inner = torch.full((nl,), nonempty, dtype=torch.bool, device=left.device)
            null_y = torch.full((nl,), has_null, dtype=torch.bool, device=left.device)
        else:
            any_inner = torch.zeros(nl, dtype=torch.bool, device=left.device)
            null_y = torch.zeros(nl, dtype=torch.bool, device=left.device)
            yv = y.validity()
            for li, ri in self._pairs(left, other):
                any_inner[li] = True
                null_y[li[~yv[ri]]] = True
        unknown = ~matched & ((~x.validity() & any_inner) | null_y)
        return Column(T.BOOLEAN, matched, ~unknown)

    def _mark_accumulate(self, right: Batch) -> None:
        """(left side built) what the right chunk tells each left row about IN / NOT IN."""
        n = self.n
        if n.null_aware is None or self.kind == "semi":
            return
        y = evaluate(n.null_aware[1], right)
        other, scalar = self._null_aware_parts()
        if scalar:
            if y.valid is not None and right.num_rows and bool((~y.valid).any()):
                self.probe_null_y = True
            return
        yv = y.validity()
        for bi_left, pi_right in ((bi, pi) for pi, bi in self._pairs(right, other)):
            self.any_inner[bi_left] = True
            self.null_y[bi_left[~yv[pi_right]]] = True

    def _mark_final(self) -> Column | None:
        n = self.n
        if n.null_aware is None or self.kind == "semi":
            return None
        x = evaluate(n.null_aware[0], self.build)
        other, scalar = self._null_aware_parts()
        nl = self.build.num_rows
        if scalar:
            nonempty, has_null = self.flags if self.flags is not None else (self.probe_rows > 0, self.probe_null_y)
            any_inner = torch.full((nl,), nonempty, dtype=torch.bool, device=self.build.device)
            null_y = torch.full((nl,), has_null, dtype=torch.bool, device=self.build.device)
        else:
            any_inner, null_y = self.any_inner, self.null_y
        unknown = ~self.hit & ((~x.validity() & any_inner) | null_y)
        return Column(T.BOOLEAN, self.hit, ~unknown)

    # -------------------------------------------------------------- SINGLE
    def _single(self, probe: Batch):
        """A scalar subquery joined to its outer rows (right side built): a LEFT
        join that fails when an outer row meets more than one row."""
        nl = probe.num_rows
        dev = probe.device
        chunks = list(self._pairs(probe))
        li = torch.cat([c[0] for c in chunks]) if chunks else torch.zeros(0, dtype=torch.int64, device=dev)
        ri = torch.cat([c[1] for c in chunks]) if chunks else li.clone()
        if li.numel():
            per_left = torch.zeros(nl, dtype=torch.int64, device=dev)
            per_left.scatter_add_(0, li, torch.ones_like(li))
            if bool((per_left > 1).any()):
                raise ExecutionError("More than one row returned by a subquery used as an expression")
        hit = torch.zeros(nl, dtype=torch.bool, device=dev)
        if li.numel():
            hit[li] = True
        miss = (~hit).nonzero().squeeze(1)
        yield _combine(
            probe, torch.cat([li, miss]), self.build, torch.cat([ri, torch.full_like(miss, -1)]), True, self.out
        )


def _match(keys: BuildKeys, struct, cols: list[Column]):
    """(build structure, start in its row order, matches) per probe row of
    these key columns (the structure is the chunk's own where the keys are
    encoded together with the build side's: strings, wide values)."""
    offset = keys.offset()
    d = cols[0].data
    if offset is not None and d.dim() == 1 and not d.is_floating_point():
        # the key column as it is, its offset taken in the matching (one kernel on CUDA)
        return (struct, *match_offsets(struct, d, cols[0].valid, *offset))
    pk, pv, joint = keys.encode(cols)
    if joint is not None:
        struct = build_side(*joint)
    return (struct, *match_counts(struct, pk, pv))


def _residual_mask(residual, lb, li, rb, ri, fused: bool = False) -> torch.Tensor:
    """Which (left row, right row) pairs pass the residual condition; with
    ``fused``, on CUDA, as one generated kernel where the condition compiles
    (TPC-H Q19's OR of three brand, container, size and quantity tests:
    about a hundred launches a chunk otherwise)."""
    need = {f.id for f in residual.fields()}
    cols = {k: c.take(li) for k, c in lb.columns.items() if k in need}
    cols.update({k: c.take(ri) for k, c in rb.columns.items() if k in need})
    return filter_mask(residual, Batch(cols, int(li.shape[0]), lb.device), fused)


def _chunk_bounds(counts: torch.Tensor, budget: int, total: int):
    """Probe-row ranges whose matches (``total`` in all) add up to about
    `budget` pairs each (one host synchronisation where they do not fit)."""
    n = counts.shape[0]
    if total <= budget:
        return [(0, n)] if total else []
    csum = torch.cumsum(counts, 0)
    marks = torch.arange(1, (total + budget - 1) // budget, device=counts.device, dtype=csum.dtype) * budget
    cuts = torch.searchsorted(csum, marks, right=True).tolist()
    bounds = [0] + [c for c in cuts if 0 < c < n] + [n]
    bounds = sorted(set(bounds))
    return list(zip(bounds[:-1], bounds[1:]))


def _nested_loop(
    probe: Batch, build: Batch, residual, build_right: bool, budget: int = PAIR_CHUNK, fused: bool = False
):
    """All (probe row, build row) pairs that pass the residual, a slice of probe rows at a time."""
    npr, nb = probe.num_rows, build.num_rows
    dev = probe.device
    if npr == 0 or nb == 0:
        return
    step = max(1, budget // nb)
    build_idx = torch.arange(nb, device=dev)
    for start in range(0, npr, step):
        stop = min(npr, start + step)
        pi = torch.arange(start, stop, device=dev).repeat_interleave(nb)
        bi = build_idx.repeat(stop - start)
        if residual is not None:
            li, ri = (pi, bi) if build_right else (bi, pi)
            lb, rb = (probe, build) if build_right else (build, probe)
            keep = _residual_mask(residual, lb, li, rb, ri, fused)
            pi, bi = pi[keep], bi[keep]
        yield pi, bi


def take_nullable(c: Column, idx: torch.Tensor, n_src: int, shared=None) -> Column:
    """Gather where idx == -1 yields NULL. ``shared``: ``(idx clamped to 0,
    found)`` of :func:`_nullable_gather` for this idx, shared by a side's columns."""
    if n_src == 0:
        return Column.nulls(c.dtype, idx.shape[0], idx.device)
    safe, found = shared if shared is not None else _nullable_gather(idx)
    g = c.take(safe)
    valid = found if g.valid is None else g.valid & found
    return Column(g.dtype, g.data, valid, g.dictionary)


def _nullable_gather(idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return idx.clamp(min=0), idx >= 0


def _combine(lb: Batch, li, rb: Batch, ri, nullable: bool = False, keep: frozenset[int] | None = None) -> Batch:
    """The rows of pairs (li, ri) of the two sides (-1: NULLs where
    ``nullable``), of the columns in ``keep`` (all when None)."""
    n = int(li.shape[0])
    cols = {}
    for side, idx in ((lb, li), (rb, ri)):
        shared = None
        for k, c in side.columns.items():
            if keep is None or k in keep:
                if not nullable:
                    cols[k] = c.take(idx)
                    continue
                if shared is None:
                    shared = _nullable_gather(idx)
                cols[k] = take_nullable(c, idx, side.num_rows, shared)
    return Batch(cols, n, lb.device)
