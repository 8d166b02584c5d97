"""Pinned host memory for copies to the GPU: a pool of fixed-size
page-locked buffers per device, allocated once per process and reused
(Theseus's pool of buffers allocated once), and the thread pool that fills
them. Pageable host memory copies to an H100 at 6.5 GB/s against 55 GB/s
pinned, and pinning memory on the fly is slower still (1.2 GB/s), so buffers
are pinned once and a buffer is reused only after the copy out of it has
finished (an event per buffer). Users: glint.io.transfer's uploads."""

from __future__ import annotations

import atexit
import os
import threading

import torch

BUFFER_BYTES = 16 << 20


def default_buffers() -> int:
    """Pinned buffers per device when the pinned_buffers setting is 0: 48
    (768 MiB) on a host of 32 GiB or more, else 16. With 16, a cold scan's
    staging threads waited for buffers (their copies queue behind each
    other): TPC-H SF 100's Q1 Q3 Q6 Q9 Q18 cold took 13.3-13.4 s with 48
    against 14.5-17.3 s with 16 on one H200 host."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        ram = 0
    return 48 if ram >= 32 << 30 else 16


class PinnedPool:
    """Fixed-size pinned host buffers with an event each, for one CUDA device
    (``count`` of them, 0: default_buffers(); a window's buffer is reused
    once its copy is done)."""

    def __init__(self, device: torch.device, buffer_bytes: int = BUFFER_BYTES, count: int = 0):
        self.device = torch.device(device)
        self.buffer_bytes = buffer_bytes
        self.count = count or default_buffers()
        self._free: list[tuple[torch.Tensor, torch.cuda.Event | None]] = []
        self._made = 0
        self._cv = threading.Condition()
        self._filling = False
        self._filler: threading.Thread | None = None
        self._stop = threading.Event()
        self.stream = torch.cuda.Stream(self.device)

    def acquire(self) -> torch.Tensor:
        with self._cv:
            while not self._free and self._made >= self.count:
                self._cv.wait()
            if self._free:
                buf, ev = self._free.pop()
            else:
                buf, ev = torch.empty(self.buffer_bytes, dtype=torch.uint8, pin_memory=True), None
                self._made += 1
        if ev is not None:  # the last copies out of this buffer are done
            for e in ev if isinstance(ev, list) else (ev,):
                e.synchronize()
        return buf

    def fill_in_background(self) -> None:
        """Pins the pool's buffers on a thread of their own, once (a
        connection starts it: pinning 256 MiB takes a good part of a second,
        which the first scan would otherwise wait for, while the connection's
        tables are registered and its first query planned)."""
        with self._cv:
            if self._filling or self._made >= self.count:
                return
            self._filling = True

        def fill():
            while not self._stop.is_set():
                with self._cv:
                    if self._made >= self.count:
                        return
                    self._made += 1  # counted before the (slow) pinning, outside the lock
                try:
                    buf = torch.empty(self.buffer_bytes, dtype=torch.uint8, pin_memory=True)
                except Exception:  # noqa: BLE001 -- acquire() pins its own, and raises if it cannot
                    with self._cv:
                        self._made -= 1
                        self._cv.notify()
                    return
                self.release(buf, None)

        self._filler = threading.Thread(target=fill, name="glint-pin", daemon=True)
        self._filler.start()

    def stop_filling(self) -> None:
        """Stops the background pinning after the buffer being pinned now
        (the process exits: see _stop_pinning)."""
        self._stop.set()
        t = self._filler
        if t is not None and t is not threading.current_thread():
            t.join()

    def put_back(self, buf: torch.Tensor) -> None:
        """Return a buffer whose copy never started (its staging failed):
        a buffer lost on an error would leave the other decoding threads
        waiting for it forever."""
        self.release(buf, None)

    def release(self, buf: torch.Tensor, ev) -> None:
        """``buf`` may be handed out again once ``ev`` (an event, a list of
        them, or None) has passed."""
        with self._cv:
            self._free.append((buf, ev))
            self._cv.notify()


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()
_STAGING = None


@atexit.register
def _stop_pinning() -> None:
    """A process exiting right after a connection opened (a query that failed
    at once) waits for the buffer being pinned: a daemon thread still inside
    CUDA's allocation when the interpreter shuts down aborts the process as it
    returns ("terminate called without an active exception")."""
    for pool in list(_POOLS.values()):
        pool.stop_filling()


def staging_pool(threads: int = 0):
    """Threads that fill pinned windows and start their copies (memory-bound
    work, apart from the decoding threads so that a chunk's copies never
    queue behind the decoding of the chunks after it); the windows of the
    chunk the query needs soonest first (glint.runtime.priority_pool).
    Made once per process, of ``threads`` threads (the staging_threads
    setting of the connection that first asks), 0: a quarter of the cores,
    at least 4: a cold query's threads hold the GIL 85-97% of its wall
    (py-spy --gil, TPC-H SF 100 Q1 and Q12 on an H200 host), so more
    staging threads only wait for it; five SF 100 queries were no slower
    with 4 than with 8 on a 16-core host, and 2 was worse once."""
    global _STAGING
    with _POOLS_LOCK:
        if _STAGING is None:
            from glint.runtime.priority_pool import PriorityPool

            n = threads or max(4, (os.cpu_count() or 16) // 4)
            _STAGING = PriorityPool(n, "glint-stage")
        return _STAGING


def pinned_pool(device: torch.device, buffers: int = 0) -> PinnedPool:
    """The pool of this process for a CUDA device (pinning memory is slow:
    once per process), of ``buffers`` buffers (the pinned_buffers setting of
    the connection that first asks; 0: default_buffers())."""
    device = torch.device(device)
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    with _POOLS_LOCK:
        pool = _POOLS.get(device.index)
        if pool is None:
            pool = _POOLS[device.index] = PinnedPool(device, count=buffers)
        return pool
