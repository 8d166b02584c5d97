"""A scan's chunks put on its device (the second half of
glint.io.chunk_reader's pipeline): a chunk's host parts copied up through
pinned buffers (glint.io.transfer.StackedUpload), its columns' Parquet pages
copied up as stored and decoded there (glint.io.raw_decode, on the scan's
own CUDA streams), and the decoding's checks; on the CPU the pages are
decoded by the reference decoder.
"""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np
import torch
from torch.utils.weak import WeakIdKeyDictionary

from glint.columnar.column import Column, Dictionary, concat_columns
from glint.errors import GlintIOError
from glint.io.page_tier import TierCopy, tier_chunks
from glint.io.parquet_pages import layout_plans, to_device
from glint.io.pinned import staging_pool
from glint.io.raw_chunks import RawChunk, RawSet, string_codes
from glint.io.raw_decode import decode_raw_many, layout_raw, layout_raw_together
from glint.io.transfer import StackedUpload, narrow_type
from glint.runtime import trace
from glint.runtime.spill import column_nbytes

_RAW_KEY = ("raw columns",)
_STREAMS: dict = {}
_STREAMS_LOCK = threading.Lock()


def _scan_streams(device, count: int) -> list:
    """The scans' CUDA streams of a device, made once per process (``count``
    of them: the scan_streams setting of the connection that first asks)
    and shared by every scan (work on one stream runs in order, so sharing
    only orders it more). The chunks' copies run on the first, and the
    columns decoded from their pages on the others, beside the query's
    kernels and beside each other (the decoder's kernels wait on memory,
    one page or block a program: several chunks' at once fill the GPU
    better than one)."""
    device = torch.device(device)
    key = device.index if device.index is not None else torch.cuda.current_device()
    device = torch.device("cuda", key)
    with _STREAMS_LOCK:
        got = _STREAMS.get(key)
        if got is None:
            got = _STREAMS[key] = [torch.cuda.Stream(device) for _ in range(count)]
        return got


def _contiguous(c: Column) -> Column:
    """A host column over contiguous memory (a single part may be a strided
    view of Arrow's 128-bit DECIMALs)."""
    if c.data.is_contiguous():
        return c
    return Column(c.dtype, c.data.contiguous(), c.valid, c.dictionary)


# the value ranges of host parts seen (a part held in the host tier is copied
# up again at every warm scan: its range is found once)
_RANGES = WeakIdKeyDictionary()
_RANGES_LOCK = threading.Lock()


def _fits(data: torch.Tensor, dt) -> bool:
    """Whether every value of a host integer tensor fits numpy type ``dt``."""
    if data.numel() == 0:
        return True
    if data.dim() != 1 or data.dtype not in (torch.int32, torch.int64):
        return False
    with _RANGES_LOCK:
        got = _RANGES.get(data)
    if got is None:
        lo, hi = torch.aminmax(data)
        got = (int(lo), int(hi))
        with _RANGES_LOCK:
            _RANGES[data] = got
    info = np.iinfo(dt)
    return info.min <= got[0] and got[1] <= info.max


def _string_plans(plans: dict) -> dict:
    """The string columns among a chunk's plans ({column: (fragment order,
    plans)}): each one's plans replaced by its chunks with their codes in
    the chunk's own dictionary (raw_chunks.string_codes). Returns
    {column: that host dictionary}."""
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


class ChunkUploader:
    """Puts a scan's chunks on its device (see the module's docstring):
    the half of a ChunkReader that its upload thread runs. ``files``: the
    scan's open files; ``lock``: the scan's, held while the run's IO
    counters are added to."""

    def __init__(self, ctx, table, files, lock):
        self.ctx, self.table = ctx, table
        self.settings = ctx.settings
        self.device = ctx.device
        self.cuda = self.device.type == "cuda"
        # the stream the chunks are consumed on (their device buffers are allocated on it)
        self.compute_stream = torch.cuda.current_stream(self.device) if self.cuda else None
        self.side_streams = _scan_streams(self.device, self.settings.scan_streams) if self.cuda else []
        self._decodes = 0  # chunks decoded (the decoding streams are taken in turn)
        self._last_event = None
        self._files = files
        self._lock = lock

    def _device_dictionary(self, d):
        """A chunk's host dictionary (string_codes) on the device, copied on
        the current stream without waiting (see parquet_pages.to_device)."""
        return Dictionary(to_device(d.offsets, self.device), to_device(d.data, self.device), d.sorted_unique)

    def _host_column(self, chunk, column: str) -> Column:
        """A chunk's column read by pyarrow and copied up (a string column
        whose pages the device could not decode as codes: a PLAIN page, the
        writer's fallback once its dictionary grew; or bad data, which
        pyarrow then names)."""
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

    def _decode_pages(
        self, chunk, column: str, order, plans, data=None, layout=None, exact: bool = True, dictionary=None
    ):
        """A chunk's column from its fragments' plans, decoded on the scan's
        device (``data``: the plans' bytes already there; ``exact``: see
        glint.io.raw_decode.decode_raw; ``dictionary``: a string
        column's host dictionary, see string_codes): (Column, err)."""
        rows = sum(p.rows for p in plans)
        mm = self.ctx.memory
        t0 = time.perf_counter()
        try:
            if self.cuda:
                with mm.allocating():  # outside any reservation, like the read-ahead's copies
                    mm.make_room(rows * 17)
                    if dictionary is not None:
                        dictionary = self._device_dictionary(dictionary)
                    col, err = self.table.decode_device(
                        plans, column, self.device, data, layout, exact, dictionary, self.settings.snappy_split
                    )
            else:
                col, err = self.table.decode_device(plans, column, self.device, dictionary=dictionary)
        except GlintIOError as e:  # bad page data: which files (unless it says already)
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
        t0 = time.perf_counter()
        mm = self.ctx.memory

        @contextlib.contextmanager
        def room(nbytes):  # outside any reservation, like the read-ahead's copies
            with mm.allocating():
                mm.make_room(nbytes)
                yield

        values, valids, err = decode_raw_many(
            [(pl, la, base) for _, pl, la, base in raws.values()], data, room, self.settings.snappy_split
        )
        dicts = dicts or {}
        if dicts:
            with room(sum(d.offsets.numel() * 8 + d.data.numel() for d in dicts.values())):
                dicts = {c: self._device_dictionary(d) for c, d in dicts.items()}
        out = {}
        for (c, (order, pl, _, _)), v, valid in zip(raws.items(), values, valids):
            col = self.table.device_column(c, v, valid, dicts.get(c))
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
                if 2 * d.shape[0] < at:  # most of the buffer is not the chunk's: not kept
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
        The statistics are not trusted: the host's values are checked to
        fit (one pass of torch.aminmax, which leaves the GIL, over each part
        of a narrowed column), and a column that does not fit travels as it
        is. ``columns``: {column: its host parts}. The narrow_uploads setting
        turns it off."""
        if not self.settings.narrow_uploads:
            return {}
        out = {}
        for c, parts in columns.items():
            t = self.table.schema[c]
            if t.kind not in ("INTEGER", "BIGINT", "DATE") and not (t.kind == "DECIMAL" and t.precision <= 18):
                continue
            st = self.table.chunk_stats(chunk, c)
            if st is None or st[0] is None:
                continue
            dt = narrow_type(st[0], st[1], 4 if t.kind in ("INTEGER", "DATE") else 8)
            if dt is not None and all(_fits(p.data, dt) for p in parts):
                out[c] = dt
        return out

    def _start_upload(self, host: dict, raw: dict | None = None, narrow: dict | None = None, priority=None):
        """A chunk's host parts copied up as columns in one device buffer
        (see glint.io.transfer.StackedUpload; ``raw``: more buffers
        copied up as they are; ``narrow``: columns copied up in a narrower
        integer type): the copies started; _finish_upload waits for them."""
        up = StackedUpload(
            self.ctx.pinned_pool(),
            self.ctx.memory,
            host,
            self.compute_stream,
            raw,
            narrow,
            self.side_streams[0] if self.side_streams else None,
            self._files,
            self.settings.read_gap,
            self.ctx.forwarder(),
        )
        io = self.ctx.io

        def counted(nbytes, seconds):
            with self._lock:
                io.stage_s += seconds

        t0 = time.perf_counter()
        try:
            up.start(staging_pool(self.settings.staging_threads), counted, priority)
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
            self.ctx.io.pages_h2d_bytes += up.raw_bytes
            self.ctx.io.forwarded_bytes += up.forwarded
        return cols

    def _tier(self):
        """(the host tier of chunks as stored, whether it takes new chunks
        now), or (None, False) where there is none or it has nothing to give."""
        mm = self.ctx.memory
        tier = mm.pages
        if tier is None:
            return None, False
        admit = tier.admits(mm)
        return (tier, admit) if admit or tier.bytes else (None, False)

    def _count_tier(self, segments) -> None:
        """The run's IO counters: the chunks copied up from the host tier
        were counted as read from their files when the chunk was planned
        (ChunkReader counts a RawSet's bytes then); the fresh ones were."""
        placements = {id(seg.placement): seg.placement for _, seg in segments if type(seg) is TierCopy}
        for p in placements.values():
            self._count_hits(p)

    def _count_hits(self, placement) -> None:
        with self._lock:
            io = self.ctx.io
            io.tier_bytes += placement.hit_bytes()
            io.file_bytes = max(0, io.file_bytes - placement.hit_bytes(stored=True))

    def start_to_device(self, chunk, host: dict, plans: dict, priority):
        """The first half of to_device: the chunk's copies started (their
        staging windows at ``priority`` in the staging pool), so that the
        staging threads fill its buffers while the upload thread decodes
        the chunk before it."""
        layouts, raw, bases, together = {}, {}, {}, {}
        dicts = _string_plans(plans)
        # a chunk's columns decoded from their bytes as stored go through the
        # page kernels together (the raw_together setting; off: one column at
        # a time): the host's part of a decode (tens of torch calls and kernel
        # launches) is paid once
        at_once = self.settings.raw_together
        for c, (_order, pl) in plans.items():
            if type(pl) is RawSet and at_once:
                together[c] = pl
                continue
            if all(type(p) is type(pl[0]) and p.dtype == pl[0].dtype for p in pl):
                if isinstance(pl[0], RawChunk) and at_once:
                    together[c] = pl
                    continue
                la = layouts[c] = layout_raw(pl) if isinstance(pl[0], RawChunk) else layout_plans(pl)
                raw[("pages", c)] = (la.total, la.segments)
        if together:
            # the raw columns' bytes in one buffer, row group by row group
            # (each column's layout in the whole buffer: base 0)
            tier, admit = self._tier()
            lays, total, segments = layout_raw_together(together, self.settings.run_gap, tier, admit)
            if tier is not None:
                self._count_tier(segments)
            layouts.update(lays)
            bases = dict.fromkeys(together, 0)
            raw[_RAW_KEY] = (total, segments)
        started = self._start_upload(host, raw, self._narrow_types(chunk, host), priority) if host or raw else None
        return layouts, started, bases, dicts

    def to_device(self, chunk, host: dict, plans: dict, cols: dict, begun):
        """A chunk's missing columns on the device (into ``cols``): host
        parts staged through pinned buffers, and columns decoded from their
        pages (the pages' bytes staged the same way, then one kernel per
        column). ``begun``: what start_to_device returned for the chunk.
        Returns the event the consumer waits for."""
        layouts, started, bases, dicts = begun
        if started is None:
            got, event = {}, None
        else:
            got = self._finish_upload(started)
            event = self._last_event
        cols.update((c, got[c]) for c in host)
        if not plans:
            return event
        errs, main = self._decode_on_streams(chunk, plans, cols, got, layouts, bases, dicts, event)
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
                            cols[c], err = self._decode_pages(
                                chunk,
                                c,
                                order,
                                pl,
                                got.get(("pages", c)),
                                layouts.get(c),
                                exact=True,
                                dictionary=dicts.get(c),
                            )
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
                raise GlintIOError(
                    f"Cannot read {self.table.describe_fragments(frags)}: bad page data "
                    f"in column(s) {', '.join(sorted(bad))} (a dictionary index past the "
                    "dictionary, an index stream shorter than its page, or a page that does not "
                    "decompress to its size)"
                )
            event = torch.cuda.Event()
            event.record(main)
        return event

    def _decode_on_streams(
        self, chunk, plans: dict, cols: dict, got: dict, layouts: dict, bases: dict, dicts: dict, event
    ):
        """to_device's decoding: each column decoded from the pages' bytes
        copied up (``got``; ``event``: their copies' end) into ``cols``, on
        the scan's streams. Returns ({column: its decoding's error flag},
        the stream that has waited for all of them)."""
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
                for c, base in bases.items():  # (each column's bytes, for a re-decode below)
                    got[("pages", c)] = data[base : base + layouts[c].total]
                if st is not self.compute_stream:
                    data.record_stream(st)
                with torch.cuda.stream(st):
                    decoded, err = self._decode_raw_together(
                        chunk, {c: (*plans[c], layouts[c], base) for c, base in bases.items()}, data, dicts
                    )
                if st is not self.compute_stream:
                    err.record_stream(self.compute_stream)  # read there at the query's end
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
                    col, err = self._decode_pages(
                        chunk, c, order, pl, buf, layouts.get(c), exact=False, dictionary=dicts.get(c)
                    )
                cols[c] = col
                if err is not None:
                    if st is not self.compute_stream:
                        err.record_stream(self.compute_stream)  # read there at the query's end
                    errs[c] = err
        main = sides[0]
        for st in used:
            if st is not main:
                main.wait_stream(st)
        return errs, main

    def decode_here(self, chunk, host: dict, plans: dict, cols: dict) -> dict:
        """A chunk's missing columns without copies (the CPU): host parts
        put together, columns decoded from their pages by the reference
        decoder (a string column whose pages it cannot take as codes read
        by pyarrow, see _host_column). Returns the plans as decoded (a
        RawSet as its RawChunks)."""
        for c in host:
            cols[c] = _contiguous(concat_columns(host[c]))
        tier, admit = self._tier()
        placements = []
        try:
            listed = {}
            for c, (order, pl) in plans.items():  # (RawSets: the reference, as RawChunks)
                if type(pl) is RawSet and tier is not None:
                    pl, placement = tier_chunks(pl, tier, admit, self._files)
                    placements.append(placement)
                    self._count_hits(placement)
                listed[c] = (order, list(pl))
            plans = listed
            dicts = _string_plans(plans)
            for c, (order, pl) in plans.items():
                try:
                    cols[c] = self._decode_pages(chunk, c, order, pl, dictionary=dicts.get(c))[0]
                except GlintIOError:
                    if c not in dicts:
                        raise
                    cols[c] = self._host_column(chunk, c)  # (see _host_column)
        finally:
            for p in placements:
                tier.release(p)
        return plans
