"""Host -> device copies over several GPUs' PCIe links (IO forwarding, after
Vortex): on a host with several GPUs, a query on one of them pulls its
chunks through the others' links too. A piece of a copy goes either
straight over the executing GPU's own link, or to a helper GPU (host ->
helper, by the helper's copy engine) and on over NVLink to the executing
GPU. The helpers run no kernels: only their copy engines and a few bounce
buffers of theirs are used.

The step over NVLink is a pull: a copy kernel on the executing GPU reads
the helper's bounce buffer (glint.kernels.peer_copy says why torch's copy,
a push that maps every allocation of the executing GPU into the helpers,
was slower). So the executing GPU may read its helpers' memory, and never
the other way round.

Measured on a host of four H200s (NVLink between every pair, one NUMA node,
16 MiB pieces): one link carried 54 GB/s, the four links to their own GPUs
at once 136 GB/s, and one GPU's copies forwarded over 2, 3 and 4 links 100,
128 and 144 GB/s; the peer copies ran at 298 GB/s, so they do not bound it.
Pieces of 4 MiB reached only 62 GB/s over four links (the host's work per
piece, a few Python calls, bounded them), so a piece is never smaller than
a pinned window (16 MiB).

Streams. A direct piece is copied on the caller's stream. A forwarded piece
is copied into a bounce buffer on the helper's ``h2d`` stream, then pulled
into the destination on the executing GPU's ``pull`` stream for that
helper, which first waits for the caller's stream as it was when the copy
was asked for (the destination was allocated, and its old contents'
readers ordered, there). The caller's stream is joined to every ``pull``
stream (:meth:`Forwarder.join`) before anything reads what was copied; a
source buffer may be reused once the events :meth:`Forwarder.copy` returns
have passed (the last copy out of it). A bounce buffer is reused once its
pull is done (an event per buffer, waited for on the GPU, never by the
host).

The forwarder is made once per process and device (:func:`forwarder`); the
``io_forwarding`` setting says whether a connection's scans use it:
``auto`` where the executing GPU has peers and a copy over all of the links
measured at least ``WIN`` times faster than over its own (measured once, at
first use), ``on`` wherever it has peers, ``off`` (the default) never.
Off by default because TPC-H SF 100 under a 16 GB limit was not faster
with it (docs/performance.md): the bus was not what bounded those scans. A rank of a
distributed run never forwards: the other GPUs are ranks' own.
"""

from __future__ import annotations

import os
import threading
import time

import torch

from glint.errors import GlintError
from glint.io.pinned import BUFFER_BYTES
from glint.kernels.peer_copy import pull

# the speed-up over one link that auto mode asks for
WIN = 1.2
# bounce buffers per helper GPU (each of a piece): copies into them and out
# of them overlap, and several staging threads can have pieces in flight
RING = 4


def pieces(nbytes: int, piece: int, links: int, turn: int) -> list[tuple[int, int, int]]:
    """The pieces of a copy of ``nbytes`` bytes, at most ``piece`` bytes each,
    as (link, start, end), the links taken in turn from ``turn`` (link 0:
    the executing GPU's own).

    >>> pieces(40, 16, 3, 2)
    [(2, 0, 16), (0, 16, 32), (1, 32, 40)]
    >>> pieces(10, 16, 4, 5)
    [(1, 0, 10)]
    >>> pieces(0, 16, 4, 0)
    []
    """
    return [((turn + i) % links, s, min(nbytes, s + piece)) for i, s in enumerate(range(0, nbytes, piece))]


def _helper_device(index: int) -> torch.device:
    return torch.device("cuda", index)


def _allow_reads(dst: torch.device, helper: torch.device) -> None:
    """Lets ``dst`` read ``helper``'s memory (not the other way round): a
    one-byte copy from ``dst`` to ``helper``, for which torch enables
    exactly that access (and maps the helper's allocations for it)."""
    if dst.type == "cuda" and helper.type == "cuda":
        torch.empty(1, dtype=torch.uint8, device=helper).copy_(torch.zeros(1, dtype=torch.uint8, device=dst))


class _Helper:
    """One helper GPU's copy stream and bounce buffers, and the executing
    GPU's stream that pulls from them."""

    def __init__(self, index: int, dst: torch.device, piece: int):
        self.device = _helper_device(index)
        _allow_reads(dst, self.device)
        self.h2d = torch.cuda.Stream(self.device)
        self.pull = torch.cuda.Stream(dst)
        self.dst = dst
        self.bufs = [torch.empty(piece, dtype=torch.uint8, device=self.device) for _ in range(RING)]
        self.freed: list[torch.cuda.Event | None] = [None] * RING
        self.next = 0
        self.lock = threading.Lock()

    def send(self, dst: torch.Tensor, src: torch.Tensor, ready: torch.cuda.Event) -> torch.cuda.Event:
        """Copies pinned ``src`` to ``dst`` (on the executing GPU) through
        this helper; the event after which ``src`` may be reused."""
        n = src.numel()
        with self.lock:
            b = self.next
            self.next = (b + 1) % RING
            buf = self.bufs[b][:n]
            if self.freed[b] is not None:
                self.h2d.wait_event(self.freed[b])
            with torch.cuda.device(self.device), torch.cuda.stream(self.h2d):
                buf.copy_(src, non_blocking=True)
                landed = torch.cuda.Event()
                landed.record(self.h2d)
            self.pull.wait_event(landed)
            self.pull.wait_event(ready)
            with torch.cuda.device(self.dst), torch.cuda.stream(self.pull):
                pull(dst, buf)
                freed = torch.cuda.Event()
                freed.record(self.pull)
            self.freed[b] = freed
        return landed


class Forwarder:
    """Copies from pinned host memory to ``device`` over its own link and
    the links of ``helpers`` (GPU indices), a piece at a time in turn."""

    def __init__(self, device: torch.device, helpers: list[int], piece: int = BUFFER_BYTES):
        self.device = torch.device(device)
        self.piece = piece
        self.helpers = [_Helper(k, self.device, piece) for k in helpers]
        self.links = 1 + len(self.helpers)
        self._turn = 0
        self._lock = threading.Lock()
        # the calibration's rates (GB/s): one link, all of them
        self.direct_gbps: float | None = None
        self.forwarded_gbps: float | None = None

    def copy(self, dst: torch.Tensor, src: torch.Tensor, stream) -> tuple[int, list]:
        """Copies pinned ``src`` (uint8) to ``dst`` (uint8, on the device, as
        many bytes); direct pieces on ``stream``. Returns (the bytes that
        went over other GPUs' links, the events after which ``src`` may be
        reused). What was copied may be read once ``stream`` has been
        joined (:meth:`join`)."""
        n = src.numel()
        with self._lock:
            turn = self._turn
            self._turn += (n + self.piece - 1) // self.piece
        ready = torch.cuda.Event()
        with torch.cuda.device(self.device):
            ready.record(stream)
        forwarded, events, direct = 0, [], False
        for link, s, e in pieces(n, self.piece, self.links, turn):
            if link == 0:
                with torch.cuda.device(self.device), torch.cuda.stream(stream):
                    dst[s:e].copy_(src[s:e], non_blocking=True)
                direct = True
            else:
                events.append(self.helpers[link - 1].send(dst[s:e], src[s:e], ready))
                forwarded += e - s
        if direct:
            ev = torch.cuda.Event()
            with torch.cuda.device(self.device):
                ev.record(stream)
            events.append(ev)
        return forwarded, events

    def join(self, stream) -> None:
        """``stream`` (on the device) waits for every forwarded copy asked for so far."""
        for h in self.helpers:
            stream.wait_stream(h.pull)

    def calibrate(self, nbytes: int = 256 << 20, repeats: int = 2) -> None:
        """Times a copy of ``nbytes`` over the device's own link and over
        all of the links (the best of ``repeats``), into direct_gbps and
        forwarded_gbps."""
        src = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        dst = torch.empty(nbytes, dtype=torch.uint8, device=self.device)
        stream = torch.cuda.Stream(self.device)
        devices = [self.device] + [h.device for h in self.helpers]

        def timed(fn) -> float:
            best = float("inf")
            for _ in range(repeats + 1):  # (the first: peer access set up, buffers touched)
                for d in devices:
                    torch.cuda.synchronize(d)
                t0 = time.perf_counter()
                fn()
                for d in devices:
                    torch.cuda.synchronize(d)
                best = min(best, time.perf_counter() - t0)
            return best

        def direct():
            with torch.cuda.device(self.device), torch.cuda.stream(stream):
                for s in range(0, nbytes, self.piece):
                    dst[s : s + self.piece].copy_(src[s : s + self.piece], non_blocking=True)

        def forwarded():
            for s in range(0, nbytes, self.piece):
                self.copy(dst[s : s + self.piece], src[s : s + self.piece], stream)
            self.join(stream)

        self.direct_gbps = round(nbytes / timed(direct) / 1e9, 1)
        self.forwarded_gbps = round(nbytes / timed(forwarded) / 1e9, 1)

    def describe(self) -> dict:
        return {
            "device": str(self.device),
            "helpers": [h.device.index for h in self.helpers],
            "direct_gbps": self.direct_gbps,
            "forwarded_gbps": self.forwarded_gbps,
        }


_FORWARDERS: dict = {}
# device index -> why its forwarder could not be made (auto then copies over its own link only)
FAILED: dict = {}
_LOCK = threading.Lock()


def in_distributed_run() -> bool:
    """Whether this process is one rank of several (torchrun's environment,
    or a process group of more than one)."""
    try:
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            return True
    except ValueError:
        pass
    dist = torch.distributed
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def peers(device: torch.device) -> list[int]:
    """The other visible GPUs that ``device`` and they can copy to each other directly."""
    d = device.index if device.index is not None else torch.cuda.current_device()
    return [
        k
        for k in range(torch.cuda.device_count())
        if k != d and torch.cuda.can_device_access_peer(d, k) and torch.cuda.can_device_access_peer(k, d)
    ]


def forwarder(device, mode: str) -> Forwarder | None:
    """The process's forwarder for a CUDA ``device`` under the io_forwarding
    setting ``mode`` (see the module's text), or None: copies go over the
    device's own link only."""
    device = torch.device(device)
    if mode == "off" or device.type != "cuda" or torch.cuda.device_count() < 2 or in_distributed_run():
        return None
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    with _LOCK:
        if device.index not in _FORWARDERS:
            helpers = peers(device)
            fw = None
            if helpers:
                try:
                    fw = Forwarder(device, helpers)
                    fw.calibrate()
                except Exception as e:  # noqa: BLE001 - copies then go over the device's own link
                    FAILED[device.index] = f"{type(e).__name__}: {e}"
                    fw = None
            _FORWARDERS[device.index] = fw
        fw = _FORWARDERS[device.index]
    if fw is None and mode == "on" and device.index in FAILED:
        raise GlintError(f"io_forwarding = on: copies to {device} cannot go over other GPUs: {FAILED[device.index]}")
    if fw is None or (mode == "auto" and not (fw.forwarded_gbps or 0) >= WIN * (fw.direct_gbps or float("inf"))):
        return None
    return fw


def forwarding_info(device, mode: str) -> dict | None:
    """What the bench reports of forwarding on this device: the helpers and
    the measured rates, and whether ``mode`` uses it (None where the device
    has no peers)."""
    try:
        fw = forwarder(device, "on" if mode != "off" else "off")
    except GlintError as e:
        return {"device": str(device), "error": str(e), "used": False}
    if fw is None:
        return None
    return {**fw.describe(), "used": forwarder(device, mode) is not None}
