"""Hash join of every kind (inner, left, right, full, semi, anti, mark, single).

Matching works on int64-encoded keys (kernels.keys) with a sorted build side
(kernels.join); a residual predicate then filters the candidate pairs. Each
join kind is a different way of turning the surviving pairs into output rows.
Joins without equality keys enumerate pairs in bounded chunks (nested loop).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import types as T
from ..errors import ExecutionError
from ..kernels.join import build_side, expand_matches, match_counts
from ..kernels.keys import encode_keys
from ..plan.expr import Expr, Field
from ..storage.column import Batch, Column
from .base import PhysicalNode
from .expr_eval import evaluate, predicate_mask

PAIR_CHUNK = 1 << 26     # candidate pairs materialised at once (2 x 512 MiB of row ids)


@dataclass(frozen=True, slots=True, eq=False)
class HashJoinExec(PhysicalNode):
    left: PhysicalNode
    right: PhysicalNode
    kind: str
    left_keys: tuple[Expr, ...]
    right_keys: tuple[Expr, ...]
    residual: Expr | None
    left_fields: tuple[Field, ...]
    right_fields: tuple[Field, ...]
    mark: Field | None = None
    null_aware: tuple[Expr, Expr] | None = None   # (outer x, inner y) of IN / NOT IN
    in_key: int = -1                               # which key pair is x = y
    build_right: bool = True
    est_rows: float = 0.0

    def describe(self):
        keys = ", ".join(f"{a!r} = {b!r}" for a, b in zip(self.left_keys, self.right_keys))
        res = f" residual {self.residual!r}" if self.residual is not None else ""
        na = " null-aware" if self.null_aware else ""
        name = "HashJoin" if self.left_keys else "NestedLoopJoin"
        side = "right" if self.build_right else "left"
        return f"{name} {self.kind.upper()}{na} [{keys}]{res} build={side}"

    def execute(self, ctx, lb: Batch, rb: Batch) -> Batch:
        kind = self.kind
        nl, nr = lb.num_rows, rb.num_rows
        all_keys = range(len(self.left_keys))
        if kind in ("semi", "anti", "mark"):
            # only whether each left row matches: no pair list is kept
            matched_l = torch.zeros(nl, dtype=torch.bool, device=lb.device)
            for li, _ in self._pairs(lb, rb, all_keys, self.residual):
                matched_l[li] = True
            if kind == "semi":
                return lb.take(matched_l.nonzero().squeeze(1))
            mark = self._mark(lb, rb, matched_l)
            if kind == "mark":
                out = Batch(dict(lb.columns), nl, lb.device)
                out.columns[self.mark.id] = mark
                return out
            keep = ~mark.data & mark.validity()
            return lb.take(keep.nonzero().squeeze(1))
        chunks = list(self._pairs(lb, rb, all_keys, self.residual))
        li = torch.cat([c[0] for c in chunks]) if chunks else torch.zeros(0, dtype=torch.int64, device=lb.device)
        ri = torch.cat([c[1] for c in chunks]) if chunks else li.clone()
        if kind == "inner":
            return _combine(lb, li, rb, ri)
        matched_l = _hit(li, nl)
        if kind == "single":
            per_left = torch.zeros(nl, dtype=torch.int64, device=lb.device)
            if li.numel():
                per_left.scatter_add_(0, li, torch.ones_like(li))
                if bool((per_left > 1).any()):
                    raise ExecutionError("More than one row returned by a subquery used as an expression")
            kind = "left"
        dev = lb.device
        parts_l, parts_r = [li], [ri]
        if kind in ("left", "full"):
            miss = (~matched_l).nonzero().squeeze(1)
            parts_l.append(miss)
            parts_r.append(torch.full_like(miss, -1))
        if kind in ("right", "full"):
            miss = (~_hit(ri, nr)).nonzero().squeeze(1)
            parts_l.append(torch.full_like(miss, -1))
            parts_r.append(miss)
        return _combine(lb, torch.cat(parts_l).to(dev), rb, torch.cat(parts_r).to(dev), nullable=True)

    # -------------------------------------------------------------- matching
    def _pairs(self, lb, rb, key_ids, residual):
        """(left rows, right rows) of the matching pairs that pass the
        residual, in chunks of at most PAIR_CHUNK candidate pairs."""
        key_ids = list(key_ids)
        if not key_ids:
            yield from _nested_loop(lb, rb, residual)
            return
        lcols = [evaluate(self.left_keys[i], lb) for i in key_ids]
        rcols = [evaluate(self.right_keys[i], rb) for i in key_ids]
        (lk, lv), (rk, rv) = encode_keys([lcols, rcols])
        if self.build_right:
            b = build_side(rk, rv)
            lo, counts = match_counts(b, lk, lv)
        else:
            b = build_side(lk, lv)
            lo, counts = match_counts(b, rk, rv)
        for start, stop in _chunk_bounds(counts, PAIR_CHUNK):
            probe, built = expand_matches(b, lo[start:stop], counts[start:stop])
            probe = probe + start
            li, ri = (probe, built) if self.build_right else (built, probe)
            if residual is not None and li.numel():
                keep = _residual_mask(residual, lb, li, rb, ri)
                li, ri = li[keep], ri[keep]
            yield li, ri

    def _mark(self, lb, rb, matched_l) -> Column:
        """TRUE where a match exists; for IN / NOT IN, NULL instead of FALSE
        where x is NULL or a NULL y could have matched."""
        nl = lb.num_rows
        if self.null_aware is None:
            return Column(T.BOOLEAN, matched_l)
        x = evaluate(self.null_aware[0], lb)
        y = evaluate(self.null_aware[1], rb)
        if x.valid is None and y.valid is None:
            return Column(T.BOOLEAN, matched_l)
        other = [i for i in range(len(self.left_keys)) if i != self.in_key]
        if not other and self.residual is None:
            any_inner = torch.full((nl,), rb.num_rows > 0, dtype=torch.bool, device=lb.device)
            null_y = torch.full((nl,), bool((~y.validity()).any()) if rb.num_rows else False,
                                dtype=torch.bool, device=lb.device)
        else:
            # the rows of the subquery that the correlation conditions alone admit
            any_inner = torch.zeros(nl, dtype=torch.bool, device=lb.device)
            null_y = torch.zeros(nl, dtype=torch.bool, device=lb.device)
            yv = y.validity()
            for li, ri in self._pairs(lb, rb, other, self.residual):
                any_inner[li] = True
                null_y[li[~yv[ri]]] = True
        unknown = ~matched_l & ((~x.validity() & any_inner) | null_y)
        return Column(T.BOOLEAN, matched_l, ~unknown)


def _hit(idx: torch.Tensor, n: int) -> torch.Tensor:
    out = torch.zeros(n, dtype=torch.bool, device=idx.device)
    if idx.numel():
        out[idx] = True
    return out


def _residual_mask(residual, lb, li, rb, ri) -> torch.Tensor:
    need = {f.id for f in residual.fields()}
    cols = {k: c.take(li) for k, c in lb.columns.items() if k in need}
    cols.update({k: c.take(ri) for k, c in rb.columns.items() if k in need})
    return predicate_mask(evaluate(residual, Batch(cols, int(li.shape[0]), lb.device)))


def _chunk_bounds(counts: torch.Tensor, budget: int):
    """Probe-row ranges whose matches add up to about `budget` pairs each (one
    host synchronisation when everything fits, two otherwise)."""
    n = counts.shape[0]
    total = int(counts.sum()) if n else 0
    if total <= budget:
        return [(0, n)] if total else []
    csum = torch.cumsum(counts, 0)
    marks = torch.arange(1, (total + budget - 1) // budget, device=counts.device, dtype=csum.dtype) * budget
    cuts = torch.searchsorted(csum, marks, right=True).tolist()
    bounds = [0] + [c for c in cuts if 0 < c < n] + [n]
    bounds = sorted(set(bounds))
    return list(zip(bounds[:-1], bounds[1:]))


def _nested_loop(lb, rb, residual):
    """All pairs (that pass the residual), a chunk of left rows at a time."""
    nl, nr = lb.num_rows, rb.num_rows
    dev = lb.device
    if nl == 0 or nr == 0:
        return
    step = max(1, PAIR_CHUNK // nr)
    right_idx = torch.arange(nr, device=dev)
    for start in range(0, nl, step):
        stop = min(nl, start + step)
        li = torch.arange(start, stop, device=dev).repeat_interleave(nr)
        ri = right_idx.repeat(stop - start)
        if residual is not None:
            keep = _residual_mask(residual, lb, li, rb, ri)
            li, ri = li[keep], ri[keep]
        yield li, ri


def take_nullable(c: Column, idx: torch.Tensor, n_src: int) -> Column:
    """Gather where idx == -1 yields NULL."""
    if n_src == 0:
        return Column.nulls(c.dtype, idx.shape[0], idx.device)
    miss = idx < 0
    g = c.take(idx.clamp(min=0))
    valid = ~miss if g.valid is None else g.valid & ~miss
    return Column(g.dtype, g.data, valid, g.dictionary)


def _combine(lb: Batch, li, rb: Batch, ri, nullable: bool = False) -> Batch:
    n = int(li.shape[0])
    cols = {}
    for side, idx in ((lb, li), (rb, ri)):
        for k, c in side.columns.items():
            cols[k] = take_nullable(c, idx, side.num_rows) if nullable else c.take(idx)
    return Batch(cols, n, lb.device)
