"""Hash aggregation over a stream of chunks, in or out of core.

GROUP BY keys become dense group ids (kernels.keys + kernels.groupby), then
one scatter reduction per aggregate (glint.exec.aggregate_functions). NULL
group keys form a group of their own; aggregates skip NULL inputs; SUM of
integers and DECIMALs is exact (32-bit limb sums).

Two ways through, chosen from the aggregates:

- **partial + final** (the decomposable ones, glint.plan.aggregates: COUNT,
  SUM, AVG, MIN, MAX, VAR_* / STDDEV_*, BOOL_* / BIT_*, ARG_MAX / ARG_MIN,
  FIRST / LAST / ANY_VALUE and STRING_AGG without ORDER BY, CORR / COVAR_* /
  REGR_*, SKEWNESS / KURTOSIS, PRODUCT, and the sketches of the approximate
  aggregates; none DISTINCT): each chunk is reduced to one *state* row per
  group it holds (a state column may be two-dimensional: a sketch's words);
  states are combined as they pile up and turned into results at the end.
  When the combined state outgrows the operator's memory reservation, states
  are hash-partitioned by their group keys into held batches that spill
  (GPU -> pinned host -> disk), and each partition is combined and finished
  on its own: partitioned aggregation.
- **rows** (DISTINCT aggregates, MEDIAN / QUANTILE_*, MODE, ENTROPY, and
  STRING_AGG / FIRST / LAST / ANY_VALUE with ORDER BY): the input rows (only the columns the groups and arguments read) are
  held, partitioned by group-key hash when they outgrow the reservation, and
  each partition is aggregated whole (its groups sorted once where an
  aggregate needs order). When every aggregate ignores duplicates (DISTINCT
  ones, MIN, MAX, BOOL_AND, BOOL_OR) each chunk is first reduced to its
  distinct rows.

GROUPING SETS / ROLLUP / CUBE run through the same machinery
(glint.exec.grouping_sets): each chunk is viewed once per grouping set, its
keys outside the set NULL and the set's number as one more key, so every set
is computed from one pass over the input.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar import types as T
from glint.columnar.column import Batch, Column, concat_batches, merge_small, rechunk, slice_batch, to_host
from glint.errors import ExecutionError, NotSupported
from glint.exec import aggregate_functions as F
from glint.exec import few_groups as FG
from glint.exec import grouping_sets as GS
from glint.exec.aggregate_functions import decomposable
from glint.exec.base import PhysicalNode
from glint.exec.filter import filter_batch, filter_mask
from glint.exec.hashing import hash_columns, partition_of
from glint.exec.keys import encode_keys, group_key
from glint.functions.evaluate import evaluate
from glint.kernels import group_reduce as R
from glint.kernels import groupby as G
from glint.kernels.backend import use_triton
from glint.kernels.strings.equality import pair_equal
from glint.plan import aggregates as A
from glint.plan.expr import AggCall, Expr, Field
from glint.plan.logical import GroupingSets
from glint.runtime.spill import HeldBytes, PartitionedBatches

PARTITIONS = 16  # fan-out when aggregation state goes out of core
MAX_DEPTH = 3  # re-partitioning of a partition that is still too big
# Combining held states (concatenation, group ids, the combined states) peaks
# near three times what is held: reserved up front, so that the combination
# never takes memory the budget gave to others.
COMBINE_FACTOR = 3


@dataclass(frozen=True, slots=True, eq=False)
class HashAggregateExec(PhysicalNode):
    """``mode``: "single" (rows in, results out); "partial" (rows in, one
    state row per group out, keyed by the group fields (and the grouping set)
    and ("s", aggregate, state)); "final" (such states in, from several
    partials, results out). Partial and final serve the decomposable
    aggregates only: a distributed plan aggregates each rank's rows,
    exchanges the states and finishes them. ``grouping``: GROUPING SETS
    (glint.plan.logical.GroupingSets) computed in one pass. ``where``: a
    filter of the input rows folded into the aggregation (the physical
    planner's, from a Filter below it estimated to keep most rows): where the
    fused pass takes every aggregate, its mask goes into the pass and no
    column is compacted (:meth:`_PartialFinal._masked_partial`); elsewhere
    the rows are filtered first, as the Filter did."""

    child: PhysicalNode
    groups: tuple[tuple[Field, Expr], ...]
    aggs: tuple[tuple[Field, AggCall], ...]
    est_rows: float = 0.0
    mode: str = "single"
    grouping: GroupingSets | None = None
    where: Expr | None = None
    breaker = True

    def describe(self):
        g = ", ".join(f"{e!r}" for _, e in self.groups)
        a = ", ".join(f"{e!r}" for _, e in self.aggs)
        m = "" if self.mode == "single" else f"({self.mode})"
        gs = f" {self.grouping!r}" if self.grouping is not None else ""
        w = f" where {self.where!r}" if self.where is not None else ""
        return f"HashAggregate{m} groups=[{g}]{gs} aggs=[{a}]{w}"

    def stream(self, ctx, inp):
        if self.mode != "single" and not decomposable(self.aggs):
            raise NotSupported(f"a {self.mode} aggregation of {', '.join(a.fn for _, a in self.aggs)}")
        # small batches (a join's or a union's pieces) are aggregated together: a chunk's
        # partial aggregation costs tens of launches whatever its rows
        inp = merge_small(inp, ctx.merge_rows)
        if self.where is not None and (self.grouping is not None or not decomposable(self.aggs)):
            inp = (filter_batch(self.where, b, ctx.settings.fused_filters) for b in inp)
        groups, seen = self.groups, None
        if self.grouping is not None:
            groups = GS.keyed_groups(self)
            if self.mode != "final":
                seen = GS.Seen()
                inp = GS.expand(self, inp, seen, ctx.merge_rows)
        run = (_PartialFinal if decomposable(self.aggs) else _Rows)(self, ctx, groups)
        try:
            yield from rechunk(run.execute(inp), ctx.chunk_rows)
        finally:
            run.close()
        if seen is not None and seen.rows == 0:
            empty = GS.empty_sets(self, ctx, seen.first)
            if empty is not None:
                yield empty


# the states of at most this many groups are finished on the host when they lie on a GPU: a
# final value (AVG's exact division, SUM's HUGEINT result checked and narrowed) is tens of
# operations on a few values, each a kernel launch on the GPU (TPC-H Q1's 8 aggregates of 4
# groups: about 300), against one copy of each state column there and of the value back
HOST_FINAL_ROWS = 1 << 12
# where a WHERE folded into the aggregation goes into the fused pass as a mask: on a GPU,
# where compacting every column costs a gather each (on the CPU the rows are filtered
# first, as before; the tests take the masked path there too)
FOLD_DEVICES = ("cuda",)
# the key of a chunk's state column that counts each group's rows, where its groups are
# every value of a small key span (_span_slots): groups of no rows are dropped by it
_ROWS = ("s", -1, 0)


class KeyHint:
    """What one aggregation learnt about its keys, chunk to chunk: whether its
    VARCHAR keys are worth trying as determined by its other keys (one
    failed try stops the tries)."""

    __slots__ = ("strings_by_rest",)

    def __init__(self):
        self.strings_by_rest = True


def _group_slots(key_cols: list[Column], n_rows: int, device, hint: KeyHint | None = None):
    """(slots, first row of each group) for rows grouped by key_cols (all rows
    one group when there are no keys). VARCHAR keys beside others are first
    tried as determined by the others (:func:`_determined`; TPC-H Q10 groups
    by c_custkey and five customer strings): the strings are then not hashed
    at all."""
    if not key_cols:
        return G.Slots(torch.zeros(n_rows, dtype=torch.int64, device=device), 1), None
    if n_rows == 0:
        gid = torch.zeros(0, dtype=torch.int64, device=device)
        return G.Slots(gid, 0), gid
    if hint is None or hint.strings_by_rest:
        strings = [c for c in key_cols if c.dtype.is_string and c.dictionary is not None]
        rest = [c for c in key_cols if not (c.dtype.is_string and c.dictionary is not None)]
        if strings and rest:
            slots, first = _grouped(rest)
            if _determined(strings, slots.gid, first):
                return slots, first
            if hint is not None:
                hint.strings_by_rest = False
    return _grouped(key_cols)


def _grouped(key_cols: list[Column], keyed=None):
    key, (lo, hi) = group_key(key_cols) if keyed is None else keyed
    found = R.few_group_ids(key, lo, hi)
    gid, n, first = found if found is not None else G.group_ids(key, (lo, hi))
    return G.Slots(gid, n), first


def _span_slots(key_cols: list[Column], n_rows: int, device, hint: KeyHint | None):
    """(slots, first row of each group, whether every value of a small key
    span is a group): on a GPU, keys that span at most R.MAX_GROUPS values
    (TPC-H Q1's two flags) give every value of the span a group without a
    host synchronisation, those no row holds included (their first row is
    some other row, and they have no rows: the caller drops them later,
    :meth:`_PartialFinal._settled`); elsewhere :func:`_group_slots`."""
    if not key_cols or n_rows == 0:
        return (*_group_slots(key_cols, n_rows, device, hint), False)
    strings = any(c.dtype.is_string and c.dictionary is not None for c in key_cols)
    rest = not all(c.dtype.is_string and c.dictionary is not None for c in key_cols)
    if strings and rest and (hint is None or hint.strings_by_rest):
        return (*_group_slots(key_cols, n_rows, device, hint), False)
    key, bounds = group_key(key_cols, narrow=True)
    found = R.span_group_ids(key, *bounds)
    if found is None:
        return (*_grouped(key_cols, (key.long(), bounds)), False)
    gid, n, first = found
    return G.Slots(gid, n), first.clamp(max=n_rows - 1), True


def _determined(cols: list[Column], gid: torch.Tensor, first: torch.Tensor) -> bool:
    """Whether each VARCHAR column holds, in every row, the string of its
    group's first row (NULL where that row is NULL): then the column adds no
    group, and grouping by it changes nothing. Codes into the column's
    dictionary are compared first, all columns with one host
    synchronisation; on a GPU, a column whose codes differ somewhere (a
    dictionary may repeat a string: a join's output compacts its
    dictionaries to one entry a row) has its strings compared byte for byte,
    with one more."""
    rep = first[gid]

    def same_rows(c: Column, eq: torch.Tensor) -> torch.Tensor:
        if c.valid is None:
            return eq
        v = c.valid
        return (v == v[rep]) & (eq | ~v)

    by_code = [same_rows(c, c.data == c.data[rep]).all() for c in cols]
    ok = torch.stack(by_code).tolist()
    if all(ok):
        return True
    if not use_triton(rep):
        return False  # the CPU's byte compares cost about what hashing the strings does
    by_bytes = []
    for c, good in zip(cols, ok):
        if good:
            continue
        codes = c.data.long() if c.valid is None else torch.where(c.valid, c.data.long(), 0)
        d = c.dictionary
        by_bytes.append(same_rows(c, pair_equal(d.pieces(codes), d.pieces(codes[rep]))).all())
    return bool(torch.stack(by_bytes).all())


class _PartialFinal:
    """Partial aggregation per chunk, combination of states, final values."""

    def __init__(self, node: HashAggregateExec, ctx, groups):
        self.node, self.ctx, self.groups = node, ctx, groups
        self.group_ids = [f.id for f, _ in groups]
        self.states_in = node.mode == "final"  # the input rows are states already
        self.states_out = node.mode == "partial"  # hand the states on, unfinished
        self.grouping_free = node.grouping is None
        self.hint, self.combine_hint = KeyHint(), KeyHint()  # of the chunks' keys, of the states' keys
        self.res = ctx.memory.reservation(f"HashAggregate {node.describe()[:60]}")
        self.parts: PartitionedBatches | None = None
        # the columns the groups and aggregates read: a folded WHERE's rows are gathered of these
        # only (TPC-H Q13's o_comment, read by its NOT LIKE alone, is not)
        self.reads = frozenset(f.id for _, e in (*groups, *node.aggs) for f in e.fields())

    def close(self):
        if self.parts is not None:
            self.parts.drop()
        self.res.release()

    # states of one aggregate: a list of columns, keyed ("s", i, j) in state batches
    def _partial(self, batch: Batch) -> Batch:
        node = self.node
        if node.where is not None:
            states, batch = self._where(batch)
            if states is not None:
                return states
        key_cols = [evaluate(e, batch) for _, e in self.groups]
        fused_all = self._fused_all(batch)
        if fused_all:
            slots, first, spread = _span_slots(key_cols, batch.num_rows, batch.device, self.hint)
        else:
            (slots, first), spread = _group_slots(key_cols, batch.num_rows, batch.device, self.hint), False
        out = {f.id: c.take(first) for f, c in zip((f for f, _ in self.groups), key_cols)} if key_cols else {}
        fused = {}
        if FG.applies(node.aggs, slots, batch, self.ctx.settings.fused_aggregation):
            fused = FG.fused_states(node.aggs, batch, slots, slots.ids if key_cols else None, counts=spread)
        if spread:
            # (the aggregates the fused pass did not take give the span's groups of no rows
            # zero sums and counts, as it does: COUNT, SUM and AVG only, _fused_all)
            rows = fused.pop(-1, None)
            out[_ROWS] = rows[0] if rows is not None else Column(T.BIGINT, G.count(slots, None))
        for i, (_, agg) in enumerate(node.aggs):
            states = fused.get(i)
            for j, col in enumerate(states if states is not None else F.partial_states(agg, batch, slots)):
                out[("s", i, j)] = col
        return Batch(out, slots.n, batch.device)

    def _where(self, batch: Batch) -> tuple[Batch | None, Batch]:
        """(the partial states of the rows where the folded WHERE holds, or None;
        else those rows). The states come straight from every row and the
        WHERE's mask (:meth:`_masked_partial`) where the fused pass takes
        every aggregate."""
        node, ctx = self.node, self.ctx
        fused = ctx.settings.fused_filters
        maskable = (
            batch.device.type in FOLD_DEVICES
            and batch.num_rows
            and ctx.settings.fused_aggregation
            and self.grouping_free
            and FG.takes_all(node.aggs)
        )
        if maskable:
            try:
                mask = filter_mask(node.where, batch, fused)
            except ExecutionError:
                mask = None  # filtered conjunct by conjunct below
            if mask is not None:
                states = self._masked_partial(batch, mask)
                if states is not None:
                    return states, batch
                return None, filter_batch(node.where, batch, fused, self.reads, mask)
        return None, filter_batch(node.where, batch, fused, self.reads)

    def _masked_partial(self, batch: Batch, mask: torch.Tensor) -> Batch | None:
        """The partial states of the rows where ``mask`` holds, from every row
        of ``batch``, without compacting a column; None where the fused pass
        does not take every aggregate after all, or where an expression raised
        over a row the WHERE rejects (the rows are then filtered first, and
        raise only what they should)."""
        node = self.node
        try:
            key_cols = [evaluate(e, batch) for _, e in self.groups]
            slots, first, spread = _span_slots(key_cols, batch.num_rows, batch.device, self.hint)
            if not R.fits(slots.n, batch.num_rows):
                return None
            fused = FG.fused_states(node.aggs, batch, slots, slots.ids if key_cols else None, rows=mask)
        except ExecutionError:
            return None
        if len(fused) != len(node.aggs) + 1:
            return None
        out = {("s", i, j): col for i in range(len(node.aggs)) for j, col in enumerate(fused[i])}
        if not key_cols:
            return Batch(out, 1, batch.device)
        out.update({f.id: c.take(first) for (f, _), c in zip(self.groups, key_cols)})
        if spread:
            # groups whose every row the WHERE rejects are not groups: dropped with the
            # span's groups that no row holds, once for all the chunks (_settled)
            out[_ROWS] = fused[-1][0]
            return Batch(out, slots.n, batch.device)
        kept = (fused[-1][0].data > 0).nonzero().squeeze(1)
        return Batch(out, slots.n, batch.device).take(kept)

    def _fused_all(self, batch: Batch) -> bool:
        """Whether the fused pass computes every aggregate of this chunk's states."""
        return (
            bool(self.groups)
            and bool(self.node.aggs)
            and not self.states_in
            and batch.device.type in FOLD_DEVICES
            and self.ctx.settings.fused_aggregation
            and FG.takes_all(self.node.aggs)
        )

    def _settled(self, held: list[Batch]) -> list[Batch]:
        """The held state batches, those of a span's groups (the chunks'
        states with a count of rows per group, :func:`_span_slots`) replaced
        by one batch of their groups that hold rows, each once: one host
        synchronisation for all the chunks since the last time."""
        raw = [b for b in held if _ROWS in b.columns]
        if not raw:
            return held
        b = concat_batches(raw)
        keep = (b[_ROWS].data > 0).nonzero().squeeze(1)
        b = b.select([k for k in b.columns if k != _ROWS]).take(keep)
        return [x for x in held if _ROWS not in x.columns] + [self._regroup(b)]

    def _combine(self, states: list[Batch], apart: bool = False) -> Batch:
        """One state row per group of the held state batches. ``apart``: each
        batch holds its groups once (the partial states of chunks and their
        combinations; not the pieces of a spilled partition, nor states from
        other ranks), so batches whose groups do not meet concatenate."""
        batch = concat_batches(states)
        if apart and len(states) > 1 and not self.states_in:
            apart = _apart(states, self.group_ids)
            if apart is not None:
                # the batches share no group outside the rows in ``apart``: only those combine
                overlap = apart.nonzero().squeeze(1)
                if overlap.shape[0] == 0:
                    return batch
                if 2 * overlap.shape[0] <= batch.num_rows:
                    merged = self._regroup(batch.take(overlap))
                    return concat_batches([batch.take((~apart).nonzero().squeeze(1)), merged])
        return self._regroup(batch)

    def _regroup(self, batch: Batch) -> Batch:
        node = self.node
        key_cols = [batch[k] for k in self.group_ids]
        slots, first = _group_slots(key_cols, batch.num_rows, batch.device, self.combine_hint)
        out = {k: c.take(first) for k, c in zip(self.group_ids, key_cols)} if key_cols else {}
        for i, (_, agg) in enumerate(node.aggs):
            cols = [batch[("s", i, j)] for j in range(F.n_states(agg))]
            for j, col in enumerate(F.combine_states(agg, cols, slots)):
                out[("s", i, j)] = col
        return Batch(out, slots.n, batch.device)

    def _final(self, state: Batch) -> Batch:
        if self.states_out:
            return state
        out = {k: state[k] for k in self.group_ids}
        host = state.device.type == "cuda" and state.num_rows <= HOST_FINAL_ROWS
        states = {i: [state[("s", i, j)] for j in range(F.n_states(agg))] for i, (_, agg) in enumerate(self.node.aggs)}
        if host:
            # the states finished on the host come over in one copy (one synchronisation)
            there = [
                i
                for i, (_, agg) in enumerate(self.node.aggs)
                if F.final_computes(agg) and not any(c.dtype.is_string for c in states[i])
            ]
            moved = iter(to_host([c for i in there for c in states[i]]))
            host_states = {i: [next(moved) for _ in states[i]] for i in there}
        for i, (f, agg) in enumerate(self.node.aggs):
            if host and i in host_states:
                out[f.id] = F.final_value(agg, host_states[i]).to(state.device)
            else:
                out[f.id] = F.final_value(agg, states[i])
        return Batch(out, state.num_rows, state.device)

    def execute(self, inp):
        ctx = self.ctx
        state: Batch | None = None
        pending: list[Batch] = []
        pending_rows = 0
        empty: Batch | None = None  # a state of no groups, for when every partition ends up empty
        held_bytes = HeldBytes()  # of the state and the pending batches
        for batch in inp:
            p = batch if self.states_in else self._partial(batch)
            if empty is None:
                empty = slice_batch(p, 0, 0)
                if _ROWS in empty.columns:
                    empty = empty.select([k for k in empty.columns if k != _ROWS])
            if self.parts is not None:
                for b in self._settled([p]):
                    self.parts.add(b, self._partition(b))
                continue
            pending.append(p)
            pending_rows += p.num_rows
            held_bytes.add(p)
            held = [state] + pending if state is not None else pending
            if pending_rows >= max(ctx.chunk_rows, state.num_rows if state is not None else 0):
                state, pending, pending_rows = self._combine(self._settled(held), apart=True), [], 0
                held = [state]
                held_bytes = HeldBytes(held)
            if not self.res.resize(COMBINE_FACTOR * held_bytes.total) and self.groups:
                # out of core: every state from now on goes to its hash partition
                self.parts = PartitionedBatches(PARTITIONS, ctx.spill, self.res)
                self.res.release()
                for b in self._settled(held):
                    self.parts.add(b, self._partition(b))
                state, pending = None, []
                ctx.note(self.node, f"aggregation state over budget: {PARTITIONS} partitions")
        if self.parts is None:
            held = self._settled(([state] if state is not None else []) + pending)
            # one held batch is combined already, unless it is raw input states (final mode)
            done = len(held) == 1 and self.groups and (state is not None or not self.states_in)
            state = held[0] if done else self._combine(held, apart=True)
            yield self._final(state)
            return
        produced = False
        for out in self._finish_partitions(self.parts, 0):
            produced = True
            yield out
        if not produced:
            yield self._final(self._combine([empty]))

    def _finish_partitions(self, parts: PartitionedBatches, depth: int):
        ctx = self.ctx
        for p in range(parts.parts):
            if not parts.held[p]:
                continue
            work = ctx.memory.reservation(f"HashAggregate partition {p}")
            try:
                if (
                    not work.grow((COMBINE_FACTOR - 1) * parts.nbytes(p))
                    and depth < MAX_DEPTH
                    and len(parts.held[p]) > 1
                ):
                    work.release()
                    sub = PartitionedBatches(PARTITIONS, ctx.spill, self.res)
                    for b in parts.take(p):
                        sub.add(b, self._partition(b, depth + 1))
                    yield from self._finish_partitions(sub, depth + 1)
                    continue
                state = self._combine(parts.take(p))
                out = self._final(state)
            finally:
                work.release()
            yield out
        ctx.io.spilled_bytes = ctx.spill.spilled_bytes

    def _partition(self, b: Batch, level: int = 0) -> torch.Tensor:
        return partition_of(hash_columns([b[k] for k in self.group_ids]), PARTITIONS, level)


def _apart(states: list[Batch], group_ids) -> torch.Tensor | None:
    """For state batches that each hold their groups once: a mask over their
    concatenation of the rows whose groups other batches may hold too, from
    the ranges of one integer GROUP BY column (one host synchronisation);
    None where no column tells. Chunks of a table clustered by a key (TPC-H
    lineitem by l_orderkey, Q18's GROUP BY) give batches whose ranges meet at
    most at their ends: their groups are combined by concatenation, and the
    few rows where the ranges overlap are grouped again."""
    col = next(
        (
            k
            for k in group_ids
            if states[0][k].dtype.kind in _RANGED
            and states[0][k].data.dim() == 1
            and all(b[k].valid is None for b in states)
        ),
        None,
    )
    if col is None:
        return None
    nonempty = [b for b in states if b.num_rows]
    if len(nonempty) < 2:
        return None
    bounds = torch.stack([torch.stack(torch.aminmax(b[col].data.long())) for b in nonempty]).tolist()
    order = sorted(range(len(bounds)), key=lambda i: bounds[i][0])
    spans, top = [], None  # value ranges where two batches overlap
    for i in order:
        lo, hi = bounds[i]
        if top is not None and lo <= top:
            spans.append((lo, min(hi, top)))
        top = hi if top is None else max(top, hi)
    x = torch.cat([b[col].data for b in nonempty])
    shared = torch.zeros(x.shape[0], dtype=torch.bool, device=x.device)
    for lo, hi in spans:
        shared |= (x >= lo) & (x <= hi)
    return shared


_RANGED = ("INTEGER", "BIGINT", "DATE", "DECIMAL", "TIMESTAMP")  # keys equal exactly when their data is


def _by_bits(c: Column) -> Column:
    if c.data.dtype != torch.float64 or c.is_wide:
        return c
    return Column(T.BIGINT, c.data.view(torch.int64), c.valid)


# ------------------------------------------------------------------ rows (DISTINCT, holistic)
class _Rows:
    """Hold the input rows (the columns the aggregate reads), partitioned by
    group-key hash when they do not fit; aggregate each partition whole."""

    def __init__(self, node: HashAggregateExec, ctx, groups):
        self.node, self.ctx, self.groups = node, ctx, groups
        need = set()
        for _, e in groups:
            need |= {f.id for f in e.fields()}
        for _, a in node.aggs:
            need |= {f.id for f in a.fields()}
        self.need = sorted(need)
        self.dedupe = bool(self.need) and all(A.duplicate_insensitive(a) for _, a in node.aggs)
        self.res = ctx.memory.reservation(f"HashAggregate {node.describe()[:60]}")
        self.parts = PartitionedBatches(1, ctx.spill, self.res)

    def close(self):
        self.parts.drop()
        self.res.release()

    def _select(self, batch: Batch) -> Batch:
        b = batch.select(self.need)
        if self.dedupe and b.num_rows:
            # rows equal in every column read give equal arguments; DOUBLEs compare by their bits
            # here, as -0.0 = 0.0 although an argument may tell them apart (CAST(-0.0 AS VARCHAR))
            cols = [_by_bits(b[k]) for k in self.need]
            ((key, _),) = encode_keys([cols], nulls_equal=True)
            _, _, first = G.group_ids(key)
            b = b.take(first)
        return b

    def _partition(self, b: Batch, level: int = 0) -> torch.Tensor:
        keys = [evaluate(e, b) for _, e in self.groups]
        return partition_of(hash_columns(keys), PARTITIONS, level)

    def execute(self, inp):
        node, ctx = self.node, self.ctx
        first = None
        for batch in inp:
            if first is None:
                first = batch.select(self.need)
            b = self._select(batch)
            if self.parts.parts > 1:
                self.parts.add(b, self._partition(b))
                continue
            if b.num_rows:
                self.parts.add_part(0, b)
            if self.parts.spilled and self.groups:
                # out of core: the rows go to hash partitions of the group keys
                old = self.parts
                self.parts = PartitionedBatches(PARTITIONS, ctx.spill, self.res)
                for held in old.drain(0):
                    self.parts.add(held, self._partition(held))
                ctx.note(node, f"input over budget: {PARTITIONS} partitions")
        if self.parts.parts == 1:
            rows = self.parts.take(0)
            yield aggregate_batch(self.groups, node.aggs, concat_batches(rows) if rows else first)
            return
        produced = False
        for p in range(self.parts.parts):
            if self.parts.held[p]:
                produced = True
                yield aggregate_batch(self.groups, node.aggs, concat_batches(self.parts.take(p)))
        if not produced:
            yield aggregate_batch(self.groups, node.aggs, slice_batch(first, 0, 0))
        ctx.io.spilled_bytes = ctx.spill.spilled_bytes


def aggregate_batch(groups, aggs, batch: Batch) -> Batch:
    """GROUP BY over one whole batch (every aggregate kind, DISTINCT included)."""
    dev = batch.device
    out = {}
    if groups:
        key_cols = [evaluate(e, batch) for _, e in groups]
        slots, first = _group_slots(key_cols, batch.num_rows, dev)
        for (f, _), c in zip(groups, key_cols):
            out[f.id] = c.take(first)
    else:
        slots = G.Slots(torch.zeros(batch.num_rows, dtype=torch.int64, device=dev), 1)
    for f, agg in aggs:
        out[f.id] = F.aggregate(agg, batch, slots)
    return Batch(out, slots.n, dev)


__all__ = ["HashAggregateExec", "aggregate_batch", "decomposable"]
