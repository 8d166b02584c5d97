"""Host -> device copies through a pool of pinned buffers (Vortex's IO path;
Theseus's pool of fixed-size page-locked buffers allocated once).

Decoded columns sit in ordinary (pageable) host memory, which the GPU copies
from at a fraction of the bus speed (GPU-NOTES: 6.5 GB/s pageable against 55
GB/s pinned), and pinning memory on the fly is slower still (1.2 GB/s). So a
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

import threading

import torch

from .column import Column

BUFFER_BYTES = 16 << 20
BUFFERS = 16         # one per decoding thread (16 cores on the device host)


class PinnedPool:
    """Fixed-size pinned host buffers with an event each, for one CUDA device."""

    def __init__(self, device: torch.device, buffer_bytes: int = BUFFER_BYTES, count: int = BUFFERS):
        self.device = torch.device(device)
        self.buffer_bytes = buffer_bytes
        self.count = count
        self._free: list[tuple[torch.Tensor, torch.cuda.Event | None]] = []
        self._made = 0
        self._cv = threading.Condition()
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
        if ev is not None:
            ev.synchronize()            # the last copy out of this buffer is done
        return buf

    def release(self, buf: torch.Tensor, ev) -> None:
        with self._cv:
            self._free.append((buf, ev))
            self._cv.notify()


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def pinned_pool(device: torch.device) -> PinnedPool:
    """The pool of this process for a CUDA device (pinning memory is slow: once per process)."""
    device = torch.device(device)
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    with _POOLS_LOCK:
        pool = _POOLS.get(device.index)
        if pool is None:
            pool = _POOLS[device.index] = PinnedPool(device)
        return pool


class Uploader:
    """Copies host tensors to one CUDA device through a :class:`PinnedPool`."""

    def __init__(self, pool: PinnedPool):
        self.pool = pool
        self.bytes = 0

    def tensor(self, t: torch.Tensor) -> torch.Tensor:
        dev = self.pool.device
        if t.device.type != "cpu":
            return t.to(dev)
        t = t.contiguous()
        with torch.cuda.device(dev), torch.cuda.stream(self.pool.stream):
            out = torch.empty(t.shape, dtype=t.dtype, device=dev)
            n = t.numel() * t.element_size()
            if n == 0:
                return out
            if t.is_pinned():
                out.copy_(t, non_blocking=True)
                self.bytes += n
                return out
            src = t.reshape(-1).view(torch.uint8)
            src_np = src.numpy()
            dst = out.reshape(-1).view(torch.uint8)
            step = self.pool.buffer_bytes
            for off in range(0, n, step):
                k = min(step, n - off)
                buf = self.pool.acquire()
                # numpy's copy: one thread, GIL released; torch's CPU copy would
                # start its own parallel team from each of the decoding threads
                buf.numpy()[:k] = src_np[off:off + k]
                dst[off:off + k].copy_(buf[:k], non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(self.pool.stream)
                self.pool.release(buf, ev)
            self.bytes += n
            return out

    def column(self, c: Column) -> Column:
        d = c.dictionary
        if d is not None:
            d = d.map_tensors(self.tensor)
        return Column(c.dtype, self.tensor(c.data), None if c.valid is None else self.tensor(c.valid), d)

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
