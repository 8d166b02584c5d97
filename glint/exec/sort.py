"""ORDER BY, and ORDER BY ... LIMIT as a top-k."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ..kernels.sort import float_order_key, lexsort
from ..plan.logical import SortKey
from .base import PhysicalNode
from .expr_eval import evaluate
from .functions import strings


def order_values(c) -> torch.Tensor:
    """What to sort a column's rows by: its data, or for strings their byte-order ranks."""
    return strings.order_ranks(c) if c.dtype.is_string else c.data


def sort_order(keys: tuple[SortKey, ...], batch) -> torch.Tensor:
    spec = []
    for k in keys:
        c = evaluate(k.expr, batch)
        spec.append((order_values(c), c.valid, k.descending, k.nulls_first))
    return lexsort(spec)


@dataclass(frozen=True, slots=True, eq=False)
class SortExec(PhysicalNode):
    child: PhysicalNode
    keys: tuple[SortKey, ...]
    est_rows: float = 0.0

    def describe(self):
        return "Sort " + ", ".join(map(repr, self.keys))

    def execute(self, ctx, batch):
        if batch.num_rows <= 1:
            return batch
        return batch.take(sort_order(self.keys, batch))


@dataclass(frozen=True, slots=True, eq=False)
class TopKExec(PhysicalNode):
    """The first `limit` rows (after `offset`) in key order, without sorting
    every row when one numeric key decides: torch.topk picks the candidates."""
    child: PhysicalNode
    keys: tuple[SortKey, ...]
    limit: int
    offset: int = 0
    est_rows: float = 0.0

    def describe(self):
        return f"TopK {self.limit} OFFSET {self.offset} BY " + ", ".join(map(repr, self.keys))

    def execute(self, ctx, batch):
        n = batch.num_rows
        k = min(n, self.limit + self.offset)
        if len(self.keys) == 1 and k < n // 4:
            key = self.keys[0]
            c = evaluate(key.expr, batch)
            if c.valid is None and c.data.dim() == 1 and c.data.dtype != torch.bool:
                data = order_values(c)
                data = float_order_key(data) if data.is_floating_point() else data
                _, cand = torch.topk(data, k, largest=key.descending, sorted=False)
                batch = batch.take(cand)
        order = sort_order(self.keys, batch)
        return batch.take(order[self.offset: self.offset + self.limit])
