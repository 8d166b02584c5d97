"""Table scan: the table's chunks on the execution device, one batch each,
read by the io layer's pipeline (glint.io.chunk_reader: decoding and copies
on background threads, read ahead of the chunk being computed). Chunks that
the scan's filter rules out by their min/max statistics are never read;
:func:`start_scans` starts every scan of a plan reading when its run starts.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from glint.columnar.column import Batch, Column
from glint.exec.base import PhysicalNode
from glint.io.chunk_reader import PREFETCH, ChunkReader, cache_key, cached_in_full
from glint.io.fragments import Chunk
from glint.plan.expr import Field


@dataclass(frozen=True, slots=True, eq=False)
class ScanExec(PhysicalNode):
    table: str
    columns: tuple[str, ...]
    fields: tuple[Field, ...]
    prune: tuple[tuple[str, str, object], ...] = ()  # (column, op, value): chunk-skipping conjuncts
    est_rows: float = 0.0

    def describe(self):
        p = ""
        if self.prune:
            sym = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "in": "IN"}
            p = " prune [" + ", ".join(f"{c} {sym[op]} {v!r}" for c, op, v in self.prune) + "]"
        return f"Scan {self.table} [{', '.join(self.columns)}]{p}"

    def chunks_to_read(self, ctx):
        """(the table, its chunks that the pruning conjuncts do not rule out,
        how many chunks it has). A chunk whose statistics leave it in, but
        some of whose fragments (Parquet row groups) they rule out, is read
        without those: on a large GPU a chunk holds thousands of row groups,
        and a table sorted on a filtered column keeps a few of them."""
        t = ctx.catalog.table(self.table)
        t.check_readable(self.columns)
        if not self.prune:
            chunks = t.chunks(ctx.chunk_rows)
            return t, chunks, len(chunks)
        by_col: dict = {}  # (a column's bounds looked up once per chunk for all its conjuncts)
        for col, op, v in self.prune:
            by_col.setdefault(col, []).append((op, v))

        def prune(chunks):
            keep = []
            for c in chunks:
                for col, tests in by_col.items():
                    st = t.chunk_stats(c, col)
                    if any(_ruled_out(st, op, v) for op, v in tests):
                        break
                else:
                    c = _pruned_pieces(t, c, by_col)
                    if c is not None:
                        keep.append(c)
            return keep, len(chunks)

        keep, n = t.pruned_chunks(ctx.chunk_rows, self.prune, prune)
        if any(c.part for c in keep) and t.held_on(ctx.device) is None:
            # a whole chunk the device cache holds beats reading its part again
            whole = t.chunks(ctx.chunk_rows)
            keep = [
                whole[c.index] if c.part and cached_in_full(ctx, t, whole[c.index], self.columns) else c for c in keep
            ]
        return t, keep, n

    def stream(self, ctx):
        reader = ctx.read_ahead.pop(id(self), None)
        t, keep, n = self.chunks_to_read(ctx)
        run = ctx.run
        if run is not None:  # (chunks ruled out by statistics count as read)
            run.add_rows(t.num_rows - sum(c.rows for c in keep))
        ctx.io.chunks_skipped += n - len(keep)
        if len(keep) < n:
            ctx.note(self, f"{n - len(keep)} of {n} chunks skipped by statistics")
        parts = [c for c in keep if c.part]
        if parts:
            skipped = t.num_rows - sum(c.rows for c in keep)
            ctx.note(
                self, f"{len(parts)} chunks read in part (row groups ruled out by statistics); {skipped} rows skipped"
            )
        if not keep or not self.columns:
            if not self.columns:
                for c in keep:
                    if run is not None:
                        run.add_rows(c.rows)
                    yield Batch({}, c.rows, ctx.device)
                if keep:
                    return
            yield self._empty(ctx, t)
            return
        held = t.held_on(ctx.device)
        if held is not None:
            chunks = ((c, held.columns(c.pieces, self.columns)) for c in keep)
        else:
            chunks = reader if reader is not None else ChunkReader(ctx, t, self.columns, keep)
        for chunk, cols in chunks:
            if held is not None:
                ctx.io.chunks += 1
                ctx.io.cache_hits += len(cols)
                ctx.io.scanned_bytes += sum(c.nbytes() for c in cols.values())
            if run is not None:
                run.add_rows(chunk.rows)
            yield Batch({f.id: cols[c] for c, f in zip(self.columns, self.fields)}, chunk.rows, ctx.device)

    def _empty(self, ctx, t) -> Batch:
        types = {f.name: f.type for f in t._src.schema}
        cols = {
            f.id: Column.from_arrow(pa.array([], types[c]), t.schema[c]).to(ctx.device)
            for c, f in zip(self.columns, self.fields)
        }
        return Batch(cols, 0, ctx.device)


def scanned_rows(root, catalog) -> int:
    """The rows of every table scan of a plan (a query's progress counts against them)."""
    if isinstance(root, ScanExec):
        return int(catalog.table(root.table).num_rows)
    return sum(scanned_rows(c, catalog) for c in root.children)


def _scans_in_run_order(node, out: list) -> list:
    """The plan's scans in the order the run first asks them for a chunk: a
    hash join reads its whole build side before its probe side."""
    kids = list(node.children)
    if getattr(node, "build_right", False) and len(kids) == 2:
        kids = [kids[1], kids[0]]
    if isinstance(node, ScanExec):
        out.append(node)
    for k in kids:
        _scans_in_run_order(k, out)
    return out


def _touch_cached(ctx, scans) -> None:
    """Marks the scans' chunks in the device cache as used by the run, in
    the order of the scans (MemoryManager.cache_touch)."""
    mm = ctx.memory
    if mm is None or not mm.cache_bytes():
        return
    for node in scans:
        if not node.columns:
            continue
        try:
            t, keep, _ = node.chunks_to_read(ctx)
        except Exception:  # noqa: BLE001 - the scan raises it itself when the run gets there
            continue
        mm.cache_touch(cache_key(t, ctx.chunk_rows, c, col) for c in keep for col in node.columns)


# bytes a chunk's row is counted at per column when read-ahead weighs the
# chunks it would hold on the device (decoded, uploaded and ready: PREFETCH +1)
_READ_AHEAD_ROW_BYTES = 8


def start_scans(ctx, root) -> None:
    """Starts reading every scan of the plan at once, before the first
    operator runs (the cold run's main cost is decoding Parquet on CPU
    threads, and the scans of a multi-table query otherwise start one after
    another: each waits for the joins over the tables before it). Only the
    first scan of each table (a later one mostly finds its chunks cached),
    only scans whose first chunk is not cached, and only while the chunks they
    would hold ahead fit in a quarter of the memory the cache could still
    take. The read_ahead setting turns it off. A scan the run never asks for is
    closed with the run (ExecContext.close_read_ahead).

    First, the device cache's chunks of every scan of the plan are marked as
    the run's own, those of the scans that run last newest: the memory that
    the run's operators reserve is then taken from the chunks that other
    queries cached before any of them, and a join's build takes it from the
    chunks its own build side read before those its probe side will read."""
    scans = _scans_in_run_order(root, [])
    _touch_cached(ctx, scans)
    if not ctx.settings.read_ahead or len(scans) < 2:
        return
    budget = ctx.memory.available() // 4
    seen = set()
    for rank, node in enumerate(scans):
        if node.table in seen or not node.columns or id(node) in ctx.read_ahead:
            continue
        seen.add(node.table)
        try:
            t, keep, _ = node.chunks_to_read(ctx)
        except Exception:  # the scan raises it itself when the run gets there
            continue
        if not keep or t.held_on(ctx.device) is not None:
            continue
        rows = max(c.rows for c in keep)
        est = (PREFETCH + 1) * rows * _READ_AHEAD_ROW_BYTES * len(node.columns)
        if est > budget:
            break
        reader = ChunkReader(ctx, t, node.columns, keep)
        if reader.first_chunk_cached():
            continue
        budget -= est
        reader.rank = rank
        reader.start()
        ctx.read_ahead[id(node)] = reader


@dataclass(frozen=True, slots=True, eq=False)
class OneRowExec(PhysicalNode):
    est_rows: float = 1.0

    def describe(self):
        return "OneRow"

    def stream(self, ctx):
        yield Batch({}, 1, ctx.device)


# ------------------------------------------------------------------ chunk pruning
def _pruned_pieces(t, chunk: Chunk, by_col: dict) -> Chunk | None:
    """The chunk without the pieces whose fragments' statistics rule them
    out (``by_col``: column -> [(op, value)]): the chunk itself when they
    rule none out, None when they rule out all."""
    if len(chunk.pieces) < 2:
        return chunk
    frags = t.fragments
    kept = []
    for p in chunk.pieces:
        st = frags[p[0]].stats
        for col, tests in by_col.items():
            s = st.get(col) if st else None
            if s is not None and any(_ruled_out(s, op, v) for op, v in tests):
                break
        else:
            kept.append(p)
    if len(kept) == len(chunk.pieces):
        return chunk
    if not kept:
        return None
    return Chunk(chunk.index, tuple(kept), sum(e - s for _, s, e in kept), part=True)


def _ruled_out(stats, op: str, value) -> bool:
    """True when no row of a chunk with these (min, max, nulls) statistics can
    satisfy ``column op value`` (a NULL never does)."""
    if stats is None:
        return False
    lo, hi, _ = stats
    if lo is None:  # every value NULL: no comparison is TRUE
        return True
    try:
        if op == "eq":
            return value < lo or value > hi
        if op == "lt":
            return lo >= value
        if op == "le":
            return lo > value
        if op == "gt":
            return hi <= value
        if op == "ge":
            return hi < value
        if op == "in":
            return all(v < lo or v > hi for v in value)
    except TypeError:  # values of incomparable kinds: keep the chunk
        return False
    return False
