"""Physical operators' common base and the per-execution context.

Operators are immutable descriptions; everything a run creates lives in the
:class:`ExecContext`, so one plan can run twice or on several devices. The
recursion lives here: :meth:`ExecContext.run` executes children, times the
operator and records its output rows for EXPLAIN ANALYZE.
"""
from __future__ import annotations

import time
from dataclasses import fields as dc_fields

import torch

from ..errors import OutOfMemory
from ..storage.column import Batch


class PhysicalNode:
    __slots__ = ()
    est_rows: float

    @property
    def children(self) -> tuple["PhysicalNode", ...]:
        return tuple(getattr(self, f.name) for f in dc_fields(self) if f.name in ("child", "left", "right"))

    def describe(self) -> str:
        raise NotImplementedError

    def execute(self, ctx: "ExecContext", *inputs: Batch) -> Batch:
        raise NotImplementedError

    def explain(self, indent: int = 0, analyze: dict | None = None) -> str:
        extra = f"  (~{self.est_rows:,.0f} rows)"
        if analyze is not None and id(self) in analyze:
            rows, secs = analyze[id(self)]
            extra += f"  [actual {rows:,} rows, {secs * 1e3:.2f} ms]"
        out = ["  " * indent + self.describe() + extra]
        out += [c.explain(indent + 1, analyze) for c in self.children]
        return "\n".join(out)


class ExecContext:
    def __init__(self, device: torch.device, catalog, profile: bool = False):
        self.device = device
        self.catalog = catalog
        self.profile = profile
        self.stats: dict[int, tuple[int, float]] = {}

    def run(self, node: PhysicalNode) -> Batch:
        inputs = [self.run(c) for c in node.children]
        t0 = time.perf_counter()
        oom = None
        try:
            out = node.execute(self, *inputs)
        except torch.OutOfMemoryError as e:
            oom = _bytes_wanted(str(e))
        if oom is not None:
            # the failed operator's tensors are gone with its frame: hand the cache back
            del inputs
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
            raise OutOfMemory(f"out of GPU memory in {type(node).__name__.removesuffix('Exec')} "
                              f"({node.describe()[:80]}){f': it asked for {oom}' if oom else ''}; "
                              "the query needs more memory than the device has free "
                              "(the connection stays usable)")
        if self.profile:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self.stats[id(node)] = (out.num_rows, time.perf_counter() - t0)
        return out


def _bytes_wanted(msg: str) -> str:
    import re
    m = re.search(r"Tried to allocate ([0-9.]+ [KMGT]?i?B)", msg)
    return m.group(1) if m else ""   # "" still means: out of memory
