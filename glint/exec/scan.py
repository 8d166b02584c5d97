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

import collections
import contextlib
import os
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

import pyarrow as pa
import torch

from glint.runtime import trace
from glint.errors import GlintIOError
from glint.plan.expr import Field
from glint.runtime.settings import env_int
from glint.columnar.column import Batch, Column
from glint.io.raw_chunks import RAW_CODECS as _RAW_CODECS
from glint.io.raw_chunks import RawChunk, RawSet

SNAPPY = _RAW_CODECS["SNAPPY"]
# GLINT_HOST_DICTIONARIES=1: a raw chunk's dictionary page of at least this
# many bytes (as stored) is decompressed by the decoding threads, not on the
# GPU (RawChunk.with_host_dictionary). Off by default since the GPU cuts
# large snappy pages into blocks (glint.kernels.parquet_raw.split_pages):
# 22 cold TPC-H SF 10 queries took 15.0 s with it, 8.3-8.7 s without (H200).
HOST_DICTIONARY_BYTES = 16 << 10
HOST_DICTIONARIES = os.environ.get("GLINT_HOST_DICTIONARIES", "0") == "1"
from glint.runtime.spill import column_nbytes
from glint.exec.base import PhysicalNode

# a scan keeps at most this many string dictionary pages parsed (past it, a
# task's own; a page is at most raw_chunks.STRING_DICTIONARY_BYTES)
SEEN_PAGES = 4096
PREFETCH = 2          # chunks decoded / uploaded ahead of the one being computed
# on CUDA, chunks whose copies are started before the oldest started one is
# decoded and handed on (GLINT_UPLOAD_AHEAD): the staging threads always have
# a chunk's windows to fill while the upload thread queues the decoding
UPLOAD_AHEAD = env_int("GLINT_UPLOAD_AHEAD", 2, 1)
# CUDA streams of a scan's own (GLINT_SCAN_STREAMS, 0: none, all on the
# consumer's stream): the chunks' copies run on the first, and the columns
# decoded from their pages on the others, beside the query's kernels and
# beside each other (the decoder's kernels wait on memory, one page or block
# a program: several chunks' at once fill the GPU better than one)
SCAN_STREAMS = env_int("GLINT_SCAN_STREAMS", 4, 1)
# a chunk's columns decoded from their bytes as stored go through the page
# kernels together (GLINT_RAW_TOGETHER=0: one column at a time): the host's
# part of a decode (tens of torch calls and kernel launches) is paid once
RAW_TOGETHER = os.environ.get("GLINT_RAW_TOGETHER", "1") != "0"
_RAW_KEY = ("raw columns",)
# the scans' tasks ordered by when the query needs them: 1, by (the scan's
# rank, the chunk); 2, by (the chunk, the scan's rank): every scan's first
# chunk first; 0: first come, first served (GLINT_SCAN_PRIORITY)
SCAN_PRIORITY = env_int("GLINT_SCAN_PRIORITY", 2, 0, 2)
STRING_TASK_GROUPS = env_int("GLINT_STRING_TASK_GROUPS", 64, 1)     # (env: experiments)
_STREAMS: dict = {}
_STREAMS_LOCK = threading.Lock()


def _scan_streams(device) -> list:
    """The scans' CUDA streams of a device (SCAN_STREAMS of them), made once
    per process and shared by every scan (work on one stream runs in order,
    so sharing only orders it more)."""
    device = torch.device(device)
    key = device.index if device.index is not None else torch.cuda.current_device()
    device = torch.device("cuda", key)
    with _STREAMS_LOCK:
        got = _STREAMS.get(key)
        if got is None:
            got = _STREAMS[key] = [torch.cuda.Stream(device) for _ in range(SCAN_STREAMS)]
        return got
# rows a decoding task reads at least (whole row groups of one file in one
# pyarrow call): a call per row group costs several times more per row
MIN_UNIT_ROWS = 1 << 19
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

    def chunks_to_read(self, ctx):
        """(the table, its chunks that the pruning conjuncts do not rule out, how many chunks it has)."""
        t = ctx.catalog.table(self.table)
        t.check_readable(self.columns)
        chunks = t.chunks(ctx.chunk_rows)
        if not self.prune:
            return t, chunks, len(chunks)
        by_col: dict = {}                   # (a column's bounds looked up once per chunk for all its conjuncts)
        for col, op, v in self.prune:
            by_col.setdefault(col, []).append((op, v))
        keep = []
        for c in chunks:
            for col, tests in by_col.items():
                st = t.chunk_stats(c, col)
                if any(_ruled_out(st, op, v) for op, v in tests):
                    break
            else:
                keep.append(c)
        return t, keep, len(chunks)

    def stream(self, ctx):
        reader = ctx.read_ahead.pop(id(self), None)
        t, keep, n = self.chunks_to_read(ctx)
        ctx.io.chunks_skipped += n - len(keep)
        if len(keep) < n:
            ctx.note(self, f"{n - len(keep)} of {n} chunks skipped by statistics")
        if not keep or not self.columns:
            if not self.columns:
                for c in keep:
                    yield Batch({}, c.rows, ctx.device)
                if keep:
                    return
            yield self._empty(ctx, t)
            return
        for chunk, cols in reader if reader is not None else ChunkReader(ctx, t, self.columns, keep):
            yield Batch({f.id: cols[c] for c, f in zip(self.columns, self.fields)}, chunk.rows, ctx.device)

    def _empty(self, ctx, t) -> Batch:
        types = {f.name: f.type for f in t._src.schema}
        cols = {f.id: Column.from_arrow(pa.array([], types[c]), t.schema[c]).to(ctx.device)
                for c, f in zip(self.columns, self.fields)}
        return Batch(cols, 0, ctx.device)


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
    take. GLINT_READ_AHEAD=0 turns it off. A scan the run never asks for is
    closed with the run (ExecContext.close_read_ahead)."""
    if os.environ.get("GLINT_READ_AHEAD", "1") == "0":
        return
    scans = _scans_in_run_order(root, [])
    if len(scans) < 2:
        return
    budget = ctx.memory.available() // 4
    seen = set()
    for rank, node in enumerate(scans):
        if node.table in seen or not node.columns or id(node) in ctx.read_ahead:
            continue
        seen.add(node.table)
        try:
            t, keep, _ = node.chunks_to_read(ctx)
        except Exception:       # the scan raises it itself when the run gets there
            continue
        if not keep:
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
def _contiguous(c: Column) -> Column:
    """A host column over contiguous memory (a single part may be a strided
    view of Arrow's 128-bit DECIMALs)."""
    if c.data.is_contiguous():
        return c
    return Column(c.dtype, c.data.contiguous(), c.valid, c.dictionary)


def _nbytes(v) -> int:
    """Bytes of a column or of a list of column parts."""
    return sum(column_nbytes(x) for x in v) if isinstance(v, list) else column_nbytes(v)


def _units(chunk, fragments, target_rows: int):
    """A chunk's pieces as units of decoding work: runs of consecutive whole
    fragments of up to about target_rows rows (a list of fragment indexes),
    and parts of fragments as (fragment, start, stop)."""
    run: list[int] = []
    rows = 0
    for f, start, stop in chunk.pieces:
        whole = start == 0 and stop == fragments[f].rows
        if not whole:
            if run:
                yield run
                run, rows = [], 0
            yield (f, start, stop)
            continue
        if run and (rows + stop > target_rows or run[-1] + 1 != f):
            yield run
            run, rows = [], 0
        run.append(f)
        rows += stop
    if run:
        yield run


def _resolve(plan):
    """A chunk's plan for a fragment's column: a RawChunk as it is, a
    future's result, or (a future, i): item i of its result."""
    if isinstance(plan, tuple):
        got = plan[0].result()
        return None if got is None else got[plan[1]]
    return plan.result() if isinstance(plan, Future) else plan


def _resolve_all(plans):
    """A chunk's plans for a column: a RawSet as it is, a future's RawSet
    (a string column's, see ChunkReader._string_set), or each fragment's
    (_resolve)."""
    if type(plans) is RawSet:
        return plans
    if isinstance(plans, Future):
        return plans.result()
    return [_resolve(f) for f in plans]


def _string_plans(plans: dict) -> dict:
    """The string columns among a chunk's plans ({column: (fragment order,
    plans)}): each one's plans replaced by its chunks with their codes in
    the chunk's own dictionary (raw_chunks.string_codes). Returns
    {column: that host dictionary}."""
    from glint.io.raw_chunks import string_codes
    dicts = {}
    for c, (order, pl) in list(plans.items()):
        if type(pl) is RawSet:
            if pl.codes:
                dicts[c], pl = pl.with_codes()
                plans[c] = (order, pl)
            continue
        if pl and isinstance(pl[0], RawChunk) and pl[0].codes:
            dicts[c], pl = string_codes(pl)
            plans[c] = (order, pl)
    return dicts


def _trace_copy_done(event, t0: float, table: str) -> None:
    """Tracing only: a span from the upload's start to its copies' end on
    the GPU (a thread waits for the event)."""
    def wait():
        event.synchronize()
        trace.add("copies done", t0, time.perf_counter(), table=table)
    threading.Thread(target=wait, name="glint-trace-copy", daemon=True).start()


class ChunkReader:
    """Iterates (chunk, {column: Column on the device}) for the given chunks,
    reading ahead on background threads. Closing it stops the threads."""

    def __init__(self, ctx, table, columns, chunks):
        self.ctx, self.table, self.columns, self.chunks = ctx, table, list(columns), chunks
        self.device = ctx.device
        self.cuda = self.device.type == "cuda"
        # the stream the chunks are consumed on (their device buffers are allocated on it)
        self.compute_stream = torch.cuda.current_stream(self.device) if self.cuda else None
        self.side_streams = _scan_streams(self.device) if self.cuda else []
        self._decodes = 0               # chunks decoded (the decoding streams are taken in turn)
        self._last_event = None
        self._stop = threading.Event()
        from glint.io.file_reads import FileHandles
        self._files = FileHandles()       # the files the scan reads as stored, kept open while it runs
        # string dictionary pages parsed so far, by their bytes as stored
        # (RawChunk.with_strings' ``seen``), shared by the scan's tasks: a
        # column of a few values stores the same few pages over and over
        self._seen_pages: dict = {}
        # the scan's place among the query's scans in the order the run asks
        # for them (start_scans sets it; 0: a scan asked for now): its tasks
        # in the shared decoding and staging pools go before those of the
        # scans needed after it, a chunk's before the next chunk's
        # (glint.runtime.priority_pool)
        self.rank = 0
        self._priority = (0, 0)         # of the chunk the decoding loop is at
        self._decoded: queue.Queue = queue.Queue(PREFETCH)
        self._ready: queue.Queue = queue.Queue(PREFETCH)
        self._threads: list[threading.Thread] = []
        # decoding tasks not yet consumed, cancelled when the scan stops early.
        # (Only those: a finished task's Future holds its result, the piece's
        # device columns, and keeping every Future kept every piece of the scan
        # alive beside the chunks made of them, so a scan of N bytes held 2N.)
        self._futures: set = set()
        self._lock = threading.Lock()
        # columns decoded from their Parquet pages on the scan's device
        # (glint.io.parquet_pages; GLINT_PARQUET_DECODE): on CUDA by
        # default those the GPU decodes from their bytes as stored ("raw");
        # "device" adds the numeric columns whose pages the host plans
        # (NULLs, other codecs; on the CPU too); "host": none, all by pyarrow.
        # On the CPU "raw" only when asked for (the reference decoder: tests)
        mode = os.environ.get("GLINT_PARQUET_DECODE")
        if mode == "device":
            cols = table.device_columns(self.columns)
            if self.cuda:
                cols += [c for c in table.raw_columns(self.columns) if c not in cols]
        elif (mode or "raw") == "raw" and (self.cuda or mode == "raw"):
            cols = table.raw_columns(self.columns)
        else:
            cols = []
        self.device_cols = frozenset(cols)
        # of those, the VARCHAR columns whose codes the GPU decodes (the
        # strings of each row group's dictionary page read by the host)
        self.string_cols = frozenset(c for c in cols if table.schema[c].is_string)

    def _key(self, chunk, column):
        return ("table", self.table.uid, self.ctx.chunk_rows, chunk.index, column)

    def __iter__(self):
        mm, io = self.ctx.memory, self.ctx.io
        # chunks already resident in full need no threads at all (a reader
        # started ahead of the query reads from the first chunk)
        first_miss = 0 if self._threads else next(
            (i for i, c in enumerate(self.chunks)
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
                t0 = time.perf_counter()
                item = self._get(self._ready)
                t1 = time.perf_counter()
                io.scan_wait_s += t1 - t0
                trace.add("scan wait", t0, t1, table=self.table.name, chunk=chunk.index)
                got_chunk, cols, event, uploaded = item
                assert got_chunk is chunk
                if event is not None:
                    stream = torch.cuda.current_stream(self.device)
                    stream.wait_event(event)
                    from glint.io.transfer import adopt
                    for c in uploaded:
                        adopt(cols[c], stream)
                for c in uploaded:
                    nb = column_nbytes(cols[c])
                    mm.cache_put(self._key(chunk, c), cols[c], nb)
                io.chunks += 1
                io.scanned_bytes += sum(column_nbytes(v) for v in cols.values())
                t0 = time.perf_counter()
                yield chunk, cols
                trace.add("compute", t0, time.perf_counter(), table=self.table.name, chunk=chunk.index)
        finally:
            self.close()

    def first_chunk_cached(self) -> bool:
        mm = self.ctx.memory
        return all(mm.cache_get(self._key(self.chunks[0], col)) is not None for col in self.columns)

    def start(self) -> None:
        """Starts reading now, from the first chunk (read-ahead: start_scans)."""
        if not self._threads:
            self._start(self.chunks)

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
        """Hands each chunk's fragments to the decoding threads: one task per
        fragment read (shared by the chunks a fragment spans) and one per
        piece of a chunk (slice, convert to glint's columns, copy to the
        device through pinned buffers). Runs at most PREFETCH chunks ahead."""
        from glint.io.parquet_source import decode_pool
        mm, io = self.ctx.memory, self.ctx.io
        pool = decode_pool()
        workers = pool._max_workers
        reads: dict = {}                    # (fragment, columns) -> future of its Arrow table
        plans: dict = {}                    # (fragment, column) -> future of its ChunkPlan (pages on the host)
        try:
            for chunk in chunks:
                if self._stop.is_set():
                    return
                self._priority = self._priority_of(chunk)
                cached = {c: mm.cache_get(self._key(chunk, c)) for c in self.columns}
                missing = tuple(c for c, v in cached.items() if v is None)
                pieces = []
                chunk_plans = {}
                if missing:
                    frags = {f for f, _, _ in chunk.pieces}
                    for k in [k for k in reads if k[0] not in frags]:
                        with self._lock:
                            self._futures.discard(reads.pop(k))
                    for k in [k for k in plans if k[0] not in frags]:
                        x = plans.pop(k)
                        x = x[0] if isinstance(x, tuple) else x
                        if isinstance(x, Future):
                            with self._lock:
                                self._futures.discard(x)
                    order = list(dict.fromkeys(f for f, _, _ in chunk.pieces))
                    # (a string column's chunk whose row groups are not all
                    # dictionary-encoded as stored: read by pyarrow)
                    # the string columns' raw chunks, made here for the check:
                    # a RawSet, or where none can be made a list (used below
                    # for the fragments not planned yet)
                    string_raws = {}
                    for c in missing:
                        if c in self.device_cols and c in self.string_cols:
                            rs = self.table.raw_set(order, c)
                            string_raws[c] = rs if rs is not None else self.table.raw_chunks(order, c)
                    on_device = tuple(c for c in missing if c in self.device_cols and (
                        c not in self.string_cols or type(string_raws[c]) is RawSet
                        or all(r is not None for r in string_raws[c])))
                    host_cols = tuple(c for c in missing if c not in on_device)
                    decoded = set(on_device)        # columns some piece of the chunk decodes from its file
                    set_bytes = 0                   # (of those, the RawSets': counted as they are made)
                    for run in _units(chunk, self.table.fragments, max(MIN_UNIT_ROWS, chunk.rows // (2 * workers))):
                        frag_list, start, stop = (run, 0, 0) if isinstance(run, list) else ([run[0]], run[1], run[2])
                        # the host tier first: what is there is only copied up
                        held = self._host_get(frag_list, start, stop, host_cols)
                        need = tuple(c for c in host_cols if c not in held)
                        decoded.update(need)
                        read = None
                        if need and not isinstance(run, list):   # part of a fragment other chunks share
                            f = run[0]
                            if (f, need) not in reads:
                                reads[(f, need)] = self._submit(pool, self.table.read_fragments, [f], need)
                            read = reads[(f, need)]
                        if need or held:
                            pieces.append(self._submit(pool, self._piece, read, frag_list, start, stop, need, held))
                    # columns decoded from their pages on the device: each
                    # fragment's pages read and decompressed by the pool (a
                    # fragment two chunks share, once), decoded per chunk
                    # the fragments no later chunk reads: their bytes are let go after this one's upload
                    cut = {g for g, _, stop in chunk.pieces if stop < self.table.fragments[g].rows}
                    final = tuple(f not in cut for f in order)
                    for c in on_device:
                        # the column's chunks all still in their files: one RawSet (arrays;
                        # a string column's dictionary pages read by one task of the pool)
                        rs = string_raws.get(c) if c in self.string_cols else \
                            None if HOST_DICTIONARIES else self.table.raw_set(order, c)
                        if type(rs) is RawSet:
                            chunk_plans[c] = (order, self._submit(pool, self._string_set, rs) if rs.codes else rs,
                                              final)
                            decoded.discard(c)
                            set_bytes += rs.nbytes
                            continue
                        new = [f for f in order if (f, c) not in plans]
                        if new and c in self.string_cols:
                            # the dictionary pages of the chunk's row groups: a task per
                            # STRING_TASK_GROUPS of them (a chunk's first upload waits
                            # for all of them: one task took 70 ms for TPC-H Q1's 292)
                            by_frag = dict(zip(order, string_raws[c]))
                            for a in range(0, len(new), STRING_TASK_GROUPS):
                                part = new[a:a + STRING_TASK_GROUPS]
                                fut = self._submit(pool, self._strings, [by_frag[f] for f in part])
                                plans.update(((f, c), (fut, i)) for i, f in enumerate(part))
                        elif new:
                            for f, raw in zip(new, self.table.raw_chunks(new, c)):
                                plans[(f, c)] = self._raw_or_plan(pool, f, c, raw)
                        chunk_plans[c] = (order, [plans[(f, c)] for f in order], final)
                    io.file_bytes += set_bytes + (self.table.read_bytes(chunk, sorted(decoded)) if decoded else 0)
                if not self._put(self._decoded, (chunk, cached, missing, pieces, chunk_plans)):
                    return
            self._put(self._decoded, _DONE)
        except BaseException as e:          # handed to the consumer, which raises it
            self._put(self._decoded, e)
            self._put(self._ready, e)

    def _priority_of(self, chunk):
        if SCAN_PRIORITY == 2:
            return (chunk.index, self.rank)
        return (self.rank, chunk.index) if SCAN_PRIORITY else (0, 0)

    def _submit(self, pool, fn, *args):
        fut = pool.submit(fn, *args, priority=self._priority)
        with self._lock:
            self._futures.add(fut)
        return fut

    def _host_key(self, frags, start: int, stop: int, column: str):
        return ("table", self.table.uid, tuple(frags), start, stop, column)

    def _host_get(self, frags, start: int, stop: int, columns) -> dict[str, Column]:
        """The piece's columns that the host tier holds."""
        hc = self.ctx.memory.host
        if hc is None:
            return {}
        out = {}
        for c in columns:
            v = hc.get(self._host_key(frags, start, stop, c))
            if v is not None:
                out[c] = v
        return out

    def _piece(self, read, frags: list[int], start: int, stop: int, columns, held=None) -> dict[str, list]:
        """One piece of a chunk as host column parts (Arrow's chunks, over
        Arrow's memory), which the upload loop puts together with the other
        pieces' in the chunk's device buffer: whole fragments (``start`` =
        ``stop`` = 0), or rows start..stop of the fragment that ``read``
        decodes. ``columns`` are decoded; ``held`` are the piece's parts the
        host tier had."""
        if self._stop.is_set():
            return {}
        t0 = time.perf_counter()
        data = None
        if columns:
            data = self.table.read_fragments(frags, columns) if read is None else \
                read.result().slice(start, stop - start)
        t1 = time.perf_counter()
        host = self.table.convert_parts(data, columns) if columns else {}
        nbytes = sum(_nbytes(v) for v in host.values())
        hc = self.ctx.memory.host
        if hc is not None and hc.admits(self.ctx.memory):
            for c, v in host.items():
                hc.put(self._host_key(frags, start, stop, c), v, _nbytes(v))
        held_bytes = 0
        if held:
            host.update(held)
            held_bytes = sum(_nbytes(v) for v in held.values())
        t2 = time.perf_counter()
        trace.add("decode", t0, t1, table=self.table.name, rows=sum(self.table.fragments[f].rows for f in frags))
        trace.add("convert", t1, t2, table=self.table.name)
        with self._lock:
            io = self.ctx.io
            io.host_cache_bytes += held_bytes
            io.decoded_bytes += nbytes
            io.read_s += t1 - t0
            io.convert_s += t2 - t1
        return host

    def _raw_or_plan(self, pool, fragment: int, column: str, raw: RawChunk | None):
        """A fragment's column for the device decoder: its bytes as stored
        (``raw``, from Table.raw_chunks), left in the file for the staging
        to read (no work here), or else a future of the pool's _plan (see
        _resolve)."""
        if raw is None:
            return self._submit(pool, self._plan, fragment, column)
        if HOST_DICTIONARIES and raw.codec == SNAPPY and raw.dict_span >= HOST_DICTIONARY_BYTES:
            return self._submit(pool, self._host_dictionary, raw)
        return raw

    def _host_dictionary(self, raw: RawChunk) -> RawChunk | None:
        """A raw chunk's dictionary page decompressed here (see RawChunk.with_host_dictionary)."""
        if self._stop.is_set():
            return None
        t0 = time.perf_counter()
        out = raw.with_host_dictionary()
        t1 = time.perf_counter()
        trace.add("dictionary", t0, t1, table=self.table.name, bytes=raw.dict_span)
        with self._lock:
            self.ctx.io.read_s += t1 - t0
        return out

    def _strings(self, raws: list) -> list | None:
        """A string column's raw chunks with their dictionary pages' strings
        read here (RawChunk.with_strings; the same page bytes parsed once)."""
        if self._stop.is_set():
            return None
        t0 = time.perf_counter()
        seen = self._seen_pages if len(self._seen_pages) < SEEN_PAGES else {}
        out = [raw.with_strings(self._files, seen) for raw in raws]
        t1 = time.perf_counter()
        trace.add("dictionary", t0, t1, table=self.table.name, chunks=len(raws))
        with self._lock:
            self.ctx.io.read_s += t1 - t0
        return out

    def _string_set(self, rs: RawSet) -> RawSet | None:
        """A string column's RawSet with its chunks' dictionary pages read
        here (RawSet.with_strings; pages parsed before, by this scan's
        tasks, are not parsed again)."""
        if self._stop.is_set():
            return None
        t0 = time.perf_counter()
        seen = self._seen_pages if len(self._seen_pages) < SEEN_PAGES else {}
        out = rs.with_strings(self._files, seen)
        t1 = time.perf_counter()
        trace.add("dictionary", t0, t1, table=self.table.name, chunks=len(rs))
        with self._lock:
            self.ctx.io.read_s += t1 - t0
        return out

    def _device_dictionary(self, d):
        """A chunk's host dictionary (string_codes) on the device, copied on
        the current stream without waiting (see parquet_pages.to_device)."""
        from glint.columnar.column import Dictionary
        from glint.io.parquet_pages import to_device
        return Dictionary(to_device(d.offsets, self.device), to_device(d.data, self.device), d.sorted_unique)

    def _host_column(self, chunk, column: str) -> Column:
        """A chunk's column read by pyarrow and copied up (a string column
        whose pages the device could not decode as codes: a PLAIN page, the
        writer's fallback once its dictionary grew; or bad data, which
        pyarrow then names)."""
        from glint.columnar.column import concat_columns
        parts = []
        for f, start, stop in chunk.pieces:
            t = self.table.read_fragments([f], (column,))
            if start or stop < t.num_rows:
                t = t.slice(start, stop - start)
            parts += self.table.convert_parts(t, (column,))[column]
        col = _contiguous(concat_columns(parts)).to(self.device)
        with self._lock:
            self.ctx.io.h2d_bytes += column_nbytes(col)
        return col

    def _plan(self, fragment: int, column: str):
        """The host's part of decoding one fragment's column from its Parquet
        pages (read, page headers, decompression: see glint.io.parquet_pages)."""
        if self._stop.is_set():
            return None
        t0 = time.perf_counter()
        plan = self.table.device_plan(fragment, column, raw=True)
        t1 = time.perf_counter()
        trace.add("pages", t0, t1, table=self.table.name, column=column, bytes=plan.nbytes)
        with self._lock:
            self.ctx.io.read_s += t1 - t0
        return plan

    def _decode_pages(self, chunk, column: str, order, plans, data=None, layout=None, exact: bool = True,
                      dictionary=None):
        """A chunk's column from its fragments' plans, decoded on the scan's
        device (``data``: the plans' bytes already there; ``exact``: see
        glint.io.raw_decode.decode_raw; ``dictionary``: a string
        column's host dictionary, see string_codes): (Column, err)."""
        rows = sum(p.rows for p in plans)
        mm = self.ctx.memory
        t0 = time.perf_counter()
        try:
            if self.cuda:
                with mm.allocating():       # outside any reservation, like the read-ahead's copies
                    mm.make_room(rows * 17)
                    if dictionary is not None:
                        dictionary = self._device_dictionary(dictionary)
                    col, err = self.table.decode_device(plans, column, self.device, data, layout, exact,
                                                        dictionary)
            else:
                col, err = self.table.decode_device(plans, column, self.device, dictionary=dictionary)
        except GlintIOError as e:           # bad page data: which files (unless it says already)
            if str(e).startswith("Cannot read "):
                raise
            raise GlintIOError(f"Cannot read {self.table.describe_fragments(order)}: {e}") from None
        return self._chunk_rows(chunk, column, order, plans, col, t0), err

    def _decode_raw_together(self, chunk, raws: dict, data, dicts=None) -> tuple[dict, object]:
        """Several columns' raw chunks decoded in one pass of the page
        kernels (glint.io.raw_decode.decode_raw_many, without
        waiting): ``raws`` maps a column to (fragment order, raw chunks,
        layout, where the layout starts in ``data``); ``dicts`` the string
        columns' host dictionaries. Returns ({column: Column}, err: one flag
        for them all)."""
        from glint.io.raw_decode import decode_raw_many
        t0 = time.perf_counter()
        mm = self.ctx.memory

        @contextlib.contextmanager
        def room(nbytes):                   # outside any reservation, like the read-ahead's copies
            with mm.allocating():
                mm.make_room(nbytes)
                yield
        values, err = decode_raw_many([(pl, la, base) for _, pl, la, base in raws.values()], data, room)
        dicts = dicts or {}
        if dicts:
            with room(sum(d.offsets.numel() * 8 + d.data.numel() for d in dicts.values())):
                dicts = {c: self._device_dictionary(d) for c, d in dicts.items()}
        out = {}
        for (c, (order, pl, _, _)), v in zip(raws.items(), values):
            col = self.table.device_column(c, v, None, dicts.get(c))
            out[c] = self._chunk_rows(chunk, c, order, pl, col, t0)
        return out, err

    def _chunk_rows(self, chunk, column: str, order, plans, col, t0: float):
        """The chunk's rows of a column decoded for its fragments (``order``,
        ``plans``: see _decode_pages)."""
        first, at = {}, 0
        for f, rows in zip(order, plans.rows.tolist() if type(plans) is RawSet else [p.rows for p in plans]):
            first[f] = at
            at += rows
        ranges: list[list[int]] = []
        for f, start, stop in chunk.pieces:
            a, b = first[f] + start, first[f] + stop
            if ranges and ranges[-1][1] == a:
                ranges[-1][1] = b
            else:
                ranges.append([a, b])
        if ranges != [[0, at]]:
            def part(a, b):
                return col.data[a:b], (None if col.valid is None else col.valid[a:b])
            if len(ranges) == 1:
                d, v = part(*ranges[0])
                if 2 * d.shape[0] < at:         # most of the buffer is not the chunk's: not kept
                    d, v = d.clone(), (None if v is None else v.clone())
            else:
                got = [part(a, b) for a, b in ranges]
                d = torch.cat([x for x, _ in got])
                v = None if col.valid is None else torch.cat([y for _, y in got])
            col = Column(col.dtype, d, v, col.dictionary)
        trace.add("device decode", t0, time.perf_counter(), table=self.table.name, column=column, rows=at)
        with self._lock:
            self.ctx.io.decoded_bytes += column_nbytes(col)
        return col

    def _narrow_types(self, chunk, columns) -> dict:
        """Integer columns (INTEGER, BIGINT, DATE, DECIMAL up to 18 digits)
        whose values, by the file's statistics for the chunk, fit a narrower
        integer type: copied up in it and widened on the device (TPC-H
        lineitem's Q1 columns: 44 bytes a row over the bus become 18).
        GLINT_NARROW_UPLOADS=0 turns it off."""
        if os.environ.get("GLINT_NARROW_UPLOADS", "1") == "0":
            return {}
        from glint.io.transfer import narrow_type
        out = {}
        for c in columns:
            t = self.table.schema[c]
            if t.kind not in ("INTEGER", "BIGINT", "DATE") and not (t.kind == "DECIMAL" and t.precision <= 18):
                continue
            st = self.table.chunk_stats(chunk, c)
            if st is None or st[0] is None:
                continue
            dt = narrow_type(st[0], st[1], 4 if t.kind in ("INTEGER", "DATE") else 8)
            if dt is not None:
                out[c] = dt
        return out

    def _start_upload(self, host: dict, raw: dict | None = None, narrow: dict | None = None, priority=None):
        """A chunk's host parts copied up as columns in one device buffer
        (see glint.io.transfer.StackedUpload; ``raw``: more buffers
        copied up as they are; ``narrow``: columns copied up in a narrower
        integer type): the copies started; _finish_upload waits for them."""
        from glint.io.transfer import StackedUpload, staging_pool
        up = StackedUpload(self.ctx.pinned_pool(), self.ctx.memory, host, self.compute_stream, raw, narrow,
                           self.side_streams[0] if self.side_streams else None, self._files)
        io = self.ctx.io

        def counted(nbytes, seconds):
            with self._lock:
                io.stage_s += seconds

        t0 = time.perf_counter()
        try:
            up.start(staging_pool(), counted, priority)
        except BaseException:
            up.cancel()
            raise
        return up, t0

    def _finish_upload(self, started) -> dict:
        """The columns of an upload _start_upload started; the event
        covering the copies is left in self._last_event."""
        up, t0 = started
        try:
            cols, self._last_event = up.finish()
        except BaseException:
            up.cancel()
            raise
        if trace.active():
            trace.add("upload", t0, time.perf_counter(), table=self.table.name, bytes=up.bytes)
            _trace_copy_done(self._last_event, t0, self.table.name)
        with self._lock:
            self.ctx.io.h2d_bytes += up.bytes
        return cols

    def _start_to_device(self, chunk, host: dict, plans: dict):
        """The first half of _to_device: the chunk's copies started, so that
        the staging threads fill its buffers while this thread decodes the
        chunk before it."""
        from glint.io.parquet_pages import layout_plans
        from glint.io.raw_decode import layout_raw, layout_raw_together
        layouts, raw, bases, together = {}, {}, {}, {}
        dicts = _string_plans(plans)
        for c, (order, pl) in plans.items():
            if type(pl) is RawSet and RAW_TOGETHER:
                together[c] = pl
                continue
            if all(type(p) is type(pl[0]) and p.dtype == pl[0].dtype for p in pl):
                if isinstance(pl[0], RawChunk) and RAW_TOGETHER:
                    together[c] = pl
                    continue
                la = layouts[c] = layout_raw(pl) if isinstance(pl[0], RawChunk) else layout_plans(pl)
                raw[("pages", c)] = (la.total, la.segments)
        if together:
            # the raw columns' bytes in one buffer, row group by row group
            # (each column's layout in the whole buffer: base 0)
            lays, total, segments = layout_raw_together(together)
            layouts.update(lays)
            bases = dict.fromkeys(together, 0)
            raw[_RAW_KEY] = (total, segments)
        started = self._start_upload(host, raw, self._narrow_types(chunk, host), self._priority_of(chunk)) \
            if host or raw else None
        return layouts, started, bases, dicts

    def _to_device(self, chunk, host: dict, plans: dict, cols: dict, begun=None):
        """A chunk's missing columns on the device (into ``cols``): host
        parts staged through pinned buffers, and columns decoded from their
        pages (the pages' bytes staged the same way, then one kernel per
        column). ``begun``: what _start_to_device returned for the chunk.
        Returns the event the consumer waits for."""
        layouts, started, bases, dicts = begun if begun is not None else self._start_to_device(chunk, host, plans)
        if started is None:
            got, event = {}, None
        else:
            got = self._finish_upload(started)
            event = self._last_event
        cols.update((c, got[c]) for c in host)
        if not plans:
            return event
        errs = {}
        # each column decoded on a stream of the scan's (after the copies;
        # its pages' buffer, allocated on the consumer's stream, marked as
        # used there; the consumer marks the columns as its own, adopt()),
        # or all on the consumer's stream
        # the decoding streams: all but the copies' one (so that the next
        # chunk's copies do not queue behind this chunk's kernels), taken in
        # turn chunk by chunk (so that consecutive chunks' kernels, which wait
        # on memory more than they compute, run side by side)
        if self.side_streams:
            decoders = self.side_streams[1:] or self.side_streams
            k = self._decodes % len(decoders)
            self._decodes += 1
            sides = decoders[k:] + decoders[:k]
            if event is not None:
                for st in sides:
                    st.wait_event(event)
        else:
            sides = [self.compute_stream]
        with torch.cuda.device(self.device):
            if bases:
                # the raw columns together, on the chunk's first stream
                data, st = got[_RAW_KEY], sides[0]
                for c, base in bases.items():       # (each column's bytes, for a re-decode below)
                    got[("pages", c)] = data[base:base + layouts[c].total]
                if st is not self.compute_stream:
                    data.record_stream(st)
                with torch.cuda.stream(st):
                    decoded, err = self._decode_raw_together(
                        chunk, {c: (*plans[c], layouts[c], base) for c, base in bases.items()}, data, dicts)
                if st is not self.compute_stream:
                    err.record_stream(self.compute_stream)          # read there at the query's end
                cols.update(decoded)
                errs.update((c, err) for c in bases)
            rest = [c for c in plans if c not in bases]
            used = []
            for i, c in enumerate(rest):
                order, pl = plans[c]
                st = sides[(i + bool(bases)) % len(sides)]
                used.append(st)
                buf = got.get(("pages", c))
                if buf is not None and st is not self.compute_stream:
                    buf.record_stream(st)
                with torch.cuda.stream(st):
                    col, err = self._decode_pages(chunk, c, order, pl, buf, layouts.get(c), exact=False,
                                                  dictionary=dicts.get(c))
                cols[c] = col
                if err is not None:
                    if st is not self.compute_stream:
                        err.record_stream(self.compute_stream)      # read there at the query's end
                    errs[c] = err
        main = sides[0]
        for st in used:
            if st is not main:
                main.wait_stream(st)
        with torch.cuda.device(self.device), torch.cuda.stream(main):
            # Bad page data (an index past its dictionary, a stream that ends
            # short, a body that does not decompress) reads nothing but would
            # give wrong values, and a column decoded from its bytes as stored
            # may have had more pages than its page tables held. A run that
            # collects its checks (ctx.decode_checks: Connection._execute_plan)
            # gets the flags, and checks them all, in one wait, before its
            # result is handed out (a set flag re-runs the query with those
            # columns checked here): so nothing here waits for the device, and
            # the reader runs ahead of the chunks' kernels. Otherwise, and for
            # the columns a re-run checks, they are checked here, on the
            # reader's thread, before the chunk is handed on (this waits for
            # the compute stream to reach the decoding).
            checks = self.ctx.decode_checks
            if checks is not None:
                late = {c: e for c, e in errs.items() if c not in self.table.exact_decode}
                with self._lock:
                    checks.extend((e, self.table, c) for c, e in late.items())
                errs = {c: e for c, e in errs.items() if c not in late}
            flags = torch.cat([e.reshape(1) for e in errs.values()]).tolist() if errs else []
            bad = []
            for (c, _), flag in zip(errs.items(), flags):
                if flag:
                    order, pl = plans[c]
                    if all(isinstance(p, RawChunk) for p in pl):
                        try:
                            cols[c], err = self._decode_pages(chunk, c, order, pl, got.get(("pages", c)),
                                                              layouts.get(c), exact=True, dictionary=dicts.get(c))
                            flag = int(err.item()) if err is not None else 0
                        except GlintIOError:
                            if c not in dicts:
                                raise
                            flag = 1
                    if flag and c in dicts:
                        # a string column whose pages are not all codes (or bad): pyarrow's
                        cols[c], flag = self._host_column(chunk, c), 0
                    if flag:
                        bad.append(c)
            del got
            if bad:
                frags = list(dict.fromkeys(f for f, _, _ in chunk.pieces))
                raise GlintIOError(f"Cannot read {self.table.describe_fragments(frags)}: bad page data "
                                   f"in column(s) {', '.join(sorted(bad))} (a dictionary index past the "
                                   "dictionary, an index stream shorter than its page, or a page that does not "
                                   "decompress to its size)")
            event = torch.cuda.Event()
            event.record(main)
        return event

    def _upload_loop(self, n: int) -> None:
        """Puts each chunk together from its pieces, in order (on CUDA on the
        copies' stream, so the event it hands on covers copies and concat).
        On CUDA a chunk's copies start before the chunk before it is
        finished (its pages decoded): the staging threads fill the next
        chunk's buffers while this thread queues the decoding."""
        from glint.columnar.column import concat_columns
        # chunks whose copies started, handed on (decoded) in order: the
        # oldest once UPLOAD_AHEAD later ones have started, or when no
        # chunk is ready to start
        pending: collections.deque = collections.deque()
        try:
            while not self._stop.is_set():
                try:
                    item = self._decoded.get(timeout=0.1) if not pending else self._decoded.get_nowait()
                except queue.Empty:
                    if pending and not self._hand_on(*pending.popleft()):
                        return
                    continue
                if item is _DONE or isinstance(item, BaseException):
                    while pending:
                        if not self._hand_on(*pending.popleft()):
                            return
                    if item is not _DONE:
                        self._put(self._ready, item)
                    return
                chunk, cached, missing, pieces, chunk_plans = item
                cols = {c: v for c, v in cached.items() if v is not None}
                parts = [p.result() for p in pieces]
                plans = {c: (order, _resolve_all(futs)) for c, (order, futs, _) in chunk_plans.items()}
                finals = {c: final for c, (_, _, final) in chunk_plans.items()}
                with self._lock:
                    self._futures.difference_update(pieces)
                    self._futures.difference_update(f for _, f, _ in chunk_plans.values() if isinstance(f, Future))
                del item, pieces
                if self._stop.is_set():
                    return
                host = {c: [x for p in parts for x in p[c]] for c in missing if c not in plans}
                del parts               # the pieces, now in host (and then the chunk's columns)
                begun = None
                if missing and self.cuda:
                    begun = self._start_to_device(chunk, host, plans)
                elif missing:
                    for c in host:
                        cols[c] = _contiguous(concat_columns(host[c]))
                    plans = {c: (order, list(pl)) for c, (order, pl) in plans.items()}   # (RawSets: the reference)
                    dicts = _string_plans(plans)
                    for c, (order, pl) in plans.items():
                        try:
                            cols[c] = self._decode_pages(chunk, c, order, pl, dictionary=dicts.get(c))[0]
                        except GlintIOError:
                            if c not in dicts:
                                raise
                            cols[c] = self._host_column(chunk, c)       # (see _host_column)
                now = (chunk, cols, missing, host, plans, finals, begun)
                if begun is None:
                    while pending:
                        if not self._hand_on(*pending.popleft()):
                            return
                    if not self._hand_on(*now):
                        return
                    continue
                if len(pending) >= UPLOAD_AHEAD and not self._hand_on(*pending.popleft()):
                    return
                pending.append(now)
        except BaseException as e:
            self._put(self._ready, e)

    def _hand_on(self, chunk, cols, missing, host, plans, finals, begun) -> bool:
        """A chunk to the consumer (on CUDA its copies finished and its pages
        decoded first); False when the scan stopped."""
        event = None
        if begun is not None:
            event = self._to_device(chunk, host, plans, cols, begun)
        # raw chunks' bytes are on the device now: their buffers are reused
        for c, (order, pl) in plans.items():
            if type(pl) is RawSet:          # (its bytes were never read into host buffers)
                continue
            for p, final in zip(pl, finals[c]):
                if final and isinstance(p, RawChunk):
                    p.release()
        return self._put(self._ready, (chunk, cols, event, list(missing)))

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            futures, self._futures = list(self._futures), set()
        for f in futures:
            f.cancel()
        for t in self._threads:
            t.join(timeout=30)
        self._threads = []
        self._files.close()
