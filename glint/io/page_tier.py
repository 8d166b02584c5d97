"""The host tier of column chunks as stored: the Parquet pages of the chunks
a GPU decodes (glint.io.raw_chunks), kept in pinned host memory so that a
table larger than the GPU is read from its files once per connection and
copied up from here afterwards, compressed, by DMA straight out of this
memory (no staging copy), to be decoded on the GPU as a cold scan's are.

Memory comes in slabs of ``slab_bytes``, pinned once and reused: pinning
is slow (a fraction of a second per 256 MiB on the GPU hosts), so a slab
is never given back while the connection lives; what it held is dropped
and the slab filled again. A chunk lies in one slab. A scan chunk's
chunks of one column, missing here, are placed one after the other in
the slab being filled, so that the next scan copies them up with one copy
(:func:`copy_runs`). Slabs are evicted least recently used, never while a
scan is about to copy from them (``pins``) or a copy out of them is still
running on the GPU (``event``).

On the CPU the slabs are ordinary memory and the chunks' bytes are read
from them by the reference decoder: the same placement and eviction, so
the tests exercise them without a GPU.

>>> import numpy as np
>>> t = PageTier(4 << 20, slab_bytes=1 << 20)
>>> got = t.place(["f"], np.zeros(3, np.int64), np.array([0, 100, 900]), np.array([100, 800, 50]))
>>> got.slab.tolist(), got.offset.tolist(), got.fresh.tolist()
([0, 0, 0], [0, 104, 904], [True, True, True])
>>> t.release(got)
>>> t.place(["f"], np.zeros(1, np.int64), np.array([100]), np.array([800])).fresh.tolist()  # not filled yet
[True]
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref
from collections import Counter
from dataclasses import dataclass

import numpy as np
import torch

from glint.io.file_reads import read_bytes, read_file_into
from glint.io.parquet_meta import ThriftError
from glint.io.parquet_page_headers import _header_fields

UNCOMPRESSED, SNAPPY = 0, 1  # codecs as glint.io.raw_chunks numbers them

SLAB_BYTES = 256 << 20  # the largest slab; smaller tiers use slabs of a sixteenth of their limit
MIN_SLAB_BYTES = 1 << 20
SPARE_SLABS = 8  # pinned slabs kept ready ahead of the scans (see PageTier._new_slab)
# scan chunks whose placement is remembered (PageTier.place): looking each of a
# chunk of 2**24 TPC-H lineitem rows' ~1,000 column chunks up took about 1 ms
# of host time, holding the GIL, on every scan
MEMO_ENTRIES = 4096
# room beyond a snappy chunk's bodies decompressed with their headers, for
# headers whose page size needs more varint bytes once decompressed (at most
# 4 bytes a page; a chunk without the room is kept as stored)
INFLATE_SLACK = 64


def _pad(n):
    return (n + 7) // 8 * 8


class _Slab:
    __slots__ = ("tensor", "array", "used", "keys", "tick", "pins", "events")

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor
        self.array = tensor.numpy()
        self.used = 0
        self.keys: list = []
        self.tick = 0
        self.pins = 0
        self.events: list = []  # copies out of the slab that may still run

    def settle(self) -> None:
        """Waits for the copies out of the slab (before it is filled again)."""
        for ev in self.events:
            ev.synchronize()
        self.events = []


@dataclass
class Placement:
    """Where a scan chunk's column chunks lie in the tier (one entry per
    chunk; ``slab`` -1: not here, read from the file as before): ``room``
    bytes from ``offset`` of the slab, of which the chunk takes ``tsize``
    in codec ``tcodec`` (its snappy undone, or as stored). ``fresh``:
    placed now, their bytes still to be read from the files
    (:meth:`PageTier.fill`, which sets their tsize and tcodec)."""

    slab: np.ndarray
    offset: np.ndarray
    size: np.ndarray  # as stored
    room: np.ndarray
    tsize: np.ndarray
    tcodec: np.ndarray
    fresh: np.ndarray
    keys: dict  # position of a fresh chunk -> (path, its version, start, size as stored, codec as stored)
    pinned: list  # slab indexes, one per pin taken
    tier: PageTier
    epoch: int  # the tier's drops before it (a chunk filled after a drop is not kept)
    # who learns each chunk's size and codec in the tier (set_sizes): RawSets
    # and, per position, which one and where in it
    sets: list | None = None
    set_of: np.ndarray | None = None
    set_pos: np.ndarray | None = None

    def held(self) -> np.ndarray:
        return self.slab >= 0

    def hit_bytes(self, stored: bool = False) -> int:
        """Bytes of the chunks found in the tier (not read from their files):
        as the tier holds them, or (``stored``) as their files do."""
        hits = (self.slab >= 0) & ~self.fresh
        return int((self.size if stored else self.tsize)[hits].sum())

    def set_sizes(self, positions) -> None:
        """The chunks' sizes and codecs in the tier written into the RawSets
        they came from (``sets``), which the page walk's chunk table reads."""
        if self.sets is None:
            return
        for i in positions:
            rs, j = self.sets[self.set_of[i]], self.set_pos[i]
            rs.size[j], rs.codec[j] = self.tsize[i], self.tcodec[i]


_OPEN: weakref.WeakSet = weakref.WeakSet()  # tiers whose pinning thread may run (closed at exit)


@atexit.register
def _close_all() -> None:
    """Stops the pinning threads still running when the process exits: a
    daemon thread inside torch's pinned allocation while the interpreter
    shuts down can abort the process."""
    for tier in list(_OPEN):
        tier.close()


class PageTier:
    """Column chunks as stored in (pinned) host memory, at most ``limit``
    bytes of slabs, fewer where ``others`` (a callable: the bytes the
    decoded host tier holds, which shares the limit) says so. ``device``: a
    CUDA device pins the slabs. ``always``: chunks are kept from the first
    scan on; else only once the GPU's cache has had to evict (as the
    decoded tier, glint.runtime.memory.HostCache)."""

    def __init__(
        self,
        limit: int,
        device=None,
        always: bool = True,
        others=None,
        slab_bytes: int | None = None,
        inflate: bool = True,
    ):
        self.limit = int(limit)
        self.inflate = inflate
        self.pinned = device is not None and torch.device(device).type == "cuda"
        self.always = always
        self.others = others or (lambda: 0)
        if slab_bytes is None:
            slab_bytes = min(SLAB_BYTES, max(MIN_SLAB_BYTES, self.limit // 16))
        self.slab_bytes = int(slab_bytes) // 8 * 8
        self._slabs: list[_Slab] = []
        self._index: dict = {}  # (path, start, size) -> (slab, offset)
        # a scan chunk's chunks all found here -> where they lie (cleared when a slab is emptied)
        self._memo: dict = {}
        self._current = -1  # the slab being filled
        self._tick = 0
        self._lock = threading.Lock()
        self._spare: list = []  # pinned slabs not in use yet (the pinning thread's)
        self._pinning = 0  # slabs being pinned
        self._pinner: threading.Thread | None = None
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._epoch = 0  # drops so far
        self.hits = 0  # chunks found here
        self.hit_bytes = 0
        self.filled_bytes = 0  # chunks read from their files into the tier
        self.evictions = 0

    @property
    def bytes(self) -> int:
        """Host memory the tier holds (its slabs, spare ones included)."""
        return (len(self._slabs) + len(self._spare)) * self.slab_bytes

    def held_bytes(self) -> int:
        """Bytes of the chunks it holds."""
        with self._lock:
            return sum(s.used for s in self._slabs)

    def admits(self, manager) -> bool:
        """Whether scans place their chunks here now (as HostCache.admits)."""
        return self.always or manager.limit_set or manager.evictions > 0

    # ------------------------------------------------------------ placing
    def place(self, paths: list, file, start, size, usize=None, codec=None, admit: bool = True) -> Placement:
        """Each chunk (``paths[file[i]]`` from ``start[i]``, ``size[i]``
        bytes, ``usize[i]`` its bodies decompressed with their headers,
        ``codec[i]`` as stored) found here, or (``admit``) given room here
        to be filled by :meth:`fill`, or not (slab -1). Every slab a chunk
        lies in stays put until :meth:`release` (pins)."""
        n = len(start)
        size = np.asarray(size, dtype=np.int64)
        file, start = np.asarray(file, dtype=np.int64), np.asarray(start, dtype=np.int64)
        # only the files these chunks are in are asked for their version (a table may have many)
        used = np.unique(file).tolist()
        files = {j: (paths[j], _version(paths[j])) for j in used}  # a file rewritten since is another file
        memo_key = (tuple(files[j] for j in used), file.tobytes(), start.tobytes(), size.tobytes())
        with self._lock:
            self._tick += 1
            tick = self._tick
            got = self._memo.get(memo_key)
            if got is not None:
                return self._placed_again(got, size, tick)
            placement = self._place(files, file, start, size, usize, codec, admit, tick)
            if not placement.fresh.any() and placement.held().all() and n:
                # every chunk found here: the next scan of the same chunks skips the lookups
                if len(self._memo) >= MEMO_ENTRIES:
                    self._memo.clear()
                ks, counts = np.unique(placement.slab, return_counts=True)
                arrays = tuple(a.copy() for a in (placement.slab, placement.offset, placement.room))
                self._memo[memo_key] = (*arrays, placement.tsize.copy(), placement.tcodec.copy(), ks, counts)
            return placement

    def _placed_again(self, got, size, tick: int) -> Placement:
        """A placement found in the memo: every chunk held, where it was (no
        slab was emptied since: an eviction or a drop clears the memo); its
        slabs pinned again. Called under the lock."""
        slab, offset, room, tsize, tcodec, ks, counts = got
        pinned = []
        for k, c in zip(ks.tolist(), counts.tolist()):
            s = self._slabs[k]
            s.tick = tick
            s.pins += c
            pinned.extend([k] * c)
        self.hits += len(slab)
        self.hit_bytes += int(tsize.sum())
        n = len(slab)
        return Placement(
            slab.copy(),
            offset.copy(),
            size,
            room.copy(),
            tsize.copy(),
            tcodec.copy(),
            np.zeros(n, dtype=bool),
            {},
            pinned,
            self,
            self._epoch,
        )

    def _place(self, files: dict, file, start, size, usize, codec, admit: bool, tick: int) -> Placement:
        """place's lookups, one chunk at a time. Called under the lock."""
        n = len(start)
        slab = np.full(n, -1, dtype=np.int64)
        offset = np.zeros(n, dtype=np.int64)
        room = np.zeros(n, dtype=np.int64)
        tsize = size.copy()
        tcodec = np.zeros(n, dtype=np.int64) if codec is None else np.asarray(codec, dtype=np.int64).copy()
        fresh = np.zeros(n, dtype=bool)
        keys: dict = {}
        pinned: list = []
        index = self._index
        st, sz, fi = start.tolist(), tsize.tolist(), file.tolist()
        misses = []
        for i in range(n):
            key = (*files[fi[i]], st[i], sz[i])
            got = index.get(key)
            if got is None:
                misses.append((i, key))
                continue
            k, slab[i], offset[i], room[i], tsize[i], tcodec[i] = got[0], *got
            s = self._slabs[k]
            s.tick = tick
            s.pins += 1
            pinned.append(k)
            self.hits += 1
            self.hit_bytes += int(tsize[i])
        if admit:
            us = None if usize is None else np.asarray(usize).tolist()
            cs = tcodec.tolist()
            for i, key in misses:
                # a snappy chunk's room: its bodies decompressed with their headers
                need = (
                    max(key[3], us[i] + INFLATE_SLACK)
                    if self.inflate and cs[i] == SNAPPY and us is not None
                    else key[3]
                )
                got = self._room(need, tick)
                if got is None:
                    break
                slab[i], offset[i] = got
                room[i] = need
                fresh[i] = True
                keys[i] = (*key, cs[i])
                pinned.append(got[0])
        return Placement(slab, offset, size, room, tsize, tcodec, fresh, keys, pinned, self, self._epoch)

    def _room(self, nbytes: int, tick: int):
        """(slab, offset) of room for a chunk in the slab being filled, a
        new slab, or the least recently used one emptied; None when the
        chunk is larger than a slab or every slab is in use. The slab is
        pinned."""
        need = _pad(nbytes)
        if need > self.slab_bytes or not need:
            return None
        cur = self._slabs[self._current] if self._current >= 0 else None
        if cur is None or cur.used + need > self.slab_bytes:
            k = self._next_slab(tick)
            if k is None:
                return None
            self._current, cur = k, self._slabs[k]
        at = cur.used
        cur.used += need
        cur.tick = tick
        cur.pins += 1
        return self._current, at

    def _next_slab(self, tick: int):
        """A fresh slab within the limit, else the least recently used slab
        no scan holds, emptied (its last copy waited for)."""
        t = self._new_slab()
        if t is not None:
            self._slabs.append(_Slab(t))
            return len(self._slabs) - 1
        free = [k for k, s in enumerate(self._slabs) if not s.pins]
        if not free:
            return None
        k = min(free, key=lambda j: self._slabs[j].tick)
        s = self._slabs[k]
        s.settle()
        for key in s.keys:
            if self._index.get(key, (None,))[0] == k:
                del self._index[key]
        s.keys, s.used = [], 0
        self._memo.clear()
        self.evictions += 1
        return k

    def _room_for_slab(self) -> bool:
        return self.bytes + self._pinning * self.slab_bytes + self.slab_bytes + self.others() <= self.limit

    def _new_slab(self):
        """A slab's memory within the limit, or None. Pinned memory comes
        from the pinning thread's spare slabs and never waits for it (a
        chunk with no room here is read from its file, as without the
        tier): pinning takes about 0.2 s per 256 MiB on the GPU hosts
        (1.4-2.6 GB/s), which the scan's upload thread would otherwise wait
        for, 20 s for a tier of 30 GB. Ordinary memory is taken at once.
        Called under the lock."""
        if not self.pinned:
            if not self._room_for_slab():
                return None
            try:
                return torch.empty(self.slab_bytes, dtype=torch.uint8)
            except RuntimeError:  # the host cannot hold more: reuse what there is
                return None
        if self._spare:
            t = self._spare.pop()
            self._pin_more()
            return t
        self._pin_more()
        return None

    def _pin_more(self) -> None:
        """Wakes the pinning thread (started on first use) when the limit
        leaves room for more spare slabs. Called under the lock."""
        if self._closed or len(self._spare) + self._pinning >= SPARE_SLABS or not self._room_for_slab():
            return
        if self._pinner is None:
            self._pinner = threading.Thread(target=self._pin_loop, name="glint-pin-slabs", daemon=True)
            _OPEN.add(self)
            self._pinner.start()
        self._wake.notify()

    def _pin_loop(self) -> None:
        while True:
            with self._lock:
                while not self._closed and (
                    len(self._spare) + self._pinning >= SPARE_SLABS or not self._room_for_slab()
                ):
                    self._wake.wait()
                if self._closed:
                    return
                self._pinning += 1
            try:
                t = torch.empty(self.slab_bytes, dtype=torch.uint8, pin_memory=True)
            except RuntimeError:  # the host cannot pin more: the tier stays as it is
                t = None
            with self._lock:
                self._pinning -= 1
                if t is None:
                    self.limit = self.bytes  # (no more tries)
                    continue
                self._spare.append(t)

    def close(self) -> None:
        """Stops the pinning thread (the connection closes)."""
        with self._lock:
            self._closed = True
            self._wake.notify_all()
        if self._pinner is not None:
            self._pinner.join(timeout=10)
        _OPEN.discard(self)

    def fill(self, placement: Placement, positions=None, files=None) -> None:
        """Reads fresh chunks from their files into their room here and
        makes them findable (``positions``: of the placement's chunks;
        default all the fresh ones; ``files``: open file handles,
        glint.io.file_reads.FileHandles). A snappy chunk's pages are kept
        with their bodies decompressed (``inflate``, see inflate_pages),
        else the chunk is kept as stored (``preadv`` straight into the slab)."""
        if positions is None:
            positions = list(placement.keys)
        got = []
        for i in positions:
            path, version, start, size, codec = placement.keys[i]
            k, at, room = int(placement.slab[i]), int(placement.offset[i]), int(placement.room[i])
            out = self._slabs[k].array[at : at + room]
            n, c = size, codec
            if self.inflate and codec == SNAPPY:
                src = read_bytes(path, start, size, reuse=True, files=files)
                made = inflate_pages(src, out)
                if made is None:
                    out[:size] = np.frombuffer(src, dtype=np.uint8)
                else:
                    n, c = made, UNCOMPRESSED
            else:
                read_file_into(path, start, out[:size], files)
            placement.tsize[i], placement.tcodec[i] = n, c
            got.append(((path, version, start, size), (k, at, room, n, c)))
        placement.set_sizes(positions)
        with self._lock:
            if placement.epoch != self._epoch:
                # dropped since it was placed: its slab may be filled again
                # by then; the chunks serve this scan only
                return
            for key, entry in got:
                self._index[key] = entry
                self._slabs[entry[0]].keys.append(key)
                self.filled_bytes += entry[3]

    def view(self, slab: int, offset: int, nbytes: int) -> torch.Tensor:
        """The tier's bytes [offset, offset + nbytes) of a slab (a uint8 tensor)."""
        return self._slabs[slab].tensor[offset : offset + nbytes]

    def release(self, placement: Placement, event=None) -> None:
        """The scan is done with the slabs it placed chunks in (``event``:
        its copies out of them, which an eviction waits for)."""
        with self._lock:
            for k, c in Counter(placement.pinned).items():
                s = self._slabs[k]
                s.pins -= c
                if event is not None and (not s.events or s.events[-1] is not event):
                    # (the copies done are forgotten: the list stays short)
                    s.events = [e for e in s.events if not e.query()]
                    s.events.append(event)
            placement.pinned = []

    def drop(self) -> None:
        """Forgets every chunk (the slabs are kept, to be filled again)."""
        with self._lock:
            self._epoch += 1
            for s in self._slabs:
                s.settle()
                s.keys, s.used = [], 0
            self._index.clear()
            self._memo.clear()
            self._current = -1

    def stats(self) -> dict:
        return {
            "bytes": self.bytes,
            "held_bytes": self.held_bytes(),
            "hits": self.hits,
            "hit_bytes": self.hit_bytes,
            "filled_bytes": self.filled_bytes,
            "evictions": self.evictions,
        }


class TierCopy:
    """A run of chunks lying one after the other in a slab of the host tier
    (this module): ``size`` bytes from ``offset`` of slab ``slab``,
    copied to the device buffer in one copy; ``fill``: the placement's
    positions of the fresh chunks among them, read from their files first."""

    __slots__ = ("placement", "slab", "offset", "size", "fill")

    def __init__(self, placement: Placement, slab: int, offset: int, size: int, fill: list):
        self.placement, self.slab, self.offset, self.size, self.fill = placement, slab, offset, size, fill

    def __len__(self) -> int:
        return self.size

    def run(self, files=None) -> torch.Tensor:
        """The run's bytes in the tier (a uint8 tensor over its memory), its fresh chunks read first."""
        tier = self.placement.tier
        if self.fill:
            tier.fill(self.placement, self.fill, files)
        return tier.view(self.slab, self.offset, self.size)


def copy_runs(slab: np.ndarray, offset: np.ndarray, size: np.ndarray):
    """The chunks held here grouped into runs that lie one after the other
    in one slab: (the chunks' order, each chunk's run, the runs' first
    positions in that order). A run is copied up in one copy.

    >>> o, run, heads = copy_runs(np.array([1, 0, 0]), np.array([0, 16, 0]), np.array([8, 8, 16]))
    >>> o.tolist(), run.tolist(), heads.tolist()
    ([2, 1, 0], [0, 0, 1], [0, 2])
    """
    order = np.lexsort((offset, slab))
    s, o, z = slab[order], offset[order], (size[order] + 7) // 8 * 8
    first = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        first[1:] = (s[1:] != s[:-1]) | (o[1:] != o[:-1] + z[:-1])
    return order, np.cumsum(first) - 1, np.flatnonzero(first)


def tier_chunks(rs, tier: PageTier, admit: bool, files=None):
    """A RawSet's chunks (glint.io.raw_chunks.RawChunk) with the bytes of
    those the tier holds (or takes now: read from their files into it
    first) copied out of it, in the codec the tier keeps them in, the
    others left in their files: the CPU's reference decoder reads them so.
    Returns (the chunks, the placement, for :meth:`PageTier.release`)."""
    placement = tier.place(rs.paths, rs.file, rs.start, rs.size, rs.usize, rs.codec, admit)
    if placement.keys:
        tier.fill(placement, None, files)
    chunks = list(rs)
    for i in np.flatnonzero(placement.held()).tolist():
        c, n = chunks[i], int(placement.tsize[i])
        # a copy: the decoded values must not alias memory the tier reuses
        c.source = bytes(tier.view(int(placement.slab[i]), int(placement.offset[i]), n).numpy())
        c.codec, c.dict_span = int(placement.tcodec[i]), 0
    return chunks, placement


def _version(path: str):
    """What tells a file's contents apart from an earlier one's at the same
    path: its size, modification time and inode."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


# PageHeader's fields (Thrift compact protocol): type, uncompressed_page_size, compressed_page_size
_TYPE, _USIZE, _CSIZE = 1, 2, 3
_DATA_PAGE, _INDEX_PAGE, _DICTIONARY_PAGE = 0, 1, 2
_SNAPPY = None  # pa.Codec("snappy"), made on first use


def padded_varint(value: int, width: int) -> bytes:
    """``value`` as a ULEB128 varint of exactly ``width`` bytes (continuation
    bytes that add nothing where it needs fewer), as Thrift's compact
    protocol and the GPU's page walk read it.

    >>> padded_varint(300, 2).hex(), padded_varint(5, 3).hex()
    ('ac02', '858000')
    >>> from glint.io.parquet_meta import _varint
    >>> _varint(padded_varint(5, 3), 0)
    (5, 3)
    """
    out = bytearray(width)
    for k in range(width):
        out[k] = (value & 0x7F) | (0x80 if k < width - 1 else 0)
        value >>= 7
    return bytes(out)


def inflate_pages(src, out: np.ndarray) -> int | None:
    """A snappy column chunk's pages (``src``: its bytes as stored) written
    to ``out`` with each body decompressed and its header's
    compressed_page_size set to the body's new size, in the same number of
    varint bytes (a ULEB128 may carry continuation bytes that add nothing),
    or more where the new size needs them (the header grows by those bytes:
    ``out`` needs INFLATE_SLACK bytes beyond the chunk's metadata size), so
    the chunk reads as an uncompressed one. Returns the bytes written, or
    None where that cannot be done (a v2 data page, no room, bad data: the
    chunk is then kept as stored, for the device's decoder to take or to
    name the problem).

    The GPU decompresses snappy one page (or 64 KiB block) a program: under
    a GPU memory limit, TPC-H Q6 at SF 100 spent about 90% of its warm time
    there (1.6 s of kernels for 5.7 GB of pages), while TPC-H's columns are
    dictionary-encoded and compress 1.0-1.4x with snappy on top; the host
    undoes snappy once, when the tier is filled.

    >>> import pyarrow as pa, pyarrow.parquet as pq, tempfile
    >>> d = tempfile.mkdtemp()
    >>> pq.write_table(pa.table({"x": list(range(1000))}), d + "/t.parquet", compression="snappy")
    >>> cc = pq.read_metadata(d + "/t.parquet").row_group(0).column(0)
    >>> from glint.io.parquet_page_headers import read_chunk_bytes, parse_pages
    >>> raw = read_chunk_bytes(d + "/t.parquet", cc)
    >>> out = np.zeros(cc.total_uncompressed_size + 64, dtype=np.uint8)
    >>> n = inflate_pages(raw, out)
    >>> [(p.kind, p.body) for p in parse_pages(out[:n].tobytes(), "UNCOMPRESSED")] == [
    ...     (p.kind, p.body) for p in parse_pages(raw, "SNAPPY")]
    True
    """
    global _SNAPPY
    if _SNAPPY is None:
        import pyarrow as pa

        _SNAPPY = pa.Codec("snappy")
    b = memoryview(src).cast("B")
    n, i, o = len(b), 0, 0
    cap = len(out)
    try:
        while i < n:
            spans: dict = {}
            fields, j = _header_fields(b, i, frozenset(), spans)
            kind, usize, csize = fields.get(_TYPE), fields.get(_USIZE), fields.get(_CSIZE)
            at, end = spans.get(_CSIZE, (0, 0))
            width = end - at
            if kind is None or usize is None or csize is None or csize < 0 or j + csize > n:
                return None
            body = b[j : j + csize]
            if kind == _INDEX_PAGE:
                new = bytes(body)
            elif kind in (_DATA_PAGE, _DICTIONARY_PAGE):
                new = _SNAPPY.decompress(body, decompressed_size=usize, asbytes=True) if usize else b""
                if len(new) != usize:
                    return None
            else:  # a v2 page's levels are not compressed: kept as stored
                return None
            z = (len(new) << 1) ^ (len(new) >> 63)  # zigzag
            # the size in as many varint bytes as it had, or more where it
            # needs them (a dictionary page of 88 bytes stored in 54: TPC-H's
            # l_discount and l_tax in every row group), the header then
            # growing by those bytes (see INFLATE_SLACK)
            grown = max(width, (z.bit_length() + 6) // 7)
            if grown - width > 4:
                return None
            size_bytes = padded_varint(z, grown)
            head = j - i + grown - width
            if o + head + len(new) > cap:
                return None
            out[o : o + at - i] = np.frombuffer(b[i:at], dtype=np.uint8)
            out[o + at - i : o + at - i + grown] = np.frombuffer(size_bytes, dtype=np.uint8)
            out[o + at - i + grown : o + head] = np.frombuffer(b[end:j], dtype=np.uint8)
            o += head
            out[o : o + len(new)] = np.frombuffer(new, dtype=np.uint8)
            o += len(new)
            i = j + csize
    except (IndexError, ValueError, OSError, ArithmeticError, ThriftError):
        return None
    except Exception as e:  # noqa: BLE001 - pyarrow's errors: the bytes do not decompress
        if type(e).__module__.startswith("pyarrow"):
            return None
        raise
    return o
