"""The window functions of the registry: ranking (row_number, rank,
dense_rank, percent_rank, cume_dist, ntile) and value functions (lag, lead,
first_value, last_value, nth_value), with their binding rules and their
evaluators. The aggregates' window forms are with the aggregates
(glint.functions.aggregates.windowed).

An evaluator takes (the window call: glint.plan.logical.WindowFunc, its
arguments in sorted order, the sorted rows: glint.exec.window.SortedRows,
with each row's position, its partition's and its peer group's bounds, and
its frame) and returns its column in sorted order.

>>> from glint.functions.registry import CallSite
>>> from glint.plan.expr import ColRef, Field
>>> x = ColRef(Field(1, "x", T.DOUBLE))
>>> _bind_shift("lag")([x, Literal(2, T.INTEGER)], CallSite("LAG"))
('lag', (x#1, CAST(2 AS BIGINT), NULL), DOUBLE)
"""

from __future__ import annotations

import torch

from glint.columnar import types as T
from glint.columnar.column import Column
from glint.errors import BinderError, ExecutionError, TypeMismatch
from glint.functions.conditional import choose
from glint.functions.registry import WINDOW, Function
from glint.kernels import window as K
from glint.plan import typing as ty
from glint.plan.expr import Expr, Literal


# ------------------------------------------------------------------ evaluators
def _row_number(w, args, r) -> Column:
    return Column(T.BIGINT, r.pos - r.part_start + 1)


def _rank(w, args, r) -> Column:
    return Column(T.BIGINT, r.peer_start - r.part_start + 1)


def _dense_rank(w, args, r) -> Column:
    group = torch.cumsum(r.peers.long(), 0)
    return Column(T.BIGINT, group - group[r.part_start] + 1)


def _percent_rank(w, args, r) -> Column:
    size = (r.part_end - r.part_start).double()
    rank = (r.peer_start - r.part_start).double()
    return Column(T.DOUBLE, torch.where(size > 1, rank / (size - 1).clamp(min=1), 0.0))


def _cume_dist(w, args, r) -> Column:
    return Column(T.DOUBLE, (r.peer_end - r.part_start).double() / (r.part_end - r.part_start).double())


def _ntile(w, args, r) -> Column:
    (k,) = args
    valid = k.validity()
    if bool(((k.data <= 0) & valid).any()):
        raise ExecutionError("Invalid Input Error: Argument for ntile must be greater than zero")
    # DuckDB's split: the first (size % buckets) buckets hold one row more
    size = r.part_end - r.part_start
    buckets = torch.minimum(k.data.clamp(min=1), size.clamp(min=1))
    small = size // buckets
    large = size - buckets * small
    first_small = large * (small + 1)
    i = r.pos - r.part_start
    tile = torch.where(i < first_small, 1 + i // (small + 1), 1 + large + (i - first_small) // small.clamp(min=1))
    return Column(T.BIGINT, tile, k.valid)


def _shift(sign: int):
    def run(w, args, r) -> Column:
        x, offset, default = args
        n = r.pos.shape[0]
        step = sign * offset.data
        if w.ignore_nulls and x.valid is not None:
            # the |step|-th non-NULL row before (after) this one, inside the partition
            m = K.MarkedRows(x.valid)
            back = m.before[r.pos] + step
            ahead = m.before[r.pos + 1] + step - 1
            k = torch.where(step < 0, back, ahead)
            inside = torch.where(step < 0, back >= m.before[r.part_start], ahead < m.before[r.part_end])
            target = torch.where(step == 0, r.pos, m.row(k))
            inside = inside | (step == 0)
        else:
            target = r.pos + step
            inside = (target >= r.part_start) & (target < r.part_end)
        value = x.take(target.clamp(min=0, max=max(n - 1, 0)))
        out = choose(inside, value, default, w.type)
        if offset.valid is not None:  # a NULL offset gives NULL
            out = Column(w.type, out.data, out.validity() & offset.valid, out.dictionary)
        return out

    return run


def _value_at(which: str):
    """FIRST_VALUE, LAST_VALUE, NTH_VALUE: the value at a position of the frame
    (NULL when the frame has no such row; NULLs in the column count as rows)."""

    def run(w, args, r) -> Column:
        x = args[0]
        pieces = r.frame_pieces(w.frame)
        marked = K.MarkedRows(x.valid) if w.ignore_nulls and x.valid is not None else None
        if marked is not None:  # count the frame's non-NULL rows only
            pieces = [(marked.before[lo], marked.before[hi]) for lo, hi in pieces]
        if which == "nth":
            k = torch.where(args[1].validity(), args[1].data, 0)
        elif which == "first":
            k = torch.ones_like(r.pos)
        else:
            k = sum(hi - lo for lo, hi in pieces)
        at = K.kth_in_pieces(pieces, k)
        ok = at >= 0
        if marked is not None:
            at = marked.row(at)
        v = x.take(at.clamp(min=0, max=max(r.pos.shape[0] - 1, 0)))
        return Column(x.dtype, v.data, v.validity() & ok, x.dictionary)

    return run


# ------------------------------------------------------------------ bind rules
def integer_arg(e: Expr | None, fn: str, what: str) -> Expr:
    if e is None:
        raise BinderError(f"{fn} needs an argument")
    if e.type.kind == "NULL":
        return Literal(None, T.BIGINT)
    if not e.type.is_numeric:
        raise TypeMismatch(f"Type mismatch: the {what} of {fn} must be a number, got {ty.show(e)} of type {e.type}")
    return ty.cast(e, T.BIGINT)  # as DuckDB: 1.5 rounds to 2


def _bind_ranking(name: str, out: T.DataType):
    def bind(args, site):
        if len(args):
            raise BinderError(f"{name}() takes no arguments")
        return name, (), out

    return bind


def _bind_ntile(args, site):
    n = integer_arg(args[0] if len(args) else None, "NTILE", "argument")
    return "ntile", (n,), T.BIGINT


def _bind_shift(name: str):
    """lag / lead (x [, offset [, default]])."""

    def bind(args, site):
        x = args[0]
        off = args[1] if len(args) > 1 else None
        offset = integer_arg(off, name.upper(), "offset") if off is not None else Literal(1, T.BIGINT)
        d = args[2] if len(args) > 2 else None
        default = ty.cast(d, x.type) if d is not None else Literal(None, x.type)
        return name, (x, offset, default), x.type

    return bind


def _bind_nth_value(args, site):
    x = args[0]
    return "nth_value", (x, integer_arg(args[1], "NTH_VALUE", "position")), x.type


def _bind_value(name: str):
    def bind(args, site):
        x = args[0]
        return name, (x,), x.type

    return bind


# ------------------------------------------------------------------ the functions
def _window(name, signature, doc, bind, evaluate, ignore_nulls=False):
    return Function(name, WINDOW, "windows", signature, doc, bind=bind, evaluate=evaluate, ignore_nulls=ignore_nulls)


FUNCTIONS = [
    _window(
        "row_number",
        "row_number() -> BIGINT",
        "The row's number in its partition, from 1.",
        _bind_ranking("row_number", T.BIGINT),
        _row_number,
    ),
    _window(
        "rank",
        "rank() -> BIGINT",
        "The row's rank with gaps (peers share the first's number).",
        _bind_ranking("rank", T.BIGINT),
        _rank,
    ),
    _window(
        "dense_rank",
        "dense_rank() -> BIGINT",
        "The row's rank without gaps.",
        _bind_ranking("dense_rank", T.BIGINT),
        _dense_rank,
    ),
    _window(
        "percent_rank",
        "percent_rank() -> DOUBLE",
        "(rank - 1) / (rows in the partition - 1).",
        _bind_ranking("percent_rank", T.DOUBLE),
        _percent_rank,
    ),
    _window(
        "cume_dist",
        "cume_dist() -> DOUBLE",
        "Rows up to the row's last peer / rows in the partition.",
        _bind_ranking("cume_dist", T.DOUBLE),
        _cume_dist,
    ),
    _window(
        "ntile",
        "ntile(BIGINT buckets) -> BIGINT",
        "The row's bucket, the partition split into that many.",
        _bind_ntile,
        _ntile,
    ),
    _window(
        "lag",
        "lag(x [, BIGINT offset [, default]]) [IGNORE NULLS]",
        "x offset rows before (default when there is none).",
        _bind_shift("lag"),
        _shift(-1),
        ignore_nulls=True,
    ),
    _window(
        "lead",
        "lead(x [, BIGINT offset [, default]]) [IGNORE NULLS]",
        "x offset rows after (default when there is none).",
        _bind_shift("lead"),
        _shift(1),
        ignore_nulls=True,
    ),
    _window(
        "first_value",
        "first_value(x) [IGNORE NULLS]",
        "x at the frame's first row.",
        _bind_value("first_value"),
        _value_at("first"),
        ignore_nulls=True,
    ),
    _window(
        "last_value",
        "last_value(x) [IGNORE NULLS]",
        "x at the frame's last row.",
        _bind_value("last_value"),
        _value_at("last"),
        ignore_nulls=True,
    ),
    _window(
        "nth_value",
        "nth_value(x, BIGINT n) [IGNORE NULLS]",
        "x at the frame's n-th row (NULL when it has fewer).",
        _bind_nth_value,
        _value_at("nth"),
        ignore_nulls=True,
    ),
]
