"""WITH RECURSIVE: the anchor's rows, then the recursive term run once per
step over the rows the step before it added (its working table), until a
step adds none.

The recursive term is an ordinary physical plan whose
:class:`WorkingTableExec` leaves stream the working table, which the
:class:`RecursiveCTEExec` keeps in the run's context (``ctx.working``) and
replaces before each step. With UNION (not UNION ALL) a step adds only the
rows that no step has produced before (NULLs equal), so a recursion over a
cycle ends. The rows stream out as each step makes them, so a LIMIT above
can stop an endless recursion; otherwise the connection's
``recursion_max_iterations`` and ``recursion_max_rows`` settings stop it
with an error.

>>> from glint.columnar import types as T
>>> from glint.exec.base import ExecContext
>>> from glint.exec.project import ProjectExec
>>> from glint.exec.filter import FilterExec
>>> from glint.exec.values import ValuesExec
>>> from glint.plan.expr import Call, ColRef, Field, Literal
>>> n, w, out = Field(1, "n", T.INTEGER), Field(2, "n", T.INTEGER), Field(3, "n", T.INTEGER)
>>> m = Field(4, "n", T.INTEGER)
>>> anchor = ValuesExec(((Literal(1, T.INTEGER),),), (n,))
>>> step = ProjectExec(
...     FilterExec(WorkingTableExec(7, (w,)), Call("lt", (ColRef(w), Literal(4, T.INTEGER)), T.BOOLEAN)),
...     ((m, Call("add", (ColRef(w), Literal(1, T.INTEGER)), T.INTEGER)),),
... )
>>> node = RecursiveCTEExec(anchor, step, True, (out,), (n,), (m,), 7)
>>> [v for b in ExecContext("cpu", None).open(node) for v in b[3].data.tolist()]
[1, 2, 3, 4]
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from glint.columnar.column import Batch, concat_batches, slice_batch
from glint.errors import ExecutionError
from glint.exec.base import PhysicalNode
from glint.exec.keys import encode_keys
from glint.kernels import groupby as G
from glint.kernels.join import build_side, match_counts
from glint.plan.expr import Field


@dataclass(frozen=True, slots=True, eq=False)
class RecursiveCTEExec(PhysicalNode):
    left: PhysicalNode
    right: PhysicalNode
    all: bool
    fields: tuple[Field, ...]
    left_fields: tuple[Field, ...]
    right_fields: tuple[Field, ...]
    key: int
    est_rows: float = 0.0

    def describe(self):
        return f"RecursiveCTE #{self.key} UNION{' ALL' if self.all else ''}"

    def _rename(self, b: Batch, fields) -> Batch:
        return Batch({f.id: b[g.id] for f, g in zip(self.fields, fields)}, b.num_rows, b.device)

    def stream(self, ctx, left, right):
        out = _Coalesce(ctx.chunk_rows)
        for b in self._steps(ctx, left, right):
            yield from out.add(b)
        yield from out.flush()

    def _steps(self, ctx, left, right):
        right.close()  # each step opens the recursive term afresh
        seen = None  # UNION: every row produced so far, one batch
        empty = None
        max_steps = ctx.settings.recursion_max_iterations
        max_rows = ctx.settings.recursion_max_rows
        produced = 0
        step_rows: list[Batch] = []
        for b in left:
            b = self._rename(b, self.left_fields)
            if empty is None:
                empty = slice_batch(b, 0, 0)
            if not self.all:
                b, seen = self._new_rows(b, seen)
            if b.num_rows:
                step_rows.append(b)
                produced += b.num_rows
                yield b
        if empty is not None and not step_rows:
            yield empty
        steps = 0
        try:
            while step_rows:
                steps += 1
                # whether the recursion ends depends on its values: the run's queued overflow
                # tests are read each step, so that a value that overflowed cannot keep it going
                ctx.verify_checks()
                if steps > max_steps:
                    raise ExecutionError(
                        f"WITH RECURSIVE: the recursion did not end after {max_steps:,} steps "
                        "(SET recursion_max_iterations = n raises the limit; a LIMIT on the query stops it too)"
                    )
                ctx.working[self.key] = ([f.id for f in self.fields], step_rows)
                step_rows = []
                for b in ctx.open(self.right):
                    b = self._rename(b, self.right_fields)
                    if not self.all:
                        b, seen = self._new_rows(b, seen)
                    if b.num_rows:
                        produced += b.num_rows
                        if produced > max_rows:
                            raise ExecutionError(
                                f"WITH RECURSIVE: the recursion made more than {max_rows:,} rows "
                                "(SET recursion_max_rows = n raises the limit)"
                            )
                        step_rows.append(b)
                        yield b
        finally:
            ctx.working.pop(self.key, None)

    def _new_rows(self, b: Batch, seen: Batch | None) -> tuple[Batch, Batch]:
        """(the rows of ``b`` that neither ``seen`` nor an earlier row of ``b``
        holds, ``seen`` with them added)."""
        if b.num_rows == 0:
            return b, seen if seen is not None else b
        cols = [b[f.id] for f in self.fields]
        ((key, _),) = encode_keys([cols], nulls_equal=True)
        _, _, first = G.group_ids(key)
        first, _ = torch.sort(first)
        b = b.take(first)
        if seen is not None and seen.num_rows:
            old = [seen[f.id] for f in self.fields]
            (sk, _), (bk, _) = encode_keys([old, [b[f.id] for f in self.fields]], nulls_equal=True)
            _, counts = match_counts(build_side(sk, None), bk, None)
            b = b.take((counts == 0).nonzero().squeeze(1))
        seen = b if seen is None else concat_batches([seen, b])
        return b, seen


class _Coalesce:
    """Batches gathered into fewer: the first goes out at once, then each
    output holds at least twice the rows of the one before (up to a chunk),
    so a LIMIT above sees rows after a few steps, and a recursion of many
    one-row steps makes few batches."""

    def __init__(self, chunk_rows: int):
        self.chunk_rows = max(1, chunk_rows)
        self.target = 1
        self.held: list[Batch] = []
        self.rows = 0

    def add(self, b: Batch):
        self.held.append(b)
        self.rows += b.num_rows
        if self.rows >= self.target:
            yield from self.flush()
            self.target = min(self.target * 2, self.chunk_rows)

    def flush(self):
        if self.held:
            batch = self.held[0] if len(self.held) == 1 else concat_batches(self.held)
            self.held, self.rows = [], 0
            yield batch


@dataclass(frozen=True, slots=True, eq=False)
class WorkingTableExec(PhysicalNode):
    """The rows the recursion's previous step added, as this leaf's columns."""

    key: int
    fields: tuple[Field, ...]
    est_rows: float = 0.0

    def describe(self):
        return f"WorkingTable #{self.key}"

    def stream(self, ctx):
        entry = ctx.working.get(self.key)
        if entry is None:
            raise ExecutionError(f"WorkingTable #{self.key} read outside its recursion")
        ids, batches = entry
        for b in batches:
            yield Batch({f.id: b[i] for f, i in zip(self.fields, ids)}, b.num_rows, b.device)
