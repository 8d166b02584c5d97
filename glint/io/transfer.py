"""Host -> device copies through a pool of pinned buffers (Vortex's IO path;
Theseus's pool of fixed-size page-locked buffers allocated once).

Decoded columns sit in ordinary (pageable) host memory, which the GPU copies
from at a fraction of the bus speed (6.5 GB/s pageable against 55 GB/s
pinned, measured on an H100 host), and pinning memory on the fly is slower
still (1.2 GB/s). So a
few fixed-size pinned buffers are allocated once per device and reused: each
piece of a column is copied into a free buffer by the CPU, then to the device
by DMA on a side stream while the CPU fills the next buffer. A buffer is reused
only after the copy out of it has finished (an event per buffer).

The copies run on the pool's own CUDA stream; the consumer makes its stream
wait on the returned event before it touches the tensors, and the tensors are
marked as used by the consumer's stream so the caching allocator does not hand
their memory out early.
"""

from __future__ import annotations

import bisect
import threading
import time

import numpy as np
import torch

from glint.columnar.column import Column
from glint.io.file_reads import FileRange, FileRuns, read_file_into
from glint.io.page_tier import TierCopy
from glint.io.pinned import BUFFER_BYTES, PinnedPool
from glint.runtime import trace
from glint.runtime.settings import Settings


class Uploader:
    """Copies host tensors to one CUDA device through a :class:`PinnedPool`."""

    def __init__(self, pool: PinnedPool, memory=None):
        self.pool = pool
        self.memory = memory  # the connection's MemoryManager: room is made before each copy
        self.bytes = 0

    def _empty(self, shape, dtype) -> torch.Tensor:
        """Device memory for a copy. The scan's read-ahead allocates outside
        any operator's reservation, so it first makes room in the budget
        (older cached table chunks go); if the allocator still refuses (its
        cap counts fragmentation, which the budget cannot see), every cached
        chunk is dropped, the allocator's free blocks are returned, and the
        allocation is tried once more before the error goes up."""
        dev = self.pool.device
        n = int(np.prod(shape, dtype=np.int64)) * torch.empty((), dtype=dtype).element_size()
        try:
            if self.memory is None:
                return torch.empty(shape, dtype=dtype, device=dev)
            # room and allocation together: the decoding threads would otherwise
            # all see the same room and all take it
            with self.memory.allocating():
                self.memory.make_room(n)
                return torch.empty(shape, dtype=dtype, device=dev)
        except torch.OutOfMemoryError:
            if self.memory is not None:
                self.memory.cache_drop()
            torch.cuda.empty_cache()
            return torch.empty(shape, dtype=dtype, device=dev)

    def tensor(self, t: torch.Tensor) -> torch.Tensor:
        dev = self.pool.device
        if t.device.type != "cpu":
            return t.to(dev)
        if t.dim() != 1 and not t.is_contiguous():
            t = t.contiguous()
        with torch.cuda.device(dev), torch.cuda.stream(self.pool.stream):
            out = self._empty(t.shape, t.dtype)
            n = t.numel() * t.element_size()
            if n == 0:
                return out
            if t.is_pinned() and t.is_contiguous():
                out.copy_(t, non_blocking=True)
                self.bytes += n
                return out
            # a 1-D source may be strided (DECIMAL's low words inside Arrow's
            # 128-bit values): the copy into the pinned buffer gathers it
            src_np = t.numpy() if t.dim() == 1 else t.reshape(-1).numpy()
            if t.dtype == torch.bool:
                src_np = src_np.view(np.uint8)
            size = t.element_size()
            dst = out.reshape(-1)
            step = self.pool.buffer_bytes // size
            for off in range(0, src_np.shape[0], step):
                k = min(step, src_np.shape[0] - off)
                buf = self.pool.acquire()
                try:
                    # numpy's copy: one thread, GIL released; torch's CPU copy would
                    # start its own parallel team from each of the decoding threads
                    staged = buf[: k * size].view(t.dtype)
                    staged.numpy().view(src_np.dtype)[:] = src_np[off : off + k]
                    dst[off : off + k].copy_(staged, non_blocking=True)
                except BaseException:
                    self.pool.put_back(buf)
                    raise
                ev = torch.cuda.Event()
                ev.record(self.pool.stream)
                self.pool.release(buf, ev)
            self.bytes += n
            return out

    def column(self, c: Column) -> Column:
        return self.columns({0: c})[0]

    def columns(self, cols: dict) -> dict:
        """Columns on the device, their host tensors packed into as few pinned
        buffers as hold them: one copy to the device per buffer, and the
        columns' tensors are views of that copy. (Per tensor, the Python work
        of staging, competing for the GIL with every other decoding thread,
        cost more than the copies.)"""
        tensors: list[torch.Tensor] = []

        def take(t: torch.Tensor):
            tensors.append(t)
            return len(tensors) - 1

        shapes = {}
        for k, c in cols.items():
            d = c.dictionary
            dref = None
            if d is not None:
                dd = d.map_tensors(lambda t: t)  # cut to the bytes it spans
                dref = (take(dd.offsets), take(dd.data), dd.sorted_unique)
            shapes[k] = (c.dtype, take(c.data), None if c.valid is None else take(c.valid), dref)
        out = self._pack(tensors)

        def dictionary(ref):
            if ref is None:
                return None
            from glint.columnar.column import Dictionary

            return Dictionary(out[ref[0]], out[ref[1]], ref[2])

        return {
            k: Column(dt, out[di], None if vi is None else out[vi], dictionary(dr))
            for k, (dt, di, vi, dr) in shapes.items()
        }

    def _pack(self, tensors: list[torch.Tensor]) -> list[torch.Tensor]:
        dev = self.pool.device
        cap = self.pool.buffer_bytes
        out: list = [None] * len(tensors)
        group: list[tuple[int, int, int]] = []  # (tensor index, byte offset, bytes)
        used = 0

        def flush():
            nonlocal group, used
            if not group:
                return
            with torch.cuda.device(dev), torch.cuda.stream(self.pool.stream):
                dst = self._empty((used,), torch.uint8)
                buf = self.pool.acquire()
                try:
                    for i, off, n in group:
                        src = tensors[i].numpy()
                        if src.dtype == np.bool_:
                            src = src.view(np.uint8)
                        if src.ndim != 1:
                            src = src.reshape(-1)
                        buf[off : off + n].numpy().view(src.dtype)[:] = src
                    dst.copy_(buf[:used], non_blocking=True)
                except BaseException:
                    self.pool.put_back(buf)
                    raise
                ev = torch.cuda.Event()
                ev.record(self.pool.stream)
            self.pool.release(buf, ev)
            for i, off, n in group:
                t = tensors[i]
                out[i] = dst[off : off + n].view(t.dtype).view(t.shape)
            self.bytes += used
            group, used = [], 0

        for i, t in enumerate(tensors):
            n = t.numel() * t.element_size()
            if t.device.type != "cpu" or n > cap // 2 or n == 0:
                out[i] = self.tensor(t)  # large ones on their own, in pieces
                continue
            off = (used + 15) // 16 * 16  # aligned for any element type
            if off + n > cap:
                flush()
                off = 0
            group.append((i, off, n))
            used = off + n
        flush()
        return out

    def done(self) -> torch.cuda.Event:
        """An event the consumer waits on before using what was uploaded."""
        ev = torch.cuda.Event()
        ev.record(self.pool.stream)
        return ev


def adopt(c: Column, stream) -> None:
    """Mark a column's device tensors as used by `stream` (the consumer's), so
    the allocator keeps them until that stream is done with them."""
    for t in column_tensors(c):
        if t.is_cuda:
            t.record_stream(stream)


def column_tensors(c: Column) -> list[torch.Tensor]:
    out = [c.data] + ([c.valid] if c.valid is not None else [])
    d = c.dictionary
    if d is not None:
        out += list(d.tensors())
    return out


# ------------------------------------------------------------------ stacked uploads
class _Write:
    """Elements for the device buffer at byte ``off``: ``src`` (a numpy array,
    maybe strided), plus ``add``; or ``count`` copies of ``fill``; or
    ``count`` bytes of files (``file``: a glint.io.file_reads.FileRange
    or FileRuns, read straight into the pinned buffer)."""

    __slots__ = ("off", "src", "add", "fill", "count", "dtype", "file")

    def __init__(self, off, dtype, src=None, add=0, fill=None, count=0, file=None):
        self.off, self.dtype, self.src, self.add, self.fill = off, np.dtype(dtype), src, add, fill
        self.file = file
        self.count = int(src.shape[0]) if src is not None else int(count)


_U8 = np.dtype(np.uint8)


def _raw_writes(segments) -> list[_Write]:
    """_Writes of (offset, bytes or glint.io.file_reads.FileRange or
    FileRuns) segments, empty ones left out (made without _Write's general
    constructor: a cold scan chunk has thousands, made under the GIL)."""
    out = []
    new = _Write.__new__
    for off, seg in segments:
        if type(seg) is FileRange or type(seg) is FileRuns:
            n = seg.size
            if not n:
                continue
            w = new(_Write)
            w.off, w.dtype, w.src, w.add, w.fill, w.count, w.file = off, _U8, None, 0, None, n, seg
        else:
            if not len(seg):
                continue
            w = _Write(off, _U8, src=np.frombuffer(seg, dtype=np.uint8))
        out.append(w)
    return out


class _Spec:
    """Where one column's components lie in the piece's device buffer."""

    __slots__ = ("dtype", "rows", "data", "valid", "offsets", "bytes", "sorted_unique", "wide")

    def column(self, dst: torch.Tensor):
        from glint.columnar.column import Column, Dictionary

        def view(part):
            off, n, dt = part
            return dst[off : off + n * dt.itemsize].view(_TORCH_OF[dt])

        data = view(self.data)
        if self.data[2] == np.uint8 and self.dtype.kind == "BOOLEAN":
            data = data.view(torch.bool)
        valid = view(self.valid).view(torch.bool) if self.valid is not None else None
        d = None
        if self.offsets is not None:
            d = Dictionary(view(self.offsets), view(self.bytes), self.sorted_unique)
        return Column(self.dtype, data, valid, d)


_TORCH_OF = {
    np.dtype(np.int8): torch.int8,
    np.dtype(np.uint8): torch.uint8,
    np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32,
    np.dtype(np.int64): torch.int64,
    np.dtype(np.float32): torch.float32,
    np.dtype(np.float64): torch.float64,
}


def _np(t: torch.Tensor) -> np.ndarray:
    a = t.numpy()
    return a.view(np.uint8) if a.dtype == np.bool_ else a


class _StackLayout:
    """The layout of a piece's device buffer: every component of every
    column at a 16-byte aligned offset (so no element straddles a 16 MB
    window), and the writes that fill it, in offset order."""

    def __init__(self):
        self.total = 0
        self.writes: list[_Write] = []

    def _place(self, count: int, dtype) -> tuple[int, int, np.dtype]:
        dtype = np.dtype(dtype)
        off = (self.total + 15) // 16 * 16
        self.total = off + count * dtype.itemsize
        return off, count, dtype

    def add(self, parts, narrow=None) -> _Spec:
        """``narrow``: a narrower signed integer type that holds every value
        of the parts (their min and max, from the file's statistics): the
        values travel in it and are widened on the device (see widen)."""
        spec = _Spec()
        spec.dtype = parts[0].dtype
        rows = sum(len(p) for p in parts)
        spec.rows = rows
        srcs = [_np(p.data) for p in parts]
        strings = parts[0].dictionary is not None
        dt = srcs[0].dtype
        spec.wide = None
        if narrow is not None and not strings and dt.kind == "i" and np.dtype(narrow).itemsize < dt.itemsize:
            dt, spec.wide = np.dtype(narrow), dt
        spec.data = self._place(rows, dt)
        if strings:
            # entries and bytes of each part's dictionary (a part's offsets may
            # start past 0: a slice of a larger Arrow buffer)
            dicts = [p.dictionary for p in parts]
            offs = [_np(d.offsets) for d in dicts]
            spans = [(int(o[0]), int(o[-1])) for o in offs]
            entries = sum(o.shape[0] - 1 for o in offs)
            nbytes = sum(hi - lo for lo, hi in spans)
            odt = np.int64 if nbytes > (1 << 31) - 1 else np.int32
        # codes / values
        off = spec.data[0]
        base = 0
        for i, a in enumerate(srcs):
            add = base if strings else 0
            self.writes.append(_Write(off, spec.data[2], src=a, add=add))
            off += a.shape[0] * spec.data[2].itemsize
            if strings:
                base += offs[i].shape[0] - 1
        # validity
        spec.valid = None
        if any(p.valid is not None for p in parts):
            spec.valid = self._place(rows, np.uint8)
            off = spec.valid[0]
            for p in parts:
                if p.valid is None:
                    self.writes.append(_Write(off, np.uint8, fill=1, count=len(p)))
                else:
                    self.writes.append(_Write(off, np.uint8, src=_np(p.valid)))
                off += len(p)
        spec.offsets = spec.bytes = None
        spec.sorted_unique = False
        if strings:
            spec.sorted_unique = len(parts) == 1 and dicts[0].sorted_unique
            spec.offsets = self._place(entries + 1, odt)
            off = spec.offsets[0]
            at = 0
            for o, (lo, hi) in zip(offs, spans):
                self.writes.append(_Write(off, odt, src=o[:-1], add=at - lo))
                off += (o.shape[0] - 1) * np.dtype(odt).itemsize
                at += hi - lo
            self.writes.append(_Write(off, odt, fill=nbytes, count=1))
            spec.bytes = self._place(nbytes, np.uint8)
            off = spec.bytes[0]
            for d, (lo, hi) in zip(dicts, spans):
                if hi > lo:
                    self.writes.append(_Write(off, np.uint8, src=_np(d.data)[lo:hi]))
                off += hi - lo
        return spec


def widen(col, wide: np.dtype, empty=None):
    """A column whose values travelled narrowed (_StackLayout.add), with
    its values in ``wide`` again: one conversion kernel on the current
    stream; its validity copied out of the upload's buffer too, so that the
    buffer (narrow values and all) is given back. ``empty(shape, dtype)``
    allocates the device memory (Uploader._empty: room made in the budget)."""
    from glint.columnar.column import Column

    empty = empty or (lambda shape, dt: torch.empty(shape, dtype=dt, device=col.data.device))
    data = empty(tuple(col.data.shape), _TORCH_OF[np.dtype(wide)])
    data.copy_(col.data)
    valid = None
    if col.valid is not None:
        valid = empty(tuple(col.valid.shape), torch.bool)
        valid.copy_(col.valid)
    return Column(col.dtype, data, valid, col.dictionary)


def narrow_type(lo, hi, itemsize: int):
    """The narrowest signed integer type (of fewer than ``itemsize`` bytes)
    holding every value in [lo, hi], or None.

    >>> narrow_type(1, 50, 8), narrow_type(-129, 5, 8), narrow_type(0, 2**31, 8), narrow_type(0, 9, 1)
    (dtype('int8'), dtype('int16'), None, None)
    """
    if not isinstance(lo, int) or not isinstance(hi, int) or isinstance(lo, bool) or isinstance(hi, bool):
        return None
    for dt in (np.int8, np.int16, np.int32):
        info = np.iinfo(dt)
        if np.dtype(dt).itemsize < itemsize and info.min <= lo and hi <= info.max:
            return np.dtype(dt)
    return None


# The read_gap setting: file bytes between two FileRange writes (a column's
# chunks laid out by raw_decode.layout_raw, where the scan's
# layout_raw_together makes FileRuns, see its run_gap) that are read into a
# scratch buffer so that both are one read (see _file_run). Each read costs
# the staging thread a trip through the GIL, which the query's other threads
# hold most of the time, while the page cache gives a thread 6-8 GB/s: on an
# H200 host TPC-H Q6's columns at SF 100 (5,232 row groups) staged at 7.5
# GB/s with 64 KiB (10,666 reads), 11.1 GB/s with 1 MiB (5,507 reads: a row
# group's four columns in one), and five SF 100 queries cold took 11.2 s
# against 11.5-13.9 s.
_SCRATCH = threading.local()


def _file_run(buf, w: int, end: int, writes: list[_Write], k: int, files, max_gap: int) -> int:
    """Reads writes[k] (a file range wholly inside the window [w, end)) and
    the file writes after it that continue it in the same file (after at
    most ``max_gap`` bytes not wanted) with one system call; returns the
    index of the first write not read. ``buf``: the window's pinned buffer
    (a memoryview of bytes)."""
    wr = writes[k]
    first = wr.file
    path = first.path
    bufs = [buf[wr.off - w : wr.off + wr.count - w]]
    pos = first.start + first.size
    j = k + 1
    n = len(writes)
    while j < n:
        nx = writes[j]
        f = nx.file
        if type(f) is not FileRange or f.path != path:
            break
        stop = nx.off + nx.count
        gap = f.start - pos
        if stop > end or gap < 0 or gap > max_gap:
            break
        if gap:
            scratch = getattr(_SCRATCH, "buf", None)
            if scratch is None or len(scratch) < gap:
                scratch = _SCRATCH.buf = memoryview(np.empty(max_gap, dtype=np.uint8)).cast("B")
            bufs.append(scratch[:gap])
        bufs.append(buf[nx.off - w : stop - w])
        pos = f.start + f.size
        j += 1
    read_file_into(path, first.start, bufs, files)
    return j


def _fill_window(
    buf: np.ndarray, w: int, size: int, writes: list[_Write], k: int, files=None, max_gap: int = Settings.read_gap
) -> int:
    """Write the bytes [w, w + size) of the device buffer into the pinned
    buffer ``buf``, from writes[k:] on; the index of the first write not yet
    finished (it goes on in the next window). ``files``: the files' open
    handles (glint.io.file_reads.FileHandles). A write's ``file``
    is a FileRange (read with its neighbours: _file_run) or a FileRuns
    (its ranges in the window read one by one). ``max_gap``: the read_gap
    setting."""
    end = w + size
    view = None
    while k < len(writes):
        wr = writes[k]
        if wr.off >= end:
            return k
        isz = wr.dtype.itemsize
        stop = wr.off + wr.count * isz
        if type(wr.file) is FileRange and wr.off >= w and stop <= end:
            if view is None:
                view = memoryview(buf).cast("B")
            k = _file_run(view, w, end, writes, k, files, max_gap)
            continue
        b0, b1 = max(wr.off, w), min(stop, end)
        if b1 > b0:
            out = buf[b0 - w : b1 - w].view(wr.dtype)
            e0, e1 = (b0 - wr.off) // isz, (b1 - wr.off) // isz
            if wr.file is not None:
                wr.file.read_into(out, e0, files)
            elif wr.src is None:
                out[:] = wr.fill
            elif wr.add:
                # (in the output's type: a dictionary's int32 offsets moved past 2**31 bytes
                # into a chunk's int64 offsets)
                np.add(wr.src[e0:e1], out.dtype.type(wr.add), out=out, casting="unsafe")
            else:
                out[:] = wr.src[e0:e1]
        if stop > end:
            return k
        k += 1
    return k


class StackedUpload:
    """A chunk's columns on the device from their host parts (the Arrow chunks
    of all its pieces), each column's parts put one after the other in one
    device buffer per column (the cache evicts by column: a buffer shared by
    several would outlive the entries it was counted under). The layouts are
    computed once, then the 16 MB windows of the buffers are filled in pinned
    buffers and copied up by several staging threads at once (codes and
    dictionary offsets rebased on the way), so the host copies each byte
    once and no device-side concatenation follows. The buffers are allocated
    on the compute stream (the consumer's), not on the copies' stream: the
    caching allocator keeps free blocks per stream, and under a memory cap
    the table cache on one stream and the temporaries on another fragmented
    the budget until allocations failed with most of it free.

    ``start()`` allocates and submits the windows; ``finish()`` waits for them
    and returns (columns, an event the consumer waits on). Parts with 2-D
    (wide) values go through :meth:`Uploader.columns` and are put together
    on the device."""

    def __init__(
        self,
        pool: PinnedPool,
        memory,
        cols: dict,
        stream=None,
        raw: dict | None = None,
        narrow: dict | None = None,
        copy_stream=None,
        files=None,
        read_gap: int = Settings.read_gap,
        forwarder=None,
    ):
        """``raw``: more buffers to copy up as they are, key -> (size in
        bytes, [(offset, bytes-like)]): finish() gives each as a uint8
        device tensor of that size (bytes not covered are left as they
        were; the Parquet pages' bytes come this way).
        ``narrow``: key -> a narrower integer type that holds all of the
        column's values: they are copied up in it and widened on the device
        (fewer bytes written into the pinned buffers and over the bus).
        ``forwarder``: a glint.io.forwarding.Forwarder, whose helper GPUs'
        links carry some of the windows and tier runs (None: the device's
        own link carries them all)."""
        self.pool, self.memory, self.cols = pool, memory, cols
        self.forwarder = forwarder
        self.forwarded = 0  # bytes that went over other GPUs' links
        self._forwarded_lock = threading.Lock()
        self.files = files  # the raw segments' open files (glint.io.file_reads.FileHandles)
        self.read_gap = read_gap  # (see _file_run)
        self.stream = stream  # the consumer's stream: the buffers are allocated on it
        # ... and the copies into them run on it too. The caching allocator
        # hands out a block freed on a stream as soon as the free is queued,
        # which is safe for work on that stream only: kernels queued there
        # before may still read the block's old tensor. Copies on another
        # stream raced them (TPC-H Q1 at SF 100 under 16 GB read group ids
        # overwritten by a later chunk's copy: a device-side assert in
        # scatter_add, which CUDA_LAUNCH_BLOCKING=1 hid). Making the pool's
        # stream wait for the consumer's would also do, but would hold every
        # later copy on that shared stream (other scans', the host tier's)
        # behind the consumer's queue. In the consumer's stream order the
        # copies overlap the host's decoding, not the chunk's kernels, which
        # cold scans never outpace anyway.
        # ``copy_stream`` (a scan's own stream) lets the copies overlap the
        # consumer's kernels all the same: the buffers are still allocated on
        # the consumer's stream, and the copy stream first waits for an event
        # recorded there just after (so for every kernel that may still use
        # the blocks' old tensors, and for nothing queued later); see
        # _allocator.
        self.copy_stream = copy_stream if copy_stream is not None else stream if stream is not None else pool.stream
        self.layouts = {}
        self.specs = {}
        self.wide = {}
        for key, parts in cols.items():
            if any(p.data.dim() != 1 for p in parts):
                self.wide[key] = parts
            else:
                layout = self.layouts[key] = _StackLayout()
                self.specs[key] = layout.add(parts, (narrow or {}).get(key))
        self.raw = []
        # runs of chunks held in the host tier (glint.io.page_tier.TierCopy):
        # copied up straight from its pinned memory, not through the windows,
        # which stop before them (key -> (offset, TierCopy) pairs)
        self.tier_copies: dict = {}
        self._placements: list = []
        for key, (size, segments) in (raw or {}).items():
            layout = self.layouts[key] = _StackLayout()
            layout.total = size
            tiered = [(off, seg) for off, seg in segments if type(seg) is TierCopy]
            if tiered:
                self.tier_copies[key] = tiered
                self._placements += list({id(seg.placement): seg.placement for _, seg in tiered}.values())
                segments = [(off, seg) for off, seg in segments if type(seg) is not TierCopy]
                layout.windows = min(off for off, _ in tiered)
            layout.writes = _raw_writes(segments)
            self.raw.append(key)
        self.bytes = sum(la.total for la in self.layouts.values())
        self.raw_bytes = sum(self.layouts[key].total for key in self.raw)  # of which pages as stored
        self.dst: dict = {}
        self._futures = []

    def _allocator(self, up):
        """``empty(shape, dtype)`` for buffers the copy stream writes first:
        allocated on the consumer's stream (see __init__), the copy stream
        made to wait for that stream's work so far, and the block marked as
        used by the copy stream (a buffer freed before its copies ran is not
        handed out again under them)."""
        home = self.stream if self.stream is not None else self.copy_stream

        def empty(shape, dtype):
            with torch.cuda.device(self.pool.device), torch.cuda.stream(home):
                t = up._empty(shape, dtype)
            if home is not self.copy_stream:
                ev = torch.cuda.Event()
                ev.record(home)
                self.copy_stream.wait_event(ev)
                t.record_stream(self.copy_stream)
            return t

        return empty

    def start(self, executor, on_window=None, priority=None) -> None:
        """Submits the windows to ``executor`` (with ``priority`` when given:
        a glint.runtime.priority_pool.PriorityPool)."""
        up = Uploader(self.pool, self.memory)
        extra = {} if priority is None else {"priority": priority}
        empty = self._allocator(up)
        cap = self.pool.buffer_bytes
        for key, layout in self.layouts.items():
            dst = self.dst[key] = empty((max(layout.total, 1),), torch.uint8)
            ends = [wr.off + wr.count * wr.dtype.itemsize for wr in layout.writes]
            for off, seg in self.tier_copies.get(key, ()):
                self._futures.append(executor.submit(self._tier_copy, dst, off, seg, on_window, **extra))
            # the windows stop where the tier's runs start (a window past
            # them would copy its buffer's stale bytes over theirs)
            end = getattr(layout, "windows", layout.total)
            for w in range(0, end, cap):
                k = bisect.bisect_right(ends, w)
                self._futures.append(
                    executor.submit(self._window, dst, layout.writes, w, min(cap, end - w), k, on_window, **extra)
                )

    def _window(self, dst, writes, w: int, size: int, k: int, on_window) -> None:
        t0 = time.perf_counter()
        buf = self.pool.acquire()
        trace.add("pinned wait", t0, time.perf_counter())
        try:
            _fill_window(buf.numpy(), w, size, writes, k, self.files, self.read_gap)
            ev = self._copy(dst[w : w + size], buf[:size])
        except BaseException:
            self.pool.put_back(buf)
            raise
        self.pool.release(buf, ev)
        t1 = time.perf_counter()
        trace.add("stage", t0, t1, bytes=size)
        if on_window is not None:
            on_window(size, t1 - t0)

    def _tier_copy(self, dst, off: int, seg, on_window) -> None:
        """One run of chunks from the host tier to the device buffer at
        ``off`` (its fresh chunks read from their files into the tier first)."""
        t0 = time.perf_counter()
        src = seg.run(self.files)
        self._copy(dst[off : off + seg.size], src)  # (the slabs are released after a join: finish)
        t1 = time.perf_counter()
        trace.add("tier copy", t0, t1, bytes=seg.size, fresh=len(seg.fill))
        if on_window is not None:
            on_window(seg.size, t1 - t0)

    def _copy(self, dst: torch.Tensor, src: torch.Tensor):
        """Pinned ``src`` copied to ``dst`` on the copy stream, or over the
        forwarder's links; the event(s) after which ``src`` may be reused."""
        if self.forwarder is not None:
            n, events = self.forwarder.copy(dst, src, self.copy_stream)
            if n:
                with self._forwarded_lock:
                    self.forwarded += n
            return events
        with torch.cuda.device(self.pool.device), torch.cuda.stream(self.copy_stream):
            dst.copy_(src, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record(self.copy_stream)
        return ev

    def _join(self) -> None:
        """The copy stream waits for the copies that went over other GPUs' links."""
        if self.forwarded:
            self.forwarder.join(self.copy_stream)

    def _release_tier(self) -> None:
        """The tier's slabs this upload copied from are free to be reused
        once its copies are done (an event on the copy stream)."""
        if not self._placements:
            return
        with torch.cuda.device(self.pool.device):
            ev = torch.cuda.Event()
            ev.record(self.copy_stream)
        for p in self._placements:
            p.tier.release(p, ev)
        self._placements = []

    def cancel(self) -> None:
        for f in self._futures:
            f.cancel()
        if self._placements:
            # a copy that started must end before its slabs can be reused
            for f in self._futures:
                if not f.cancelled():
                    try:
                        f.result()
                    except BaseException:  # noqa: BLE001 - the upload is being abandoned
                        pass
            self._join()
            self._release_tier()

    def finish(self):
        for f in self._futures:
            f.result()
        self._join()
        self._release_tier()
        out = {key: spec.column(self.dst[key]) for key, spec in self.specs.items()}
        narrowed = [key for key, spec in self.specs.items() if spec.wide is not None]
        if narrowed:
            # after the windows' copies, in their stream's order
            up = Uploader(self.pool, self.memory)
            empty = self._allocator(up)
            with torch.cuda.device(self.pool.device), torch.cuda.stream(self.copy_stream):
                for key in narrowed:
                    out[key] = widen(out[key], self.specs[key].wide, empty)
                    self.dst[key] = None  # the narrow buffer goes back to the allocator
        out.update((key, self.dst[key]) for key in self.raw)
        # the event covers the wide parts' copies (on the pool's stream, which
        # waits for the copy stream's) or else the windows' copies (on the
        # copy stream)
        last = self.pool.stream if self.wide else self.copy_stream
        with torch.cuda.device(self.pool.device), torch.cuda.stream(self.pool.stream):
            if self.wide:
                if self.copy_stream is not self.pool.stream:
                    self.pool.stream.wait_stream(self.copy_stream)
                from glint.columnar.column import concat_columns

                up = Uploader(self.pool, self.memory)
                for key, parts in self.wide.items():
                    got = up.columns({i: p for i, p in enumerate(parts)})
                    out[key] = concat_columns([got[i] for i in range(len(parts))])
                self.bytes += up.bytes
            ev = torch.cuda.Event()
            ev.record(last)
        return out, ev


def stack_on_host(cols: dict, window: int = BUFFER_BYTES, narrow: dict | None = None) -> dict:
    """What :class:`StackedUpload` builds on the device, built in host
    memory through windows of ``window`` bytes (the same layout and fill):
    the CPU reference the tests compare the parts' concatenation with.

    >>> import pyarrow as pa
    >>> from glint.columnar.column import Column
    >>> parts = [Column.from_arrow(pa.array(["ab", None])), Column.from_arrow(pa.array(["c"]))]
    >>> stack_on_host({"s": parts}, window=16)["s"].to_arrow().to_pylist()
    ['ab', None, 'c']
    """
    layout = _StackLayout()
    specs = {key: layout.add(parts, (narrow or {}).get(key)) for key, parts in cols.items()}
    dst = torch.empty(max(layout.total, 1), dtype=torch.uint8)
    k = 0
    for w in range(0, layout.total, window):
        size = min(window, layout.total - w)
        buf = np.empty(window, dtype=np.uint8)
        k = _fill_window(buf, w, size, layout.writes, k)
        dst[w : w + size] = torch.from_numpy(buf[:size])
    out = {key: spec.column(dst) for key, spec in specs.items()}
    return {key: widen(c, specs[key].wide) if specs[key].wide is not None else c for key, c in out.items()}
