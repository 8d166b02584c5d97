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

import threading
from dataclasses import dataclass

import numpy as np
import torch

from glint.io.file_reads import read_file_into

SLAB_BYTES = 256 << 20  # the largest slab; smaller tiers use slabs of a sixteenth of their limit
MIN_SLAB_BYTES = 1 << 20
SPARE_SLABS = 8  # pinned slabs kept ready ahead of the scans (see PageTier._new_slab)


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
    chunk; ``slab`` -1: not here, read from the file as before). ``fresh``:
    placed now, their bytes still to be read from the files (:meth:`PageTier.fill`)."""

    slab: np.ndarray
    offset: np.ndarray
    fresh: np.ndarray
    size: np.ndarray
    keys: dict  # position of a fresh chunk -> its (path, start, size)
    pinned: list  # slab indexes, one per pin taken
    tier: PageTier

    def held(self) -> np.ndarray:
        return self.slab >= 0

    def hit_bytes(self) -> int:
        """Bytes of the chunks found in the tier (not read from their files)."""
        return int(self.size[(self.slab >= 0) & ~self.fresh].sum())


class PageTier:
    """Column chunks as stored in (pinned) host memory, at most ``limit``
    bytes of slabs, fewer where ``others`` (a callable: the bytes the
    decoded host tier holds, which shares the limit) says so. ``device``: a
    CUDA device pins the slabs. ``always``: chunks are kept from the first
    scan on; else only once the GPU's cache has had to evict (as the
    decoded tier, glint.runtime.memory.HostCache)."""

    def __init__(self, limit: int, device=None, always: bool = True, others=None, slab_bytes: int | None = None):
        self.limit = int(limit)
        self.pinned = device is not None and torch.device(device).type == "cuda"
        self.always = always
        self.others = others or (lambda: 0)
        if slab_bytes is None:
            slab_bytes = min(SLAB_BYTES, max(MIN_SLAB_BYTES, self.limit // 16))
        self.slab_bytes = int(slab_bytes) // 8 * 8
        self._slabs: list[_Slab] = []
        self._index: dict = {}  # (path, start, size) -> (slab, offset)
        self._current = -1  # the slab being filled
        self._tick = 0
        self._lock = threading.Lock()
        self._spare: list = []  # pinned slabs not in use yet (the pinning thread's)
        self._pinning = 0  # slabs being pinned
        self._pinner: threading.Thread | None = None
        self._wake = threading.Condition(self._lock)
        self._closed = False
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
        """Whether scans place their chunks here now."""
        return self.always or manager.evictions > 0

    # ------------------------------------------------------------ placing
    def place(self, paths: list, file, start, size, admit: bool = True) -> Placement:
        """Each chunk (``paths[file[i]]`` from ``start[i]``, ``size[i]``
        bytes) found here, or (``admit``) given room here to be filled by
        :meth:`fill`, or not (slab -1). Every slab a chunk lies in stays
        put until :meth:`release` (pins)."""
        n = len(start)
        slab = np.full(n, -1, dtype=np.int64)
        offset = np.zeros(n, dtype=np.int64)
        fresh = np.zeros(n, dtype=bool)
        keys: dict = {}
        pinned: list = []
        index = self._index
        with self._lock:
            self._tick += 1
            tick = self._tick
            st, sz, fi = start.tolist(), size.tolist(), file.tolist()
            misses = []
            for i in range(n):
                key = (paths[fi[i]], st[i], sz[i])
                got = index.get(key)
                if got is None:
                    misses.append((i, key))
                    continue
                s = self._slabs[got[0]]
                slab[i], offset[i] = got
                s.tick = tick
                s.pins += 1
                pinned.append(got[0])
                self.hits += 1
                self.hit_bytes += sz[i]
            if admit:
                for i, key in misses:
                    got = self._room(key[2], tick)
                    if got is None:
                        break
                    slab[i], offset[i] = got
                    fresh[i] = True
                    keys[i] = key
                    pinned.append(got[0])
        return Placement(slab, offset, fresh, size, keys, pinned, self)

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

    def fill(self, placement: Placement, positions=None, files=None) -> None:
        """Reads fresh chunks' bytes from their files into their room here
        (``preadv`` straight into the slab) and makes them findable
        (``positions``: of the placement's chunks; default all the fresh
        ones). ``files``: open file handles (glint.io.file_reads.FileHandles)."""
        if positions is None:
            positions = list(placement.keys)
        got = []
        for i in positions:
            key = placement.keys[i]
            k, at = int(placement.slab[i]), int(placement.offset[i])
            path, start, size = key
            read_file_into(path, start, self._slabs[k].array[at : at + size], files)
            got.append((key, k, at))
        with self._lock:
            for key, k, at in got:
                self._index[key] = (k, at)
                self._slabs[k].keys.append(key)
                self.filled_bytes += key[2]

    def view(self, slab: int, offset: int, nbytes: int) -> torch.Tensor:
        """The tier's bytes [offset, offset + nbytes) of a slab (a uint8 tensor)."""
        return self._slabs[slab].tensor[offset : offset + nbytes]

    def release(self, placement: Placement, event=None) -> None:
        """The scan is done with the slabs it placed chunks in (``event``:
        its copies out of them, which an eviction waits for)."""
        with self._lock:
            for k in placement.pinned:
                s = self._slabs[k]
                s.pins -= 1
                if event is not None and (not s.events or s.events[-1] is not event):
                    # (the copies done are forgotten: the list stays short)
                    s.events = [e for e in s.events if not e.query()]
                    s.events.append(event)
            placement.pinned = []

    def drop(self) -> None:
        """Forgets every chunk (the slabs are kept, to be filled again)."""
        with self._lock:
            for s in self._slabs:
                s.settle()
                s.keys, s.used = [], 0
            self._index.clear()
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
    first) copied out of it, the others left in their files: the CPU's
    reference decoder reads them so. Returns (the chunks, the placement,
    for :meth:`PageTier.release`)."""
    placement = tier.place(rs.paths, rs.file, rs.start, rs.size, admit)
    if placement.keys:
        tier.fill(placement, None, files)
    chunks = list(rs)
    for i in np.flatnonzero(placement.held()).tolist():
        # a copy: the decoded values must not alias memory the tier reuses
        chunks[i].source = bytes(tier.view(int(placement.slab[i]), int(placement.offset[i]), int(rs.size[i])).numpy())
    return chunks, placement
