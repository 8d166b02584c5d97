"""Distributed physical planning: the single-node operators, plus exchanges
where the rows of an operator's input are not where it needs them.

Every planned node carries a :class:`~glint.distributed.distribution.Distribution`
(how its rows are spread over the ranks), derived bottom-up from the tables'
partitioning in the catalog:

- scans: ``partitioned`` (row ranges), ``hash(column)`` (partitioned on a key
  at load) or ``replicated`` (a small table every rank holds);
- filters and projections keep their input's (hash keys follow the projection);
- joins run locally when their inputs allow it: co-partitioned on the join
  keys, or one side replicated (the right side for inner, left, semi, anti,
  mark and scalar joins, the left side for inner and right joins). Otherwise
  the cheapest of: broadcasting one side, shuffling the sides not yet
  partitioned on the keys, or gathering both to rank 0, with the costs of
  :mod:`glint.distributed.cost` (eq. 3 of "Terabyte-scale analytics in the blink of
  an eye" decides broadcast against shuffle). When the best is broadcasting
  one side or shuffling, both are correct, and the side to broadcast has an
  estimated size (anything but a table's columns), the join is adaptive
  (:mod:`glint.distributed.adaptive_join`): the ranks decide between the two at run
  time from that side's actual size. A join that shuffles both sides
  may keep one side's heavy keys apart (:mod:`glint.distributed.skew_join`,
  setting ``skew_joins``): in an adaptive join's shuffle path ("auto"), or
  also in a planned shuffle join ("always"), whose output is then
  ``partitioned`` rather than hashed on the keys. A NOT IN / IN-mark join needs
  all the subquery's rows (or all rows with equal other keys) next to each
  outer row: its IN key is never a partitioning key;
- aggregates run locally on input partitioned on a subset of the group keys
  (of the keys every grouping set keeps, for GROUPING SETS / ROLLUP / CUBE).
  Otherwise the decomposable aggregates (glint.plan.aggregates: COUNT, SUM,
  AVG, MIN, MAX, the moments, the picks, the sketches ...) aggregate each
  rank's rows into states (HashAggregate partial, every grouping set from one
  pass), exchange the states and finish them (HashAggregate final): without
  group keys by an all-reduce of the states; with them by a shuffle on the
  group keys (and the grouping set), or a broadcast when the states are
  small (the result is then replicated, which scalar subqueries and small
  dimension-like results want). DISTINCT and holistic aggregates (MEDIAN,
  QUANTILE_*, MODE, ENTROPY, ordered STRING_AGG / FIRST / LAST) shuffle
  their input rows on the group keys (those every grouping set keeps), or
  gather them when there are none; when
  every aggregate ignores duplicates (DISTINCT ones, MIN, MAX, BOOL_AND,
  BOOL_OR, ...), each rank's distinct (group keys, arguments) rows move instead;
- ORDER BY, LIMIT and OFFSET are global: a local top-k (or limit) per rank,
  then a gather and the final top-k / sort / limit on rank 0;
- set operations other than UNION ALL shuffle both sides on all columns;
- window functions hash their input on the PARTITION BY keys all of them
  share, or gather it to rank 0 when they share none.

The plan's root gathers the result to rank 0. Last, :func:`glint.distributed.steps.settle`
fixes which exchanges read their input to its end before their rounds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace

from glint.distributed.adaptive_join import AdaptiveJoinExec
from glint.distributed.all_reduce import AllReduceExec, reducible
from glint.distributed.broadcast import BroadcastExec
from glint.distributed.cost import ExchangeCost
from glint.distributed.distribution import PARTITIONED, REPLICATED, SINGLE, Distribution, hashed
from glint.distributed.gather import GatherExec
from glint.distributed.local import PartitionFilterExec, RootOnlyExec
from glint.distributed.shuffle import ShuffleExec
from glint.distributed.skew_join import SkewJoinExec, kept_side
from glint.distributed.steps import has_exchange, settle
from glint.errors import NotSupported
from glint.exec.aggregate import HashAggregateExec, decomposable
from glint.exec.base import PhysicalNode
from glint.exec.limit import LimitExec
from glint.exec.physical_planner import (
    filter_exec,
    fold_filter,
    join_exec,
    join_keys,
    narrow_filter,
    narrow_join,
    scan_exec,
)
from glint.exec.project import ProjectExec
from glint.exec.scan import OneRowExec
from glint.exec.series import SeriesExec, SeriesPerRowExec
from glint.exec.set_ops import SetOpExec
from glint.exec.sort import SortExec, TopKExec
from glint.exec.values import ValuesExec
from glint.exec.window import WindowExec
from glint.plan import logical as L
from glint.plan.aggregates import duplicate_insensitive
from glint.plan.cardinality import Estimator
from glint.plan.expr import ColRef, Field

LEFT_KEEPING = ("inner", "left", "semi", "anti", "mark", "single")  # correct with the right side replicated
RIGHT_KEEPING = ("inner", "right")  # correct with the left side replicated
SINGLE_PENALTY = 1.0  # work on rank 0 alone, counted as moving its input once more
_WIDTH = {"BOOLEAN": 1, "INTEGER": 4, "DATE": 4, "NULL": 4, "VARCHAR": 24}
SMALL_RESULT_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class PlanOptions:
    """``small_result_bytes``: aggregation states up to this size (over all
    ranks) are broadcast, so that the aggregate's result is replicated.
    ``adaptive_joins``: "auto" (a join's broadcast or shuffle is decided at
    run time when the side to broadcast has an estimated size), "always" or
    "never". ``round_bytes``: input bytes per rank and round of a shuffle or
    gather (0: from each rank's memory budget). ``skew_joins``: where a join
    that shuffles both sides keeps its probe side's heavy keys apart
    (:mod:`glint.distributed.skew_join`): "auto" (in adaptive joins, whose
    output is ``partitioned`` anyway), "always" (also in planned shuffle
    joins, whose output is then ``partitioned`` rather than hashed on the
    keys) or "never"."""

    small_result_bytes: int = SMALL_RESULT_BYTES
    adaptive_joins: str = "auto"
    round_bytes: int = 0
    skew_joins: str = "auto"


@dataclass(frozen=True, slots=True)
class Planned:
    node: PhysicalNode
    dist: Distribution


class _Ctx:
    def __init__(self, catalog, ranks: int, options: PlanOptions, plan: L.LogicalNode):
        self.est = Estimator(catalog)
        self.catalog = catalog
        self.ranks = ranks
        self.cost = ExchangeCost(ranks, getattr(catalog, "hosts", 1))
        self.options = options
        self._next_id = _max_field_id(plan) + 1

    def new_field(self, name: str, dtype) -> Field:
        """A column the logical plan does not have (ids above all of its)."""
        f = Field(self._next_id, name, dtype)
        self._next_id += 1
        return f

    def rows(self, node: L.LogicalNode) -> float:
        return self.est.rows(node)

    def nbytes(self, node: L.LogicalNode) -> float:
        return self.rows(node) * row_bytes(node.schema)

    def rows_per_rank(self, node: L.LogicalNode, d: Distribution) -> float:
        return self.rows(node) / self.ranks if d.spread else self.rows(node)


def _max_field_id(node: L.LogicalNode) -> int:
    own = max((f.id for f in node.schema), default=0)
    return max([own] + [_max_field_id(c) for c in node.children])


def row_bytes(schema) -> int:
    """A guess of a row's size from its types (strings: 24 bytes).

    >>> from glint.columnar import types as T
    >>> from glint.plan.expr import Field
    >>> row_bytes([Field(1, "a", T.INTEGER), Field(2, "b", T.VARCHAR), Field(3, "c", T.DECIMAL(15, 2))])
    36
    """
    return sum(_WIDTH.get(f.type.kind, 8) for f in schema) or 1


def plan_distributed(logical: L.LogicalNode, catalog, ranks: int, options: PlanOptions = PlanOptions()) -> PhysicalNode:
    """The physical plan every rank runs; its result ends on rank 0."""
    ctx = _Ctx(catalog, ranks, options, logical)
    return settle(to_single(_plan(logical, ctx)).node, options.round_bytes)


# ------------------------------------------------------------------ distribution changes
def to_single(p: Planned) -> Planned:
    if p.dist.whole:  # rank 0 holds every row already
        return Planned(p.node, SINGLE)
    return Planned(GatherExec(p.node, p.node.est_rows), SINGLE)


def to_replicated(p: Planned) -> Planned:
    if p.dist == REPLICATED:
        return p
    return Planned(BroadcastExec(p.node, _source(p), p.node.est_rows), REPLICATED)


def to_hash(p: Planned, keys: tuple) -> Planned:
    d = hashed(keys)
    if p.dist == d:
        return p
    if p.dist == REPLICATED:
        return Planned(PartitionFilterExec(p.node, keys, p.node.est_rows), d)
    return Planned(ShuffleExec(p.node, keys, _source(p), p.node.est_rows), d)


def to_spread(p: Planned) -> Planned:
    if p.dist.spread:
        return p
    return Planned(RootOnlyExec(p.node, p.node.est_rows), PARTITIONED)


def _source(p: Planned) -> str:
    return "root" if p.dist == SINGLE else "all"


# ------------------------------------------------------------------ one function per node type
@functools.singledispatch
def _plan(node, ctx: _Ctx) -> Planned:
    raise TypeError(f"no distributed plan for {type(node).__name__}")


@_plan.register
def _(node: L.Scan, ctx):
    part = ctx.catalog.partitioning(node.table)
    d = PARTITIONED
    if part.kind == "replicated":
        d = REPLICATED
    elif part.kind == "hash":
        f = next((f for c, f in zip(node.columns, node.fields) if c.lower() == part.key.lower()), None)
        if f is not None:
            d = hashed((ColRef(f),))
    return Planned(scan_exec(node, ctx.est), d)


@_plan.register
def _(node: L.OneRow, ctx):
    return Planned(OneRowExec(), REPLICATED)


@_plan.register
def _(node: L.Values, ctx):
    # constants: every rank makes the same rows
    return Planned(ValuesExec(node.rows, node.fields, float(len(node.rows))), REPLICATED)


@_plan.register(L.RecursiveCTE)
@_plan.register(L.WorkingTable)
def _(node, ctx):
    raise NotSupported("WITH RECURSIVE on a distributed connection")


@_plan.register
def _(node: L.SeriesPerRow, ctx):
    # row by row: the rows stay where they are (and keep their columns)
    child = _plan(node.child, ctx)
    return Planned(
        SeriesPerRowExec(
            child.node, node.start, node.stop, node.step, node.inclusive, node.field, node.keep_empty, ctx.rows(node)
        ),
        child.dist,
    )


@_plan.register
def _(node: L.Series, ctx):
    # generated alike on every rank
    return Planned(SeriesExec(node.start, node.step, node.count, node.field, float(node.count)), REPLICATED)


@_plan.register
def _(node: L.Filter, ctx):
    child = _plan(node.child, ctx)
    return Planned(filter_exec(node, child.node, ctx.est), child.dist)


@_plan.register
def _(node: L.Project, ctx):
    child = _plan(node.child, ctx)
    d = child.dist
    if d.kind == "hash":
        out = [next((ColRef(f) for f, e in node.exprs if e == k), None) for k in d.keys]
        d = hashed(out) if all(k is not None for k in out) else PARTITIONED
    return Planned(
        ProjectExec(narrow_join(narrow_filter(child.node, node.exprs), node.exprs), node.exprs, ctx.rows(node)), d
    )


@_plan.register
def _(node: L.Aggregate, ctx):
    child = _plan(node.child, ctx)
    groups, aggs, est, gs = node.groups, node.aggs, ctx.rows(node), node.grouping

    def agg(inp, groups=groups, aggs=aggs, rows=est, mode="single", where=None):
        return HashAggregateExec(inp, groups, aggs, rows, mode, gs, where)

    # a filter right below folds into the aggregation that reads the rows (single or partial)
    rows_in, where = fold_filter(child.node) if gs is None and decomposable(aggs) else (child.node, None)

    # a grouping set's groups share the keys that every set keeps; the others may be NULLed
    kept = groups if gs is None else tuple(groups[i] for i in gs.common())
    out_keys = tuple(ColRef(f) for f, _ in groups) + ((ColRef(gs.field),) if gs is not None else ())
    if child.dist.whole:
        return Planned(agg(rows_in, where=where), child.dist)
    local = _group_keys_of(child.dist, kept)
    if local is not None:
        return Planned(agg(rows_in, where=where), hashed(local))
    if decomposable(aggs):
        states = min(ctx.rows(node.child), est * ctx.ranks)
        partial = agg(rows_in, rows=states, mode="partial", where=where)
        if not out_keys and reducible(aggs):
            return Planned(agg(AllReduceExec(partial, aggs), mode="final"), REPLICATED)
        if not out_keys or ctx.nbytes(node) * ctx.ranks <= ctx.options.small_result_bytes:
            return Planned(agg(BroadcastExec(partial, "all", states), mode="final"), REPLICATED)
        return Planned(agg(ShuffleExec(partial, out_keys, "all", states), mode="final"), hashed(out_keys))
    if gs is None and all(duplicate_insensitive(a) and a.filter is None and not a.order for _, a in aggs):
        # duplicates change nothing: each rank's distinct (groups, arguments) move, not its rows
        pre, groups, aggs = _distinct_first(child.node, groups, aggs, ctx)
        if groups:
            moved = ShuffleExec(pre, out_keys, "all", pre.est_rows)
            return Planned(agg(moved, groups, aggs), hashed(out_keys))
        return Planned(agg(GatherExec(pre, pre.est_rows), groups, aggs), SINGLE)
    if kept:
        # every group of every set holds rows with equal kept keys: those meet on one rank
        moved = ShuffleExec(child.node, tuple(e for _, e in kept), "all", child.node.est_rows)
        return Planned(agg(moved), hashed(tuple(ColRef(f) for f, _ in kept)))
    return Planned(agg(GatherExec(child.node, child.node.est_rows)), SINGLE)


def _distinct_first(child: PhysicalNode, groups, aggs, ctx: _Ctx):
    """(each rank's distinct group keys and aggregate arguments, the groups
    and aggregates that finish from them). The group columns keep their
    fields; each distinct argument gets a new one."""
    args: list = []
    for _, a in aggs:
        args += [e for e in a.args if e not in args]
    arg_fields = [ctx.new_field(f"__arg{i}", e.type) for i, e in enumerate(args)]
    pre = HashAggregateExec(child, tuple(groups) + tuple(zip(arg_fields, args)), (), child.est_rows)
    field_of = dict(zip(args, arg_fields))
    final_groups = tuple((f, ColRef(f)) for f, _ in groups)
    final_aggs = tuple((f, replace(a, args=tuple(ColRef(field_of[e]) for e in a.args))) for f, a in aggs)
    return pre, final_groups, final_aggs


def _group_keys_of(d: Distribution, groups) -> tuple | None:
    """The output group columns that ``d``'s hash keys are, when each key is a
    group expression (every group's rows then share a rank)."""
    if d.kind != "hash" or not groups:
        return None
    out = [next((ColRef(f) for f, e in groups if e == k), None) for k in d.keys]
    return tuple(out) if all(k is not None for k in out) else None


@_plan.register
def _(node: L.Sort, ctx):
    child = to_single(_plan(node.child, ctx))
    return Planned(SortExec(child.node, node.keys, ctx.rows(node)), SINGLE)


@_plan.register
def _(node: L.Window, ctx):
    """A window partition's rows must meet on one rank: the input is hashed
    on the PARTITION BY keys that every function shares (kept when it is
    hashed on a subset of them already), or gathered to rank 0 when the
    functions share none (a window over all rows)."""
    child = _plan(node.child, ctx)
    est = ctx.rows(node)
    if child.dist.whole:
        return Planned(WindowExec(child.node, node.funcs, est), child.dist)
    common = None
    for _, w in node.funcs:
        common = [k for k in (w.partition if common is None else common) if k in w.partition]
    if common:
        if child.dist.kind == "hash" and set(child.dist.keys) <= set(common):
            return Planned(WindowExec(child.node, node.funcs, est), child.dist)
        moved = to_hash(child, tuple(common))
        return Planned(WindowExec(moved.node, node.funcs, est), moved.dist)
    return Planned(WindowExec(to_single(child).node, node.funcs, est), SINGLE)


@_plan.register
def _(node: L.Limit, ctx):
    est = ctx.rows(node)
    if isinstance(node.child, L.Sort) and node.limit is not None:
        keys = node.child.keys
        child = _plan(node.child.child, ctx)
        if child.dist.spread:  # each rank's best rows, then the best of those
            local = TopKExec(child.node, keys, node.limit + node.offset, 0, est)
            child = Planned(GatherExec(local, est * ctx.ranks), SINGLE)
        return Planned(TopKExec(child.node, keys, node.limit, node.offset, est), SINGLE)
    child = _plan(node.child, ctx)
    if child.dist.spread:
        inner = child.node
        if node.limit is not None and not has_exchange(inner):
            # a local limit stops reading early: only where no exchange below must run on every rank
            inner = LimitExec(inner, node.limit + node.offset, 0, est)
        child = Planned(GatherExec(inner, est * ctx.ranks), SINGLE)
    return Planned(LimitExec(child.node, node.limit, node.offset, est), SINGLE)


@_plan.register
def _(node: L.SetOp, ctx):
    left, right = _plan(node.left, ctx), _plan(node.right, ctx)
    est = ctx.rows(node)
    if left.dist == REPLICATED and right.dist == REPLICATED:
        d = REPLICATED
    elif left.dist.whole and right.dist.whole:
        d = SINGLE
    elif node.kind == "union" and node.all:
        left, right, d = to_spread(left), to_spread(right), PARTITIONED
    else:
        # equal rows meet on one rank: both sides hashed on all their columns
        left = to_hash(left, tuple(ColRef(f) for f in node.left.schema))
        right = to_hash(right, tuple(ColRef(f) for f in node.right.schema))
        d = hashed(tuple(ColRef(f) for f in node.fields))
    return Planned(
        SetOpExec(left.node, right.node, node.kind, node.all, node.fields, node.left.schema, node.right.schema, est), d
    )


# ------------------------------------------------------------------ joins
@_plan.register
def _(node: L.Join, ctx):
    keys = join_keys(node)
    left, right = _plan(node.left, ctx), _plan(node.right, ctx)
    kind = node.kind
    # a NOT IN / IN-mark decides per outer row from all inner rows with equal
    # other keys (NULLs of the IN key included): the IN key cannot partition
    null_aware = node.null_aware is not None and kind in ("anti", "mark")
    ids = keys.other_keys() if null_aware else list(range(len(keys.left)))
    lkeys, rkeys = tuple(keys.left[i] for i in ids), tuple(keys.right[i] for i in ids)
    lb, rb, m = ctx.nbytes(node.left), ctx.nbytes(node.right), ctx.cost

    keep = _Move(lambda p: p, lambda p, b: 0.0, lambda p: p.dist, "keep")
    rep = _Move(
        to_replicated,
        lambda p, b: 0.0 if p.dist == REPLICATED else m.broadcast_from_root(b) if p.dist == SINGLE else m.broadcast(b),
        lambda p: REPLICATED,
        "rep",
    )
    single = _Move(
        to_single, lambda p, b: 0.0 if p.dist.whole else m.gather(b) + SINGLE_PENALTY * b, lambda p: SINGLE, "single"
    )

    def hash_on(k):
        return _Move(
            lambda p: to_hash(p, k),
            lambda p, b: (
                0.0 if p.dist in (hashed(k), REPLICATED) else m.gather(b) if p.dist == SINGLE else m.shuffle(b)
            ),
            lambda p: hashed(k),
            "hash",
            k,
        )

    options = [(keep, keep), (keep, rep), (rep, keep)]
    if ids:
        options.append((hash_on(lkeys), hash_on(rkeys)))
        for side, d in ((0, left.dist), (1, right.dist)):
            sub = _matching_keys(d, keys.left if side == 0 else keys.right, ids)
            if sub is not None:  # one side hashed on some of the keys: the other follows it
                lk, rk = tuple(keys.left[i] for i in sub), tuple(keys.right[i] for i in sub)
                options.append((keep, hash_on(rk)) if side == 0 else (hash_on(lk), keep))
    options += [(single, single), (rep, rep)]

    costed = [
        (lo.cost(left, lb) + ro.cost(right, rb), lo, ro)
        for lo, ro in options
        if _joined(lo.dist(left), ro.dist(right), kind, keys, ids) is not None
    ]
    best = min(costed, key=lambda c: c[0])  # the cheapest correct one; ties go to the earlier
    adaptive = _adaptive(node, ctx, keys, ids, left, right, costed, best)
    if adaptive is not None:
        return adaptive
    _, lo, ro = best
    # each rank builds the side it holds fewer rows of (a scalar subquery: always the right)
    build_right = kind == "single" or ctx.rows_per_rank(node.right, ro.dist(right)) <= ctx.rows_per_rank(
        node.left, lo.dist(left)
    )
    kept = _skew_kept(node, build_right, (lo, left), (ro, right))
    if ctx.options.skew_joins == "always" and kept is not None:
        # (the heavy keys' rows are then not where their hash says: only ``partitioned``)
        join = join_exec(node, left.node, right.node, keys, build_right, ctx.rows(node))
        return Planned(SkewJoinExec.of(join, left_shuffle=lo.keys, right_shuffle=ro.keys, kept=kept), PARTITIONED)
    left, right = lo.apply(left), ro.apply(right)
    out = _joined(left.dist, right.dist, kind, keys, ids)
    return Planned(join_exec(node, left.node, right.node, keys, build_right, ctx.rows(node)), out)


@dataclass(frozen=True, slots=True)
class _Move:
    """A way to bring a join input where the join needs it: the change, its
    cost for an input of b bytes, the distribution it gives, what it is
    (keep | rep | single | hash) and the keys it hashes on."""

    apply: Callable[[Planned], Planned]
    cost: Callable[[Planned, float], float]
    dist: Callable[[Planned], Distribution]
    name: str
    keys: tuple = ()


def _adaptive(node: L.Join, ctx: _Ctx, keys, ids, left: Planned, right: Planned, costed, best) -> Planned | None:
    """An AdaptiveJoinExec when the cheapest way is broadcasting a side or
    shuffling, both are correct, both inputs are spread, and (unless
    ``adaptive_joins`` is "always") the side to broadcast has an estimated
    size: the ranks then choose between the cheapest of each from its actual
    size. The output is spread like the probe when both ways give that,
    else ``partitioned``."""
    mode = ctx.options.adaptive_joins
    if mode == "never" or ctx.ranks < 2 or not (left.dist.spread and right.dist.spread):
        return None
    bcast = [c for c in costed if {c[1].name, c[2].name} == {"keep", "rep"}]
    shuffle = [
        c
        for c in costed
        if {c[1].name, c[2].name} <= {"keep", "hash"}
        and any(mv.name == "hash" and p.dist != mv.dist(p) for mv, p in ((c[1], left), (c[2], right)))
    ]
    if not bcast or not shuffle or not any(best is c for c in bcast + shuffle):
        return None
    b, s = min(bcast, key=lambda c: c[0]), min(shuffle, key=lambda c: c[0])
    right_built = b[2].name == "rep"
    held, probe = (node.right, node.left) if right_built else (node.left, node.right)
    if mode != "always" and _exact_rows(held):
        return None  # its size is known: the run-time choice would be the planner's
    moved = [mv.keys if mv.name == "hash" and p.dist != mv.dist(p) else None for mv, p in ((s[1], left), (s[2], right))]
    by_broadcast = _joined(
        left.dist if right_built else REPLICATED, REPLICATED if right_built else right.dist, node.kind, keys, ids
    )
    by_shuffle = _joined(s[1].dist(left), s[2].dist(right), node.kind, keys, ids)
    join = join_exec(node, left.node, right.node, keys, right_built, ctx.rows(node))
    kept = _skew_kept(node, right_built, (s[1], left), (s[2], right)) if ctx.options.skew_joins != "never" else None
    return Planned(
        AdaptiveJoinExec.of(
            join,
            left_shuffle=moved[0],
            right_shuffle=moved[1],
            probe_rows=ctx.rows(probe),
            probe_bytes=ctx.nbytes(probe),
            row_bytes=row_bytes(held.schema),
            hosts=ctx.cost.hosts,
            kept=kept,
        ),
        by_broadcast if by_broadcast == by_shuffle else PARTITIONED,
    )


def _skew_kept(node: L.Join, build_right: bool, *sides: tuple[_Move, Planned]) -> str | None:
    """The side whose heavy keys may stay (:mod:`glint.distributed.skew_join`)
    when each side is spread and shuffled on the keys by its move, else None."""
    if not all(mv.name == "hash" and p.dist.spread and p.dist != mv.dist(p) for mv, p in sides):
        return None
    return kept_side(node.kind, build_right, node.null_aware)


def _exact_rows(node: L.LogicalNode) -> bool:
    """Whether the estimate of the node's rows is exact: a table's columns."""
    if isinstance(node, L.Project):
        return _exact_rows(node.child)
    return isinstance(node, L.Scan)


def _matching_keys(d: Distribution, side_keys: tuple, ids: list[int]) -> list[int] | None:
    """Positions i (among ``ids``) with d.keys == side_keys[i...], or None."""
    if d.kind != "hash":
        return None
    out = []
    for k in d.keys:
        i = next((i for i in ids if side_keys[i] == k and i not in out), None)
        if i is None:
            return None
        out.append(i)
    return out


def _joined(dl: Distribution, dr: Distribution, kind: str, keys, ids: list[int]) -> Distribution | None:
    """The join's output distribution when it may run on inputs spread like
    this without moving rows, else None."""
    if dl == REPLICATED and dr == REPLICATED:
        return REPLICATED
    if dl.whole and dr.whole:
        return SINGLE
    if dl.spread and dr == REPLICATED and kind in LEFT_KEEPING:
        return dl
    if dl == REPLICATED and dr.spread and kind in RIGHT_KEEPING:
        return dr
    if dl.kind == "hash" and dr.kind == "hash":
        sub = _matching_keys(dl, keys.left, ids)
        if sub is not None and dr.keys == tuple(keys.right[i] for i in sub):
            if kind in LEFT_KEEPING:
                return dl
            return dr if kind == "right" else PARTITIONED
    return None
