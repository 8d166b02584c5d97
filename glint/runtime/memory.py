"""Memory budgets: how much of the execution device glint may use, who holds
it, and what can be given back (Theseus's reservations; docs/memory.md).

One :class:`MemoryManager` per connection bounds glint's use of its device (GPU
memory on CUDA, working memory on the CPU). Two kinds of holders share it:

- the **table cache**: chunks of table columns kept on the device between
  queries (warm runs). Whenever something else needs the room, the entries
  of earlier runs are evicted least recently used first, then the run in
  progress's own (see _make_room); a scan's new chunk evicts only
  entries that the run in progress has not used (a scan of a table larger
  than the cache keeps the chunks it cached first, and reads them from the
  device in its next pass, where evicting the oldest would leave none of
  them there);
- **reservations**: pipeline breakers (hash-join builds, aggregation state,
  sorts) reserve bytes *before* they hold more data. A reservation that cannot
  grow, even after the cache gave everything back, tells the operator to spill
  and finish out of core.

Pipelines between breakers hold one chunk at a time; the manager keeps a
working headroom for them (a few chunks' worth), so reservations never take
the last bytes a chunk needs.

On CUDA the caching allocator's count of allocated bytes is the truth (it sees
every tensor, ours and the temporaries of torch ops), and the allocator is
capped at the limit, so a step that would pass it raises an out-of-memory error
instead of taking more. On the CPU the accounting is what the reservations and
the cache declare.

>>> m = MemoryManager(torch.device("cpu"), limit=1000, headroom=100)
>>> r = m.reservation("Join build")
>>> r.grow(700), r.grow(700), r.bytes
(True, False, 700)
>>> m.cache_put(("t", 0, "a"), object(), 250)     # no room beside the reservation: not cached
False
>>> m.pressure              # an operator had to spill: nothing more is cached in this run
True
>>> r.release(); m.pressure = False      # (as the next run starts)
>>> m.cache_put(("t", 0, "a"), object(), 250), m.used()
(True, 250)
>>> r2 = m.reservation("Sort"); r2.grow(800), m.cache_bytes()      # the cache gives way
(True, 0)
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

import torch

from glint.errors import GlintError

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "kib": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "mib": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
    "gib": 1 << 30,
    "t": 1 << 40,
    "tb": 1 << 40,
    "tib": 1 << 40,
}


def parse_size(value) -> int:
    """Bytes from an int or a text like "16GB", "512 MiB", "1.5g" (binary units,
    as DuckDB's memory_limit reads them).

    >>> parse_size("16GB"), parse_size("512 MiB"), parse_size(1024), parse_size("1.5k")
    (17179869184, 536870912, 1024, 1536)
    >>> parse_size("lots")
    Traceback (most recent call last):
    ...
    glint.errors.GlintError: invalid memory size 'lots' (use e.g. "16GB", "512MB" or a number of bytes)
    """
    if isinstance(value, bool):
        raise GlintError(f"invalid memory size {value!r}")
    if isinstance(value, (int, float)):
        if value <= 0:
            raise GlintError(f"a memory size must be positive, got {value!r}")
        return int(value)
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(value))
    if not m or m.group(2).lower() not in _UNITS:
        raise GlintError(f'invalid memory size {value!r} (use e.g. "16GB", "512MB" or a number of bytes)')
    n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if n <= 0:
        raise GlintError(f"a memory size must be positive, got {value!r}")
    return n


def format_bytes(n: float) -> str:
    """A size for messages.

    >>> format_bytes(1536), format_bytes(3 * (1 << 30))
    ('1.5 KiB', '3.0 GiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


# ------------------------------------------------------------------ host memory
def host_memory_total() -> int:
    """Physical memory this process may use: the smaller of RAM and the cgroup limit."""
    total = _meminfo().get("MemTotal", 0)
    limit = _cgroup_limit()
    return min(total, limit) if limit else total


def host_memory_available() -> int:
    """Bytes that can still be allocated without swapping or the OOM killer:
    MemAvailable, and below a cgroup (container) limit what is left under it.
    Read at most every ``_AVAILABLE_TTL_S`` (each query asks, for its result
    limit: reading /proc and the cgroup files takes about 0.3 ms)."""
    now = time.monotonic()
    at, value = _available
    if now - at < _AVAILABLE_TTL_S:
        return value
    avail = _meminfo().get("MemAvailable", 0)
    limit = _cgroup_limit()
    if limit:
        used = _cgroup_usage()
        if used is not None:
            avail = min(avail, max(0, limit - used))
    _available[:] = [now, avail]
    return avail


_AVAILABLE_TTL_S = 0.05
_available: list = [float("-inf"), 0]  # (when it was read, the bytes)


def _meminfo() -> dict[str, int]:
    out = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                k, _, rest = line.partition(":")
                parts = rest.split()
                if parts:
                    out[k] = int(parts[0]) * (1024 if len(parts) > 1 else 1)
    except OSError:
        pass
    if "MemTotal" not in out:  # no /proc (not Linux): physical pages, all counted as available
        try:
            out["MemTotal"] = out["MemAvailable"] = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            out["MemTotal"] = out["MemAvailable"] = 8 << 30
    return out


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    if not text or text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _cgroup_limit() -> int | None:
    v = _read_int("/sys/fs/cgroup/memory.max")  # cgroup v2
    if v is None:
        v = _read_int("/sys/fs/cgroup/memory/memory.limit_in_bytes")  # v1
        if v is not None and v >= 1 << 60:
            v = None
    return v


def _cgroup_usage() -> int | None:
    v = _read_int("/sys/fs/cgroup/memory.current")
    if v is None:
        v = _read_int("/sys/fs/cgroup/memory/memory.usage_in_bytes")
    return v


# ------------------------------------------------------------------ the manager
@dataclass
class _CacheEntry:
    value: object
    nbytes: int
    run: int = 0  # the run that used it last (MemoryManager.begin_run)
    read: int = 0  # the run that read it last (a touch marks it as the run's without reading it)


class MemoryManager:
    """The device budget of one connection: an LRU cache of table chunks plus
    the operators' reservations, never more than ``limit`` together (and, on
    CUDA, never more than the allocator can actually give)."""

    def __init__(self, device: torch.device, limit: int, headroom: int = 0):
        self.device = torch.device(device)
        self.limit = int(limit)
        self.headroom = int(headroom)
        # On CUDA, the memory a pipeline's chunk needs beside the cache and the
        # reservations (its columns, the read-ahead, the temporaries of its
        # expressions and probes), in bytes per chunk row: kept free for it, and
        # raised when a step runs out of memory anyway (note_oom). On the CPU
        # only declared memory is counted: the headroom is what stays free.
        self.working_per_row = working_bytes_per_row(self.device, self.limit)
        self.chunk_rows = 0  # rows per chunk of the run in progress
        self._reserved = 0
        self._cache: OrderedDict = OrderedDict()
        self._cache_bytes = 0
        self._lock = threading.RLock()
        self._alloc_lock = threading.Lock()
        self.peak = 0  # accounted peak (CPU); CUDA has the allocator's
        self.evictions = 0
        self.host: HostCache | None = None  # the host tier of the table cache (CUDA): decoded pieces
        self.pages = None  # ... and column chunks as stored (glint.io.page_tier.PageTier)
        self.cache_enabled = True  # off for a query's last out-of-memory retry
        self.pressure = False  # a reservation failed in the run in progress
        self.allocator_capped = False  # the CUDA allocator stops at the limit (see slack)
        # a limit the user set: the tables are expected not to fit, so the host
        # tier keeps every chunk from the first scan on (HostCache.admits)
        self.limit_set = False
        # runs begun (begin_run): a cache entry remembers the last one that used it
        self.runs = 0
        self.own_evictions = 0  # entries of the run in progress evicted for room (IOStats.cache_evicted_own)
        self.last_eviction_run = -1  # the last run in which an entry was evicted for room
        # keys of table chunks whose compact form was found not to hold their
        # values (wrong file statistics): kept wide (glint.io.cached_columns)
        self.wide_keys: set = set()
        self.compact_held = False  # a compact chunk was cached (ChunkReader._check_cached looks for them)

    def short_of_room(self, runs: int = 8) -> bool:
        """Whether the cache is short of room: a limit the user set, or an
        entry evicted for room within the last ``runs`` runs."""
        return self.limit_set or (self.last_eviction_run >= 0 and self.runs - self.last_eviction_run < runs)

    def begin_run(self) -> None:
        """A run starts: no operator has had to spill in it yet, and the
        cache entries it uses from now on are its own (cache_put does not
        evict them to take in another of its chunks)."""
        with self._lock:
            self.runs += 1
            self.pressure = False
            self.own_evictions = 0

    # ------------------------------------------------------------- accounting
    def used(self) -> int:
        """Bytes in use against the limit: on CUDA what the allocator holds
        (cache and reservations included), elsewhere what was declared."""
        if self.device.type == "cuda":
            return _cuda_allocated(self.device)
        return self._reserved + self._cache_bytes

    def reserved(self) -> int:
        return self._reserved

    def cache_bytes(self) -> int:
        return self._cache_bytes

    def working_reserve(self) -> int:
        """Bytes kept free for the pipelines' chunks in flight: the headroom,
        or on CUDA what chunks of the current size were seen to need (at most
        three quarters of the limit: the rest is for the cache and the
        breakers, which spill)."""
        w = self.working_per_row * self.chunk_rows
        return max(self.headroom, min(int(w), self.limit * 3 // 4))

    def available(self) -> int:
        """Bytes that the cache or a reservation may still take: what leaves
        the working reserve free beside the cache and the reservations, and
        (on CUDA) the headroom free beside everything allocated right now."""
        held = self._reserved + self._cache_bytes
        if self.device.type != "cuda":
            return self.limit - self.headroom - held
        return self.limit - max(self.used() + self.headroom, held + self.working_reserve() + self.slack())

    def slack(self) -> int:
        """When the CUDA allocator is capped at the limit (a limit the user
        set), an eighth of it kept beside the working reserve for what the
        caching allocator holds beyond the bytes allocated (blocks split or
        cached for other sizes and streams, which glint's counts do not see
        but the cap does): with the table cache filled to the limit less the
        working reserve, TPC-H Q1 at SF 100 under 16 GB had 14.2 GiB allocated
        and 16.0 GiB held, and went out of memory asking for 32 MiB. Without a
        cap the allocator may grow past glint's limit (the free memory less
        5%), and the whole of SF 100's columns stay cached on an 80 GB card."""
        return self.limit // 8 if self.device.type == "cuda" and self.allocator_capped else 0

    def describe_use(self) -> str:
        """Where the memory is, for an out-of-memory message."""
        f = format_bytes
        text = (
            f"limit {f(self.limit)}: table cache {f(self._cache_bytes)}, reservations {f(self._reserved)}, "
            f"kept for chunks of {self.chunk_rows} rows {f(self.working_reserve())}"
        )
        if self.device.type == "cuda":
            text += (
                f"; allocated {f(torch.cuda.memory_allocated(self.device))}, held by the allocator "
                f"{f(torch.cuda.memory_reserved(self.device))}"
            )
        return text

    def note_oom(self, asked: int = 0) -> None:
        """A step on CUDA ran out of memory: what the pipeline held beside the
        cache and the reservations (plus what it asked for) was more than the
        working reserve, so the reserve per chunk row grows to that, with a
        quarter to spare. Called where the error is caught, while the failed
        step's tensors are still alive."""
        if self.device.type != "cuda" or self.chunk_rows <= 0:
            return
        with self._lock:
            seen = self.used() - self._cache_bytes - self._reserved + max(0, int(asked))
            # at most 4x the starting figure: what a chunk's rows can need; more
            # is a breaker holding more than it reserved, which chunk rows do not
            # measure (and which must not starve every later chunk)
            per_row = min(seen * 5 // 4 // self.chunk_rows, 4 * WORKING_BYTES_PER_ROW)
            if per_row > self.working_per_row:
                self.working_per_row = per_row

    def _make_room(self, nbytes: int, keep=(), spare_this_run: bool = False) -> bool:
        """Evict cache entries until nbytes fit; True when they do. The
        allocator is asked once (reading its count is not free, and a
        spilling operator asks for room for every piece it holds): an evicted
        entry gives back its bytes on both sides of the budget.

        The entries of earlier runs go first, least recently used first.
        Then, unless ``spare_this_run``, the run in progress's own: first
        those it has read already, the longest ago first (the one just read
        may still be in the pipeline's hands: evicting it would free
        nothing), then those its scans marked as theirs as they started
        (cache_touch) and have not read yet, newest first: the scans are
        marked in the order the run reads them, so the newest is needed
        last. Evicting the run's oldest first would take the chunks a scan
        is about to read, one after the other, to make room for those it
        reads from the host."""
        with self._lock:
            short = nbytes - self.available()
            if short <= 0:
                return True
            # earlier runs' entries, oldest first, without listing the whole
            # cache (called per chunk and per piece; a cache of thousands of
            # small chunks made every call slower)
            skipped = 0
            while short > 0 and len(self._cache) > skipped:
                victim = next(itertools.islice(iter(self._cache), skipped, None))
                e = self._cache[victim]
                if e.run == self.runs:
                    break
                if victim in keep:
                    skipped += 1
                    continue
                short -= e.nbytes
                self._evict(victim)
            if short <= 0 or spare_this_run:
                return short <= 0
            # (the victims found walking the cache, and only as far as they
            # cover what is short: not a listing of the whole cache per call)
            victims, need = [], short
            for walk, was_read in ((iter(self._cache), True), (reversed(self._cache), False)):
                for k in walk:
                    if need <= 0:
                        break
                    e = self._cache[k]
                    if e.run == self.runs and (e.read == self.runs) == was_read and k not in keep:
                        victims.append(k)
                        need -= e.nbytes
            for victim in victims:
                short -= self._cache[victim].nbytes
                self._evict(victim)
                self.own_evictions += 1
            return short <= 0

    def allocating(self):
        """Held while memory is made room for and allocated outside any
        reservation (the scan's read-ahead), so that concurrent threads see
        each other's allocations."""
        return self._alloc_lock

    def make_room(self, nbytes: int, spare_this_run: bool = False) -> bool:
        """Evict cached table chunks (in _make_room's order) until nbytes
        more fit in the budget; True when they do. For memory taken outside
        any reservation (the scan's read-ahead copies)."""
        return self._make_room(int(nbytes), spare_this_run=spare_this_run)

    def _evict(self, key, counted: bool = True) -> None:
        entry = self._cache.pop(key)
        self._cache_bytes -= entry.nbytes
        self.evictions += counted
        if counted:
            self.last_eviction_run = self.runs

    # ------------------------------------------------------------- reservations
    def reservation(self, owner: str) -> Reservation:
        return Reservation(self, owner)

    def _grow(self, nbytes: int) -> bool:
        with self._lock:
            if not self._make_room(nbytes):
                # an operator will spill: caching more table chunks in this run
                # would only be evicted again by its next request
                self.pressure = True
                return False
            self._reserved += nbytes
            self.peak = max(self.peak, self._reserved + self._cache_bytes)
            return True

    def _shrink(self, nbytes: int) -> None:
        with self._lock:
            self._reserved -= nbytes

    # ------------------------------------------------------------- table cache
    def cache_get(self, key):
        with self._lock:
            e = self._cache.get(key)
            if e is None:
                return None
            self._cache.move_to_end(key)
            e.run = e.read = self.runs
            return e.value

    def cache_peek(self, key):
        """The value under key, or None, leaving the entry's place and marks
        as they are (a look that is not a read: a scan asking which of its
        chunks are cached must not make them the ones evicted first)."""
        with self._lock:
            e = self._cache.get(key)
            return None if e is None else e.value

    def cache_touch(self, keys) -> None:
        """Marks the entries of these keys (those the cache holds) as used
        by the run in progress, as a scan starts: the chunks it will read
        from the device are then not evicted to take in the ones it reads
        from the host."""
        with self._lock:
            for key in keys:
                e = self._cache.get(key)
                if e is not None:
                    self._cache.move_to_end(key)
                    e.run = self.runs

    def cache_put(self, key, value, nbytes: int) -> bool:
        """Keep value under key if it fits beside everything else (evicting
        older entries, but none the run in progress has used); False (not
        kept) otherwise."""
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                self._cache[key].run = self._cache[key].read = self.runs
                return True
            if not self.cache_room(nbytes):
                return False
            self._cache[key] = _CacheEntry(value, int(nbytes), self.runs, self.runs)
            self._cache_bytes += int(nbytes)
            self.peak = max(self.peak, self._reserved + self._cache_bytes)
            return True

    def cache_room(self, nbytes: int) -> bool:
        """Whether a new entry of nbytes can be kept: room made for it, if
        it can be, from the entries of earlier runs (asked before a value is
        made only to be kept: glint.io.chunk_reader's compact chunks)."""
        with self._lock:
            if (
                not self.cache_enabled
                or self.pressure
                or nbytes > self.limit - max(self.headroom, self.working_reserve() + self.slack())
            ):
                return False
            # a new entry never pushes reservations out, only older cache
            # entries, and of those only the ones this run has not used: a
            # scan of a table larger than the cache evicting its own first
            # chunks to take in its last ones would find none of them on
            # the device in its next pass (or in the same run's next scan of
            # the table), where sparing them finds as many as fit
            return self._make_room(nbytes, spare_this_run=True)

    def cache_drop(self, match=lambda key: True) -> int:
        """Drop the entries whose key matches; the bytes given back. A drop
        asked for (a table dropped or replaced, the cache emptied) is not an
        eviction: it does not tell the host tier that the device is short
        of room."""
        with self._lock:
            freed = 0
            for k in [k for k in self._cache if match(k)]:
                freed += self._cache[k].nbytes
                self._evict(k, counted=False)
            return freed

    def cache_keys(self) -> list:
        with self._lock:
            return list(self._cache)

    def __repr__(self) -> str:
        return (
            f"MemoryManager({self.device}, limit={format_bytes(self.limit)}, "
            f"reserved={format_bytes(self._reserved)}, cache={format_bytes(self._cache_bytes)})"
        )


class HostCache:
    """The second tier of the table cache (Theseus's batch holders in host
    memory): decoded host columns of the scan's pieces, kept under a byte
    budget and evicted least recently used. A chunk that left the device (or
    never fit there) is copied up again from here instead of being decoded
    from its file again: under a small GPU budget, warm runs are bound by the
    host-to-device copies, not by Parquet decoding.

    >>> h = HostCache(100)
    >>> h.put("a", "A", 60), h.put("b", "B", 60), h.get("a"), h.get("b"), h.bytes
    (True, True, None, 'B', 60)
    >>> h.put("c", "C", 500), h.drop(lambda k: k == "b"), h.bytes
    (False, 60, 0)
    """

    def __init__(self, limit: int, always: bool = True, others=None):
        self.limit = int(limit)
        # the bytes the tier's other half holds (the chunks as stored,
        # glint.io.page_tier), which share the limit
        self.others = others or (lambda: 0)
        # False (the default budget): pieces are kept only once the device
        # cache has had to evict (MemoryManager.evictions). Until then every
        # chunk stays on the device, and a host copy of each piece only kept
        # its memory from being reused: each decode then wrote into fresh
        # pages (TPC-H SF 100, five cold queries on an H200: 26.4 s with the
        # copies, 23.8 s without)
        self.always = always
        self.bytes = 0
        self.hits = 0
        self._entries: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def admits(self, manager: MemoryManager) -> bool:
        """Whether the scan keeps its decoded pieces here now: always when
        the host tier's limit or the device's was set, else once the device
        cache has had to evict."""
        return self.always or manager.limit_set or manager.evictions > 0

    def get(self, key):
        with self._lock:
            e = self._entries.get(key)
            if e is None:
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return e.value

    def put(self, key, value, nbytes: int) -> bool:
        nbytes = int(nbytes)
        limit = self.limit - self.others()
        if nbytes > limit:
            return False
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old.nbytes
            while self._entries and self.bytes + nbytes > limit:
                _, e = self._entries.popitem(last=False)
                self.bytes -= e.nbytes
            self._entries[key] = _CacheEntry(value, nbytes)
            self.bytes += nbytes
            return True

    def drop(self, match=lambda key: True) -> int:
        """Drop the entries whose key matches; the bytes given back."""
        with self._lock:
            freed = 0
            for k in [k for k in self._entries if match(k)]:
                freed += self._entries.pop(k).nbytes
            self.bytes -= freed
            return freed


def default_host_cache_limit(device: torch.device) -> int:
    """The host tier's budget when the user sets none: 40% of the host's
    memory under a GPU, or 60% of what is free when the connection is made
    if that is less (another program, or this one's other data, holding much
    of the rest), shared by the ranks this host runs (0 on the CPU, whose
    device cache is host memory). The tier's pages are pinned: four ranks of
    40% each would pin more than the host has, and pinned pages cannot be
    reclaimed when the host runs short."""
    if torch.device(device).type != "cuda":
        return 0
    budget = int(host_memory_total() * 0.4)
    free = host_memory_available()
    if free:
        budget = min(budget, int(free * 0.6))
    return budget // ranks_on_this_host()


def ranks_on_this_host() -> int:
    """The glint ranks running on this host, as their launcher says:
    torchrun's LOCAL_WORLD_SIZE, or the ranks glint's own launcher started
    here (GLINT_DIST_WORLD); 1 for a process of its own."""
    for name in ("LOCAL_WORLD_SIZE", "GLINT_DIST_WORLD"):
        try:
            n = int(os.environ.get(name, ""))
        except ValueError:
            continue
        if n > 0:
            return n
    return 1


class Reservation:
    """Bytes an operator holds. Grow before holding more; False means spill.
    Released in full by :meth:`release` (also when used as a context manager)."""

    __slots__ = ("manager", "owner", "bytes")

    def __init__(self, manager: MemoryManager, owner: str):
        self.manager, self.owner, self.bytes = manager, owner, 0

    def grow(self, nbytes: int) -> bool:
        nbytes = int(nbytes)
        if nbytes <= 0:
            return True
        if self.manager._grow(nbytes):
            self.bytes += nbytes
            return True
        return False

    def shrink(self, nbytes: int) -> None:
        nbytes = min(int(nbytes), self.bytes)
        if nbytes > 0:
            self.manager._shrink(nbytes)
            self.bytes -= nbytes

    def resize(self, nbytes: int) -> bool:
        """Make the reservation exactly nbytes (growing may fail)."""
        if nbytes > self.bytes:
            return self.grow(nbytes - self.bytes)
        self.shrink(self.bytes - nbytes)
        return True

    def release(self) -> None:
        self.shrink(self.bytes)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _cuda_allocated(device: torch.device) -> int:
    """The CUDA caching allocator's count of allocated bytes, read from its
    statistics directly (torch.cuda.memory_allocated flattens the whole
    statistics dictionary first: ~100 us a call, and the memory manager asks
    on every reservation and eviction)."""
    index = device.index if device.index is not None else torch.cuda.current_device()
    try:
        return torch._C._cuda_memoryStats(index)["allocated_bytes"]["all"]["current"]
    except (AttributeError, KeyError, TypeError, RuntimeError):
        return torch.cuda.memory_allocated(device)


# ------------------------------------------------------------------ defaults
# What a chunk in flight needs on a GPU beside the cache and the reservations,
# per row, until a run shows more (see default_chunk_rows): a budget of
# HUGE_BUDGET or more keeps HUGE_BUDGET_BYTES_PER_ROW, one of LARGE_BUDGET or
# more LARGE_BUDGET_BYTES_PER_ROW, a smaller one WORKING_BYTES_PER_ROW.
WORKING_BYTES_PER_ROW = 1024
LARGE_BUDGET = 4 << 30
LARGE_BUDGET_BYTES_PER_ROW = 256
HUGE_BUDGET = 100 << 30
HUGE_BUDGET_BYTES_PER_ROW = 128
MAX_GPU_CHUNK_ROWS = 1 << 28


def working_bytes_per_row(device: torch.device, limit: int) -> int:
    """The working memory kept free per chunk row on ``device`` under a
    budget of ``limit`` bytes (none on the CPU, where only declared memory
    counts).

    >>> gpu = torch.device("cuda")
    >>> [working_bytes_per_row(gpu, g << 30) for g in (123, 74, 16, 2)]
    [128, 256, 256, 1024]
    """
    if torch.device(device).type != "cuda":
        return 0
    if limit >= HUGE_BUDGET:
        return HUGE_BUDGET_BYTES_PER_ROW
    return LARGE_BUDGET_BYTES_PER_ROW if limit >= LARGE_BUDGET else WORKING_BYTES_PER_ROW


def default_limit(device: torch.device) -> int:
    """The budget when the user sets none: what the GPU has free (less 5% for
    the CUDA context and other processes' growth), or 60% of the host memory
    still available on the CPU."""
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return int(free * 0.95)
    return int(host_memory_available() * 0.6)


def default_chunk_rows(device: torch.device, limit: int, explicit: bool = False) -> int:
    """Rows per chunk (morsel): a power of two between 2**14 and 2**28 on a GPU
    (launch and sync overheads are per chunk, so large), 2**21 on the CPU.

    On a GPU a chunk in flight costs more than its columns: expressions over
    it make temporaries, and a cold scan's read-ahead holds more. The memory
    manager keeps :func:`working_bytes_per_row` free per chunk row beside the
    cache and the breakers, and a chunk takes at most a third of the budget
    that way. Warm TPC-H SF 100 on an 80 GB H100 peaked at 233 bytes a row
    beyond the cache with chunks of 2**26 rows (Q9; 25 for Q1), and ran
    1.40 s for Q1-Q12 with chunks of 2**24 rows, 1.15 s with 2**25 and
    1.01 s with 2**26: a budget of 4 GiB or more keeps 256 bytes a row, and
    gets 2**26 rows on an H100. On a 141 GB H200 (a budget of about 123 GiB),
    chunks of 2**28 rows took no query past 85 bytes a row beyond the cache
    (Q5; 68 GB of cache), and the 22 queries 1.19 s against 1.25-1.27 s with
    2**26: a budget of 100 GiB or more keeps 128 bytes a row, and gets 2**28
    rows. Under 16 GB (2**24 rows) on one H200, TPC-H SF 100 read from the
    host tier took 22.7 s in chunks of 2**24 rows against 47.8 s in 2**22:
    its time is host work per chunk. A budget below 4 GiB keeps 1 KiB a row,
    where the read-ahead of a cold scan matters more. On the CPU a sixteenth
    of the budget at ~64 bytes a row, a quarter of that under a limit the
    user set.

    >>> gpu = torch.device("cuda")
    >>> [default_chunk_rows(gpu, g << 30).bit_length() - 1 for g in (123, 74, 40, 16, 1)]
    [28, 26, 25, 24, 18]
    """
    device = torch.device(device)
    if device.type == "cuda":
        rows = max(1, limit // (3 * working_bytes_per_row(device, limit)))
        return 1 << max(14, min(MAX_GPU_CHUNK_ROWS.bit_length() - 1, rows.bit_length() - 1))
    rows = max(1, limit // (16 * 64 * (4 if explicit else 1)))
    return 1 << max(14, min(21, rows.bit_length() - 1))
