"""Logical plan -> physical operators: one function per logical node type.

Here the join algorithm is fixed (hash join on the equality conjuncts, a
nested loop when there are none), the build side chosen from the cardinality
estimates, and ORDER BY + LIMIT fused into a top-k.
"""

from __future__ import annotations

import dataclasses
import functools

from glint.columnar import types as T
from glint.exec.aggregate import HashAggregateExec, decomposable
from glint.exec.base import PhysicalNode
from glint.exec.filter import FilterExec
from glint.exec.join import JoinExec
from glint.exec.limit import LimitExec
from glint.exec.project import ProjectExec
from glint.exec.recursive import RecursiveCTEExec, WorkingTableExec
from glint.exec.scan import OneRowExec, ScanExec
from glint.exec.series import SeriesExec, SeriesPerRowExec
from glint.exec.set_ops import SetOpExec
from glint.exec.sort import SortExec, TopKExec
from glint.exec.values import ValuesExec
from glint.exec.window import WindowExec
from glint.plan import logical as L
from glint.plan.cardinality import Estimator
from glint.plan.expr import Call, ColRef, Expr, Literal, conjoin, conjuncts
from glint.plan.typing import cast


def plan_physical(plan: L.LogicalNode, catalog) -> PhysicalNode:
    est = Estimator(catalog)
    return _plan(plan, est)


@functools.singledispatch
def _plan(node, est) -> PhysicalNode:
    raise TypeError(f"no physical operator for {type(node).__name__}")


@_plan.register
def _(node: L.Scan, est):
    return scan_exec(node, est)


def scan_exec(node: L.Scan, est) -> ScanExec:
    est.catalog.table(node.table).check_readable(node.columns)
    return ScanExec(node.table, node.columns, node.fields, est_rows=est.rows(node))


@_plan.register
def _(node: L.OneRow, est):
    return OneRowExec()


@_plan.register
def _(node: L.Values, est):
    return ValuesExec(node.rows, node.fields, float(len(node.rows)))


@_plan.register
def _(node: L.RecursiveCTE, est):
    left, right = _plan(node.left, est), _plan(node.right, est)
    return RecursiveCTEExec(
        left, right, node.all, node.fields, node.left.schema, node.right.schema, node.key, est.rows(node)
    )


@_plan.register
def _(node: L.WorkingTable, est):
    return WorkingTableExec(node.key, node.fields, est.rows(node))


@_plan.register
def _(node: L.SeriesPerRow, est):
    return SeriesPerRowExec(
        _plan(node.child, est),
        node.start,
        node.stop,
        node.step,
        node.inclusive,
        node.field,
        node.keep_empty,
        est.rows(node),
    )


@_plan.register
def _(node: L.Series, est):
    return SeriesExec(node.start, node.step, node.count, node.field, float(node.count))


@_plan.register
def _(node: L.Filter, est):
    return filter_exec(node, _plan(node.child, est), est)


def filter_exec(node: L.Filter, child: PhysicalNode, est) -> FilterExec:
    """The filter over its planned input; a scan right below skips the chunks
    whose statistics rule the predicate out."""
    if isinstance(child, ScanExec):
        prune = chunk_pruning(node.predicate, node.child)
        if prune:
            child = dataclasses.replace(child, prune=prune)
    return FilterExec(child, node.predicate, est.rows(node))


_PRUNE_OPS = {"eq": "eq", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}
_FLIP = {"eq": "eq", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


def chunk_pruning(predicate, scan: L.Scan) -> tuple:
    """The conjuncts ``column op constant`` (and ``column IN (constants)``) of a
    filter right above a scan, as (table column, op, value) for skipping
    chunks by their min/max statistics. Values are in the column's own
    representation (DECIMAL scaled to the column's scale, DATE as days,
    TIMESTAMP as microseconds)."""
    by_id = {f.id: (c, f) for c, f in zip(scan.columns, scan.fields)}
    out = []
    for c in conjuncts(predicate):
        if not isinstance(c, Call):
            continue
        if c.fn in _PRUNE_OPS and len(c.args) == 2:
            a, b = c.args
            op = c.fn
            if isinstance(a, Literal) and isinstance(b, ColRef):
                a, b, op = b, a, _FLIP[op]
            if isinstance(a, ColRef) and isinstance(b, Literal) and a.field.id in by_id:
                v = _prune_value(b, by_id[a.field.id][1].type)
                if v is not None:
                    out.append((by_id[a.field.id][0], op, v))
        elif (
            c.fn == "in_list"
            and isinstance(c.args[0], ColRef)
            and c.args[0].field.id in by_id
            and all(isinstance(x, Literal) for x in c.args[1:])
        ):
            t = by_id[c.args[0].field.id][1].type
            vals = [_prune_value(x, t) for x in c.args[1:]]
            if vals and all(v is not None for v in vals):
                out.append((by_id[c.args[0].field.id][0], "in", tuple(vals)))
    return tuple(out)


def _prune_value(lit: Literal, col_type):
    """The literal in the column's representation, or None when the two do not
    compare exactly (different DECIMAL scales, numbers against strings...)."""
    v, t = lit.value, lit.type
    if v is None or isinstance(v, bool):
        return None
    if col_type.is_string:
        return v if t.is_string and isinstance(v, str) else None
    if col_type.kind in ("DATE", "TIMESTAMP"):
        return v if t.kind == col_type.kind and isinstance(v, int) else None
    if col_type.is_decimal:
        if t.is_decimal and t.scale == col_type.scale and isinstance(v, int):
            return v
        if t.is_integer and isinstance(v, int):
            return v * 10**col_type.scale
        return None
    if col_type.is_integer:
        return v if (t.is_integer and isinstance(v, int)) else None
    return None  # DOUBLE: NaNs sort above every number and files leave them out of min/max


@_plan.register
def _(node: L.Project, est):
    return ProjectExec(
        narrow_join(narrow_filter(_plan(node.child, est), node.exprs), node.exprs), node.exprs, est.rows(node)
    )


def narrow_filter(child: PhysicalNode, exprs) -> PhysicalNode:
    """A filter right below a projection gathers only the columns the
    projection reads (a column read by the predicate alone, such as Q21's
    ``l_receiptdate > l_commitdate``, is not copied for the surviving rows)."""
    if not isinstance(child, FilterExec) or child.keep is not None:
        return child
    need = frozenset(f.id for _, e in exprs for f in e.fields())
    return dataclasses.replace(child, keep=need)


def narrow_join(child: PhysicalNode, exprs) -> PhysicalNode:
    """A join right below a projection gathers only the columns the
    projection reads for its rows (its keys, read by the matching alone, are
    not copied: a gather per column and row pair saved)."""
    if not isinstance(child, JoinExec) or child.keep is not None:
        return child
    need = frozenset(f.id for _, e in exprs for f in e.fields())
    return dataclasses.replace(child, keep=need) if need else child


@_plan.register
def _(node: L.Aggregate, est):
    child, where = _plan(node.child, est), None
    if node.grouping is None and decomposable(node.aggs):
        child, where = fold_filter(child)
    return HashAggregateExec(child, node.groups, node.aggs, est.rows(node), grouping=node.grouping, where=where)


# a filter folds into the aggregation above it when it is estimated to keep at least this
# fraction of its input: its mask then goes into the fused pass with every row (TPC-H Q1
# keeps 98%); where it keeps few rows (Q6's 2%), gathering them costs less than computing
# the aggregates' arguments over every row, and the filter stays
FOLD_MIN_KEPT = 0.5


def fold_filter(child: PhysicalNode) -> tuple[PhysicalNode, Expr | None]:
    """(input, predicate) of a filter right below an aggregation, to fold into
    it (HashAggregateExec.where), through a projection that only picks
    columns (the aggregate reads its columns by id); (child, None) otherwise."""
    below = child
    if isinstance(below, ProjectExec) and all(isinstance(e, ColRef) and e.field.id == f.id for f, e in below.exprs):
        below = below.child
    if isinstance(below, FilterExec) and below.est_rows >= FOLD_MIN_KEPT * below.child.est_rows:
        return below.child, below.predicate
    return child, None


@_plan.register
def _(node: L.Sort, est):
    return SortExec(_plan(node.child, est), node.keys, est.rows(node))


@_plan.register
def _(node: L.Window, est):
    return WindowExec(_plan(node.child, est), node.funcs, est.rows(node))


@_plan.register
def _(node: L.Limit, est):
    if isinstance(node.child, L.Sort) and node.limit is not None:
        s = node.child
        return TopKExec(_plan(s.child, est), s.keys, node.limit, node.offset, est.rows(node))
    return LimitExec(_plan(node.child, est), node.limit, node.offset, est.rows(node))


@_plan.register
def _(node: L.SetOp, est):
    return SetOpExec(
        _plan(node.left, est),
        _plan(node.right, est),
        node.kind,
        node.all,
        node.fields,
        node.left.schema,
        node.right.schema,
        est.rows(node),
    )


@_plan.register
def _(node: L.Join, est):
    keys = join_keys(node)
    left, right = _plan(node.left, est), _plan(node.right, est)
    # the smaller input is built (held whole); the larger one streams past it.
    # A scalar subquery (SINGLE) is always the built side.
    build_right = node.kind == "single" or est.rows(node.right) <= est.rows(node.left)
    return join_exec(node, left, right, keys, build_right, est.rows(node))


@dataclasses.dataclass(frozen=True, slots=True)
class JoinKeys:
    """A join condition split into equality keys and the rest. ``in_key``: the
    position of an IN's own equality among the keys (-1: none)."""

    left: tuple
    right: tuple
    residual: object
    in_key: int = -1

    def other_keys(self) -> list[int]:
        """Positions of the keys other than the IN's own equality."""
        return [i for i in range(len(self.left)) if i != self.in_key]


def join_keys(node: L.Join) -> JoinKeys:
    lids = {f.id for f in node.left.schema}
    rids = {f.id for f in node.right.schema}
    lkeys, rkeys, residual = [], [], []
    in_key = -1
    for c in conjuncts(node.condition):
        is_in = node.null_aware is not None and isinstance(c, Call) and c.args == tuple(node.null_aware)
        # the IN's own equality is always a key (even between constants); the others correlate
        pair = _same_scale(*c.args) if is_in else equi_key(c, lids, rids)
        if pair is None:
            residual.append(c)
            continue
        if is_in:
            in_key = len(lkeys)
        lkeys.append(pair[0])
        rkeys.append(pair[1])
    return JoinKeys(tuple(lkeys), tuple(rkeys), conjoin(residual), in_key)


def join_exec(
    node: L.Join, left: PhysicalNode, right: PhysicalNode, keys: JoinKeys, build_right: bool, est_rows: float
) -> JoinExec:
    return JoinExec(
        left,
        right,
        node.kind,
        keys.left,
        keys.right,
        keys.residual,
        node.left.schema,
        node.right.schema,
        node.mark,
        node.null_aware,
        keys.in_key,
        build_right,
        est_rows,
    )


def equi_key(c, lids: set[int], rids: set[int]):
    """(left expr, right expr) when c is an equality between the two sides."""
    if not (isinstance(c, Call) and c.fn == "eq"):
        return None
    a, b = c.args
    fa, fb = {f.id for f in a.fields()}, {f.id for f in b.fields()}
    if not fa and not fb:
        return None
    if fa <= lids and fb <= rids:
        return _same_scale(a, b)
    if fa <= rids and fb <= lids:
        return _same_scale(b, a)
    return None


def _same_scale(a, b):
    """Key expressions with one representation: exact numerics of different
    scales are compared at the larger scale (the cast checks for overflow)."""
    ta, tb = a.type, b.type
    if ta == tb or not ((ta.is_decimal or ta.is_integer) and (tb.is_decimal or tb.is_integer)):
        return a, b
    sa = ta.scale if ta.is_decimal else 0
    sb = tb.scale if tb.is_decimal else 0
    if sa == sb:
        return a, b
    s = max(sa, sb)
    return (a if sa == s else cast(a, T.DECIMAL(38, s))), (b if sb == s else cast(b, T.DECIMAL(38, s)))
