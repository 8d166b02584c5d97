"""Table scan: the table's columns on the execution device (copied there once
and kept, so warm runs read resident data)."""
from __future__ import annotations

from dataclasses import dataclass

from ..plan.expr import Field
from ..storage.column import Batch
from .base import PhysicalNode


@dataclass(frozen=True, slots=True, eq=False)
class ScanExec(PhysicalNode):
    table: str
    columns: tuple[str, ...]
    fields: tuple[Field, ...]
    est_rows: float = 0.0

    def describe(self):
        return f"Scan {self.table} [{', '.join(self.columns)}]"

    def execute(self, ctx, *inputs):
        t = ctx.catalog.table(self.table)
        t.load(self.columns)
        cols = {f.id: t.column(c, ctx.device) for c, f in zip(self.columns, self.fields)}
        return Batch(cols, t.num_rows, ctx.device)


@dataclass(frozen=True, slots=True, eq=False)
class OneRowExec(PhysicalNode):
    est_rows: float = 1.0

    def describe(self):
        return "OneRow"

    def execute(self, ctx, *inputs):
        return Batch({}, 1, ctx.device)
