"""A table scan's IO pipeline: the chunks of a table on the scan's device,
one after the other, read ahead on background threads.

IO is decoupled from compute (Vortex): a decoder thread hands the chunks
after the one being computed to the decoding threads (Parquet row groups
decoded side by side by pyarrow, or their pages read for the device to
decode), an uploader thread copies them to the GPU through pinned buffers
on a side stream (glint.io.chunk_upload), and the reader hands out each
chunk once its copy is done, so the next chunk's decode and copy overlap
this chunk's kernels.

Chunks of columns stay cached on the device (warm runs) while the memory
manager has room for them, and decoded pieces in its host tier; evicted
chunks are read again from the source.
"""

from __future__ import annotations

import atexit
import collections
import queue
import threading
import time
import weakref
from concurrent.futures import Future

import torch

from glint.columnar.column import Column
from glint.io.cached_columns import CompactColumn, check, compact, compact_nbytes, expand, narrow_for
from glint.io.chunk_upload import ChunkUploader
from glint.io.file_reads import FileHandles
from glint.io.parquet_source import decode_pool
from glint.io.raw_chunks import RAW_CODECS, RawChunk, RawSet
from glint.io.transfer import adopt
from glint.runtime import trace
from glint.runtime.spill import column_nbytes

SNAPPY = RAW_CODECS["SNAPPY"]
# with the host_dictionaries setting, a raw chunk's dictionary page of at
# least this many bytes (as stored) is decompressed by the decoding threads,
# not on the GPU (RawChunk.with_host_dictionary). Off by default since the
# GPU cuts large snappy pages into blocks (glint.kernels.parquet_raw.split_pages):
# 22 cold TPC-H SF 10 queries took 15.0 s with it, 8.3-8.7 s without (H200).
HOST_DICTIONARY_BYTES = 16 << 10
# a scan keeps at most this many string dictionary pages parsed (past it, a
# task's own; a page is at most raw_chunks.STRING_DICTIONARY_BYTES)
SEEN_PAGES = 4096
PREFETCH = 2  # chunks decoded / uploaded ahead of the one being computed
# rows a decoding task reads at least (whole row groups of one file in one
# pyarrow call): a call per row group costs several times more per row
MIN_UNIT_ROWS = 1 << 19
_DONE = object()
# the readers whose threads run, closed at exit (see close_all)
_OPEN: weakref.WeakSet = weakref.WeakSet()


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


def cache_key(table, chunk_rows: int, chunk, column: str) -> tuple:
    """A chunk's column's key in the device cache (a part of chunk
    ``index``, glint.io.fragments.Chunk, is cached apart from the whole)."""
    if chunk.part:
        return ("table", table.uid, chunk_rows, chunk.index, column, chunk.pieces)
    return ("table", table.uid, chunk_rows, chunk.index, column)


def cached_in_full(ctx, table, chunk, columns) -> bool:
    """Whether the device cache holds every one of the chunk's columns."""
    mm = ctx.memory
    return mm is not None and all(
        mm.cache_peek(cache_key(table, ctx.chunk_rows, chunk, c)) is not None for c in columns
    )


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


class ChunkReader:
    """Iterates (chunk, {column: Column on the device}) for the given chunks
    of a table (glint.io.table.Table), reading ahead on background threads.
    Closing it stops the threads. ``ctx``: the run's execution context (its
    device, memory manager, IO counters, chunk size, pinned buffers and
    decoding checks: glint.exec.base.ExecContext)."""

    def __init__(self, ctx, table, columns, chunks):
        self.ctx, self.table, self.columns, self.chunks = ctx, table, list(columns), chunks
        self.device = ctx.device
        self.settings = settings = ctx.settings
        self._stop = threading.Event()
        self._files = FileHandles()  # the files the scan reads as stored, kept open while it runs
        self._lock = threading.Lock()
        # copies and decoding on the device (the upload thread's work)
        self.uploader = ChunkUploader(ctx, table, self._files, self._lock)
        self.cuda = self.uploader.cuda
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
        self._priority = (0, 0)  # of the chunk the decoding loop is at
        self._decoded: queue.Queue = queue.Queue(PREFETCH)
        self._ready: queue.Queue = queue.Queue(PREFETCH)
        self._threads: list[threading.Thread] = []
        # decoding tasks not yet consumed, cancelled when the scan stops early.
        # (Only those: a finished task's Future holds its result, the piece's
        # device columns, and keeping every Future kept every piece of the scan
        # alive beside the chunks made of them, so a scan of N bytes held 2N.)
        self._futures: set = set()
        # columns decoded from their Parquet pages on the scan's device
        # (the parquet_decode setting): on CUDA by default ("auto") those
        # the GPU decodes from their bytes as stored ("raw"); "device" adds
        # the numeric columns whose pages the host plans (NULLs, other
        # codecs; on the CPU too); "host": none, all by pyarrow. On the CPU
        # "raw" only when asked for (the reference decoder: tests)
        mode = settings.parquet_decode
        if mode == "device":
            cols = table.device_columns(self.columns)
            if self.cuda:
                cols += [c for c in table.raw_columns(self.columns, settings.raw_strings) if c not in cols]
        elif mode == "raw" or (mode == "auto" and self.cuda):
            cols = table.raw_columns(self.columns, settings.raw_strings)
        else:
            cols = []
        self.device_cols = frozenset(cols)
        # of those, the VARCHAR columns whose codes the GPU decodes (the
        # strings of each row group's dictionary page read by the host)
        self.string_cols = frozenset(c for c in cols if table.schema[c].is_string)
        mm = ctx.memory
        # the chunks this scan will take from the device cache are the run's
        # own from now on: not evicted to cache the others (MemoryManager.cache_put)
        mm.cache_touch(self._key(ch, c) for ch in chunks for c in self.columns)
        # the chunks it caches are kept compact (glint.io.cached_columns) where
        # the cache is short of room: under a memory limit the user set, or
        # once it has evicted for room in its last eight runs (the compact_cache setting)
        mode = settings.compact_cache
        self.compact = mode == "on" or (mode == "auto" and self.cuda and mm.short_of_room())

    def _key(self, chunk, column):
        return cache_key(self.table, self.ctx.chunk_rows, chunk, column)

    def _check_cached(self) -> None:
        """The compact cache entries this scan will use whose range was not
        checked yet: their flags read in one wait (a flag that is set drops
        its entry: the chunk is read again, and kept wide from then on)."""
        mm = self.ctx.memory
        if not mm.compact_held:  # (no compact chunk was ever cached: nothing to look up)
            return
        got = {}
        for ch in self.chunks:
            for c in self.columns:
                key = self._key(ch, c)
                v = mm.cache_peek(key)
                if type(v) is CompactColumn and not v.checked:
                    got[key] = v
        if got:
            for key, ok in zip(got, check(got.values())):
                if not ok:
                    self._drop_compact(key)

    def _drop_compact(self, key) -> None:
        mm = self.ctx.memory
        mm.wide_keys.add(key)
        mm.cache_drop(lambda k: k == key)

    def _cached(self, chunk, column):
        """The device cache's value for a chunk's column, or None (a compact
        one whose range was not checked yet is checked here, one wait: an
        entry cached by an earlier scan of the same run)."""
        key = self._key(chunk, column)
        v = self.ctx.memory.cache_get(key)
        if type(v) is CompactColumn and not check([v])[0]:
            self._drop_compact(key)
            return None
        return v

    def _expanded(self, cols: dict) -> dict:
        """A chunk's columns as glint computes on them: the compact ones
        from the cache widened (on the current stream; room made for them
        from other runs' cache entries only: the run's own are the chunks
        its scans read next, and a chunk in flight has the working reserve)."""
        narrow = [c for c, v in cols.items() if type(v) is CompactColumn]
        if not narrow:
            return cols
        mm = self.ctx.memory
        need = sum(len(cols[c]) * cols[c].wide.itemsize for c in narrow)
        with mm.allocating():
            mm.make_room(need, spare_this_run=True)
            return {c: expand(v) for c, v in cols.items()}

    def _cache(self, chunk, column: str, col) -> None:
        """Keeps a chunk's column read from the host in the device cache
        (compact where the scan keeps it so and it narrows: made only once
        the cache has made room for it, see MemoryManager.cache_room)."""
        mm = self.ctx.memory
        key = self._key(chunk, column)
        to = None
        if self.compact and key not in mm.wide_keys:
            to = narrow_for(col, self.table.chunk_stats(chunk, column) if col.dictionary is None else None)
        if to is None:
            kept = mm.cache_put(key, col, column_nbytes(col))
        else:
            nbytes = compact_nbytes(col, to)
            kept = mm.cache_room(nbytes) and mm.cache_put(key, compact(col, None, to), nbytes)
            mm.compact_held = mm.compact_held or kept
        io = self.ctx.io
        io.cache_kept += kept
        io.cache_refused += not kept
        io.cache_evicted_own = mm.own_evictions

    def __iter__(self):
        mm, io = self.ctx.memory, self.ctx.io
        if not self._threads:
            self._check_cached()
        # chunks already resident in full need no threads at all (a reader
        # started ahead of the query reads from the first chunk)
        first_miss = (
            0
            if self._threads
            else next(
                (
                    i
                    for i, c in enumerate(self.chunks)
                    if any(mm.cache_peek(self._key(c, col)) is None for col in self.columns)
                ),
                None,
            )
        )
        try:
            for i, chunk in enumerate(self.chunks):
                if first_miss is None or i < first_miss:
                    cols = {c: self._cached(chunk, c) for c in self.columns}
                    if all(v is not None for v in cols.values()):
                        cols = self._expanded(cols)
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
                    for c in uploaded:
                        adopt(cols[c], stream)
                for c in uploaded:
                    self._cache(chunk, c, cols[c])
                cols = self._expanded(cols)
                io.chunks += 1
                io.cache_hits += len(cols) - len(uploaded)  # (the columns the decoding loop found cached)
                io.scanned_bytes += sum(column_nbytes(v) for v in cols.values())
                t0 = time.perf_counter()
                yield chunk, cols
                trace.add("compute", t0, time.perf_counter(), table=self.table.name, chunk=chunk.index)
        finally:
            self.close()

    def first_chunk_cached(self) -> bool:
        mm = self.ctx.memory
        return all(mm.cache_peek(self._key(self.chunks[0], col)) is not None for col in self.columns)

    def start(self) -> None:
        """Starts reading now, from the first chunk (read-ahead: start_scans)."""
        if not self._threads:
            self._check_cached()
            self._start(self.chunks)

    # -------------------------------------------------------------- threads
    def _start(self, chunks) -> None:
        dec = threading.Thread(target=self._decode_loop, args=(chunks,), name="glint-scan-decode", daemon=True)
        up = threading.Thread(target=self._upload_loop, args=(len(chunks),), name="glint-scan-upload", daemon=True)
        self._threads = [dec, up]
        _OPEN.add(self)
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
                    raise RuntimeError("glint scan: the reader threads stopped without a result") from None
                continue
            if isinstance(item, BaseException):
                raise item
            return item

    def _decode_loop(self, chunks) -> None:
        """Hands each chunk's fragments to the decoding threads: one task per
        fragment read (shared by the chunks a fragment spans) and one per
        piece of a chunk (slice, convert to glint's columns, copy to the
        device through pinned buffers). Runs at most PREFETCH chunks ahead."""
        io = self.ctx.io
        pool = decode_pool(self.settings.decode_threads)
        workers = pool._max_workers
        reads: dict = {}  # (fragment, columns) -> future of its Arrow table
        plans: dict = {}  # (fragment, column) -> future of its ChunkPlan (pages on the host)
        try:
            for chunk in chunks:
                if self._stop.is_set():
                    return
                self._priority = self._priority_of(chunk)
                cached = {c: self._cached(chunk, c) for c in self.columns}
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
                    on_device = tuple(
                        c
                        for c in missing
                        if c in self.device_cols
                        and (
                            c not in self.string_cols
                            or type(string_raws[c]) is RawSet
                            or all(r is not None for r in string_raws[c])
                        )
                    )
                    host_cols = tuple(c for c in missing if c not in on_device)
                    decoded = set(on_device)  # columns some piece of the chunk decodes from its file
                    set_bytes = 0  # (of those, the RawSets': counted as they are made)
                    for run in _units(chunk, self.table.fragments, max(MIN_UNIT_ROWS, chunk.rows // (2 * workers))):
                        frag_list, start, stop = (run, 0, 0) if isinstance(run, list) else ([run[0]], run[1], run[2])
                        # the host tier first: what is there is only copied up
                        held = self._host_get(frag_list, start, stop, host_cols)
                        need = tuple(c for c in host_cols if c not in held)
                        decoded.update(need)
                        read = None
                        if need and not isinstance(run, list):  # part of a fragment other chunks share
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
                        rs = (
                            string_raws.get(c)
                            if c in self.string_cols
                            else None
                            if self.settings.host_dictionaries
                            else self.table.raw_set(order, c)
                        )
                        if type(rs) is RawSet:
                            chunk_plans[c] = (
                                order,
                                self._submit(pool, self._string_set, rs) if rs.codes else rs,
                                final,
                            )
                            decoded.discard(c)
                            set_bytes += rs.nbytes
                            continue
                        new = [f for f in order if (f, c) not in plans]
                        if new and c in self.string_cols:
                            # the dictionary pages of the chunk's row groups: a task per
                            # string_task_groups of them (a chunk's first upload waits
                            # for all of them: one task took 70 ms for TPC-H Q1's 292)
                            by_frag = dict(zip(order, string_raws[c]))
                            step = self.settings.string_task_groups
                            for a in range(0, len(new), step):
                                part = new[a : a + step]
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
        except BaseException as e:  # handed to the consumer, which raises it
            self._put(self._decoded, e)
            self._put(self._ready, e)

    def _priority_of(self, chunk):
        # the scans' tasks ordered by when the query needs them (the
        # scan_priority setting): 1, by (the scan's rank, the chunk); 2, by
        # (the chunk, the scan's rank): every scan's first chunk first; 0:
        # first come, first served
        order = self.settings.scan_priority
        if order == 2:
            return (chunk.index, self.rank)
        return (self.rank, chunk.index) if order else (0, 0)

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
            data = (
                self.table.read_fragments(frags, columns) if read is None else read.result().slice(start, stop - start)
            )
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
        if self.settings.host_dictionaries and raw.codec == SNAPPY and raw.dict_span >= HOST_DICTIONARY_BYTES:
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

    def _upload_loop(self, n: int) -> None:
        """Puts each chunk together from its pieces, in order (on CUDA on the
        copies' stream, so the event it hands on covers copies and concat).
        On CUDA a chunk's copies start before the chunk before it is
        finished (its pages decoded): the staging threads fill the next
        chunk's buffers while this thread queues the decoding."""
        # chunks whose copies started, handed on (decoded) in order: the
        # oldest once upload_ahead (the setting) later ones have started, so
        # that the staging threads always have a chunk's windows to fill
        # while this thread queues the decoding, or when no chunk is ready
        # to start
        pending: collections.deque = collections.deque()
        ahead = self.settings.upload_ahead
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
                del parts  # the pieces, now in host (and then the chunk's columns)
                begun = None
                if missing and self.cuda:
                    begun = self.uploader.start_to_device(chunk, host, plans, self._priority_of(chunk))
                elif missing:
                    plans = self.uploader.decode_here(chunk, host, plans, cols)
                now = (chunk, cols, missing, host, plans, finals, begun)
                if begun is None:
                    while pending:
                        if not self._hand_on(*pending.popleft()):
                            return
                    if not self._hand_on(*now):
                        return
                    continue
                if len(pending) >= ahead and not self._hand_on(*pending.popleft()):
                    return
                pending.append(now)
        except BaseException as e:
            self._put(self._ready, e)

    def _hand_on(self, chunk, cols, missing, host, plans, finals, begun) -> bool:
        """A chunk to the consumer (on CUDA its copies finished and its pages
        decoded first); False when the scan stopped."""
        event = None
        if begun is not None:
            event = self.uploader.to_device(chunk, host, plans, cols, begun)
        # raw chunks' bytes are on the device now: their buffers are reused
        for c, (_order, pl) in plans.items():
            if type(pl) is RawSet:  # (its bytes were never read into host buffers)
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
        _OPEN.discard(self)


@atexit.register
def close_all() -> None:
    """Closes the scans still open when the process exits (a query that
    failed or was left unfinished): their threads copy and decode in torch
    and pyarrow, and a daemon thread inside either when the interpreter
    shuts down aborts the process (see glint.runtime.priority_pool)."""
    for reader in list(_OPEN):
        reader.close()
