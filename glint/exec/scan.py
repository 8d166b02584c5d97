"""Table scan: the table's chunks on the execution device, one batch each.

IO is decoupled from compute (Vortex): a decoder thread reads the chunks
after the one being computed (Parquet row groups decoded side by side on CPU
threads), an uploader thread copies them to the GPU through pinned buffers on
a side stream, and the operator hands out each chunk once its copy is done,
so the next chunk's decode and copy overlap this chunk's kernels. Chunks that
the scan's filter rules out by their min/max statistics are never read.

Chunks of columns stay cached on the device (warm runs) while the memory
manager has room for them; evicted chunks are read again from the source.
"""
from __future__ import annotations

import queue
import threading
from dataclasses import dataclass

import pyarrow as pa
import torch

from ..plan.expr import Field
from ..storage.column import Batch, Column
from ..storage.spill import column_nbytes
from .base import PhysicalNode

PREFETCH = 2          # chunks decoded / uploaded ahead of the one being computed
_DONE = object()


@dataclass(frozen=True, slots=True, eq=False)
class ScanExec(PhysicalNode):
    table: str
    columns: tuple[str, ...]
    fields: tuple[Field, ...]
    prune: tuple[tuple[str, str, object], ...] = ()    # (column, op, value): chunk-skipping conjuncts
    est_rows: float = 0.0

    def describe(self):
        p = ""
        if self.prune:
            sym = {"eq": "=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "in": "IN"}
            p = " prune [" + ", ".join(f"{c} {sym[op]} {v!r}" for c, op, v in self.prune) + "]"
        return f"Scan {self.table} [{', '.join(self.columns)}]{p}"

    def stream(self, ctx):
        t = ctx.catalog.table(self.table)
        t.check_readable(self.columns)
        chunks = t.chunks(ctx.chunk_rows)
        keep = [c for c in chunks if not any(_ruled_out(t.chunk_stats(c, col), op, v) for col, op, v in self.prune)]
        ctx.io.chunks_skipped += len(chunks) - len(keep)
        if len(keep) < len(chunks):
            ctx.note(self, f"{len(chunks) - len(keep)} of {len(chunks)} chunks skipped by statistics")
        if not keep or not self.columns:
            if not self.columns:
                for c in keep:
                    yield Batch({}, c.rows, ctx.device)
                if keep:
                    return
            yield self._empty(ctx, t)
            return
        for chunk, cols in ChunkReader(ctx, t, self.columns, keep):
            yield Batch({f.id: cols[c] for c, f in zip(self.columns, self.fields)}, chunk.rows, ctx.device)

    def _empty(self, ctx, t) -> Batch:
        types = {f.name: f.type for f in t._src.schema}
        cols = {f.id: Column.from_arrow(pa.array([], types[c]), t.schema[c]).to(ctx.device)
                for c, f in zip(self.columns, self.fields)}
        return Batch(cols, 0, ctx.device)


@dataclass(frozen=True, slots=True, eq=False)
class OneRowExec(PhysicalNode):
    est_rows: float = 1.0

    def describe(self):
        return "OneRow"

    def stream(self, ctx):
        yield Batch({}, 1, ctx.device)


# ------------------------------------------------------------------ chunk pruning
def _ruled_out(stats, op: str, value) -> bool:
    """True when no row of a chunk with these (min, max, nulls) statistics can
    satisfy ``column op value`` (a NULL never does)."""
    if stats is None:
        return False
    lo, hi, _ = stats
    if lo is None:                      # every value NULL: no comparison is TRUE
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
    except TypeError:                   # values of incomparable kinds: keep the chunk
        return False
    return False


# ------------------------------------------------------------------ the IO pipeline
class ChunkReader:
    """Iterates (chunk, {column: Column on the device}) for the given chunks,
    reading ahead on background threads. Closing it stops the threads."""

    def __init__(self, ctx, table, columns, chunks):
        self.ctx, self.table, self.columns, self.chunks = ctx, table, list(columns), chunks
        self.device = ctx.device
        self.cuda = self.device.type == "cuda"
        self._stop = threading.Event()
        self._decoded: queue.Queue = queue.Queue(PREFETCH)
        self._ready: queue.Queue = queue.Queue(PREFETCH)
        self._threads: list[threading.Thread] = []

    def _key(self, chunk, column):
        return ("table", self.table.uid, self.ctx.chunk_rows, chunk.index, column)

    def __iter__(self):
        mm, io = self.ctx.memory, self.ctx.io
        # chunks already resident in full need no threads at all
        first_miss = next((i for i, c in enumerate(self.chunks)
                           if any(mm.cache_get(self._key(c, col)) is None for col in self.columns)), None)
        try:
            for i, chunk in enumerate(self.chunks):
                if first_miss is None or i < first_miss:
                    cols = {c: mm.cache_get(self._key(chunk, c)) for c in self.columns}
                    if all(v is not None for v in cols.values()):
                        io.chunks += 1
                        io.cache_hits += len(cols)
                        io.scanned_bytes += sum(column_nbytes(v) for v in cols.values())
                        yield chunk, cols
                        continue
                    first_miss = i
                if not self._threads:
                    self._start(self.chunks[first_miss:])
                item = self._get(self._ready)
                got_chunk, cols, event, uploaded = item
                assert got_chunk is chunk
                if event is not None:
                    stream = torch.cuda.current_stream(self.device)
                    stream.wait_event(event)
                    from ..storage.transfer import adopt
                    for c in uploaded:
                        adopt(cols[c], stream)
                for c in uploaded:
                    nb = column_nbytes(cols[c])
                    mm.cache_put(self._key(chunk, c), cols[c], nb)
                io.chunks += 1
                io.scanned_bytes += sum(column_nbytes(v) for v in cols.values())
                yield chunk, cols
        finally:
            self.close()

    # -------------------------------------------------------------- threads
    def _start(self, chunks) -> None:
        dec = threading.Thread(target=self._decode_loop, args=(chunks,), name="glint-scan-decode", daemon=True)
        up = threading.Thread(target=self._upload_loop, args=(len(chunks),), name="glint-scan-upload", daemon=True)
        self._threads = [dec, up]
        dec.start()
        up.start()

    def _put(self, q: queue.Queue, item) -> bool:
        while not self._stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _get(self, q: queue.Queue):
        while True:
            try:
                item = q.get(timeout=0.1)
            except queue.Empty:
                if not any(t.is_alive() for t in self._threads):
                    raise RuntimeError("glint scan: the reader threads stopped without a result")
                continue
            if isinstance(item, BaseException):
                raise item
            return item

    def _decode_loop(self, chunks) -> None:
        mm, io = self.ctx.memory, self.ctx.io
        frag_cache: dict = {}
        try:
            for chunk in chunks:
                if self._stop.is_set():
                    return
                cached = {c: mm.cache_get(self._key(chunk, c)) for c in self.columns}
                missing = [c for c, v in cached.items() if v is None]
                host = {}
                if missing:
                    for f in [f for f in frag_cache if f not in {p[0] for p in chunk.pieces}]:
                        del frag_cache[f]
                    host = self.table.read_chunk(chunk, missing, frag_cache)
                    io.file_bytes += self.table.read_bytes(chunk, missing)
                    io.decoded_bytes += sum(column_nbytes(v) for v in host.values())
                if not self._put(self._decoded, (chunk, cached, host)):
                    return
            self._put(self._decoded, _DONE)
        except BaseException as e:          # handed to the consumer, which raises it
            self._put(self._decoded, e)
            self._put(self._ready, e)

    def _upload_loop(self, n: int) -> None:
        uploader = None
        if self.cuda:
            from ..storage.transfer import Uploader
            uploader = Uploader(self.ctx.pinned_pool())
        try:
            while not self._stop.is_set():
                try:
                    item = self._decoded.get(timeout=0.1)
                except queue.Empty:
                    continue
                if item is _DONE:
                    return
                if isinstance(item, BaseException):
                    self._put(self._ready, item)
                    return
                chunk, cached, host = item
                cols = {c: v for c, v in cached.items() if v is not None}
                event = None
                if uploader is not None and host:
                    with torch.cuda.device(self.device):
                        for c, col in host.items():
                            cols[c] = uploader.column(col)
                        event = uploader.done()
                    self.ctx.io.h2d_bytes += sum(column_nbytes(v) for v in host.values())
                else:
                    cols.update({c: col.to(self.device) for c, col in host.items()})
                if not self._put(self._ready, (chunk, cols, event, list(host))):
                    return
        except BaseException as e:
            self._put(self._ready, e)

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=30)
        self._threads = []
