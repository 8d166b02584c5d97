"""LIMIT / OFFSET."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .base import PhysicalNode


@dataclass(frozen=True, slots=True, eq=False)
class LimitExec(PhysicalNode):
    child: PhysicalNode
    limit: int | None
    offset: int = 0
    est_rows: float = 0.0

    def describe(self):
        return f"Limit {self.limit if self.limit is not None else 'ALL'} OFFSET {self.offset}"

    def execute(self, ctx, batch):
        start = min(self.offset, batch.num_rows)
        stop = batch.num_rows if self.limit is None else min(batch.num_rows, start + self.limit)
        return batch.take(torch.arange(start, stop, device=batch.device))
