"""``glint bench --profile``: each query once more under torch.profiler, after
every query's timed runs (not timed with them, its result not checked again), with CPU
activity and, on a CUDA device, CUDA activity. Per query:

- ``gpu_busy_s``: seconds the GPU was busy: the union of the intervals of its
  kernels, memory copies and memsets (work overlapping on several streams
  counted once);
- ``kernel_launches``: device kernels run (copies and memsets not counted);
- ``memcpy_count``: memory copies on the device (host to device, device to
  host, device to device);
- ``host_syncs``: calls in the CPU trace where the host waits for the device:
  cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize (and the
  driver's cuStreamSynchronize, cuCtxSynchronize, cuEventSynchronize) and
  synchronous copies (cudaMemcpy, cuMemcpyDtoH..., not the ``Async`` ones);
  the harness's own synchronisation after the query is not counted;
- ``top_kernels``: the three kernels with the most GPU time, each
  ``{"name", "count", "total_s"}``;
- ``profiled_s``: the wall time of the profiled run (the profiler's overhead
  included);
- ``profile_error``: why a profile is missing, when it is.

The device fields are null on the CPU (and where torch.profiler has no CUDA
activity). With ``--ranks`` the profile is of rank 0's process: the other
ranks' kernels are not in it.

Profiler events differ between torch versions; only what every version has is
read: a FunctionEvent's ``name``, ``device_type`` and ``time_range``, with the
Kineto events themselves (``name()``, ``device_type()``, ``start_ns()``,
``end_ns()`` or ``duration_ns()``) as a fallback.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.autograd import DeviceType
from torch.profiler import (
    ProfilerActivity,
    profile,
    record_function,
    supported_activities,
)

PROFILE_FIELDS = (
    "gpu_busy_s",
    "kernel_launches",
    "memcpy_count",
    "host_syncs",
    "top_kernels",
    "profiled_s",
    "profile_error",
)
DEVICE_FIELDS = ("gpu_busy_s", "kernel_launches", "memcpy_count", "host_syncs", "top_kernels")
MARK = "glint bench: profiled query"  # the record_function around the query
TOP_KERNELS = 3
SYNC_CALLS = frozenset(
    {
        "cudaStreamSynchronize",
        "cudaDeviceSynchronize",
        "cudaEventSynchronize",
        "cudaThreadSynchronize",
        "cuStreamSynchronize",
        "cuCtxSynchronize",
        "cuEventSynchronize",
    }
)
# activities on the device's timeline that are no work of the device: synchronisation records
_DEVICE_WAITS = ("Stream Sync", "Event Sync", "Context Sync", "Stream Wait Event")


@dataclass(frozen=True)
class TraceEvent:
    """One event of a profile, as every torch version gives it (times in microseconds)."""

    name: str
    on_device: bool
    start_us: float
    end_us: float
    annotation: bool = False  # a record_function range (on the device: the span of its work)


def device_activity(name: str) -> str:
    """'memcpy', 'memset' or 'kernel': what a device event is, by its name.

    >>> [device_activity(n) for n in ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "triton_red_0")]
    ['memcpy', 'memset', 'kernel']
    """
    lower = name.lower()
    if lower.startswith("memcpy"):
        return "memcpy"
    if lower.startswith("memset"):
        return "memset"
    return "kernel"


def is_host_sync(name: str) -> bool:
    """A CUDA runtime or driver call on which the host waits for the device.

    >>> [is_host_sync(n) for n in ("cudaStreamSynchronize", "cudaMemcpy", "cudaMemcpyAsync", "cuMemcpyDtoH_v2",
    ...                            "cudaLaunchKernel")]
    [True, True, False, True, False]
    """
    if name in SYNC_CALLS:
        return True
    return name.startswith(("cudaMemcpy", "cuMemcpy")) and "Async" not in name


def busy_seconds(intervals) -> float:
    """The length of the union of ``(start_us, end_us)`` intervals, in seconds.

    >>> busy_seconds([(0, 2e6), (1e6, 3e6), (5e6, 6e6)])
    4.0
    """
    total = 0.0
    lo = hi = None
    for a, b in sorted(intervals):
        if hi is None or a > hi:
            if hi is not None:
                total += hi - lo
            lo, hi = a, b
        else:
            hi = max(hi, b)
    if hi is not None:
        total += hi - lo
    return total / 1e6


def summarize(events: list[TraceEvent], top: int = TOP_KERNELS) -> dict:
    """The device fields of a profile from its events.

    >>> ev = [TraceEvent(MARK, False, 0, 100, True), TraceEvent("cudaStreamSynchronize", False, 50, 60),
    ...       TraceEvent("cudaDeviceSynchronize", False, 120, 130), TraceEvent("k1", True, 10, 40),
    ...       TraceEvent("k1", True, 30, 50), TraceEvent("Memcpy DtoH (Device -> Pinned)", True, 60, 70),
    ...       TraceEvent(MARK, True, 10, 70, True)]
    >>> s = summarize(ev)
    >>> round(s["gpu_busy_s"] * 1e6), s["kernel_launches"], s["memcpy_count"], s["host_syncs"]
    (50, 2, 1, 1)
    >>> s["top_kernels"]
    [{'name': 'k1', 'count': 2, 'total_s': 5e-05}]
    """
    annotations = {e.name for e in events if e.annotation} | {MARK}
    device = [e for e in events if e.on_device and e.name not in annotations and e.name not in _DEVICE_WAITS]
    kinds = [device_activity(e.name) for e in device]
    per_kernel: dict[str, list] = {}
    for e, kind in zip(device, kinds):
        if kind == "kernel":
            c = per_kernel.setdefault(e.name, [0, 0.0])
            c[0] += 1
            c[1] += e.end_us - e.start_us
    mark = next((e for e in events if not e.on_device and e.name == MARK), None)
    syncs = [e for e in events if not e.on_device and is_host_sync(e.name)]
    if mark is not None:
        host_syncs = sum(mark.start_us <= e.start_us <= mark.end_us for e in syncs)
    else:  # no range to tell: all but the harness's own synchronisation
        host_syncs = max(0, len(syncs) - 1)
    ranked = sorted(per_kernel.items(), key=lambda kv: (-kv[1][1], kv[0]))[:top]
    return {
        "gpu_busy_s": busy_seconds((e.start_us, e.end_us) for e in device),
        "kernel_launches": kinds.count("kernel"),
        "memcpy_count": kinds.count("memcpy"),
        "host_syncs": host_syncs,
        "top_kernels": [{"name": name[:300], "count": c, "total_s": us / 1e6} for name, (c, us) in ranked],
    }


# ------------------------------------------------------------------ reading a profile
def _on_device(device_type) -> bool:
    return device_type is not None and device_type != DeviceType.CPU


def _function_events(prof) -> list[TraceEvent]:
    out = []
    for evt in prof.events() or []:
        span = evt.time_range
        out.append(
            TraceEvent(
                str(evt.name),
                _on_device(getattr(evt, "device_type", None)),
                float(span.start),
                float(span.end),
                bool(getattr(evt, "is_user_annotation", False)),
            )
        )
    return out


def _kineto_events(prof) -> list[TraceEvent]:
    out = []
    for evt in prof.profiler.kineto_results.events():
        start_ns = evt.start_ns() if hasattr(evt, "start_ns") else evt.start_us() * 1000
        if hasattr(evt, "end_ns"):
            end_ns = evt.end_ns()
        elif hasattr(evt, "duration_ns"):
            end_ns = start_ns + evt.duration_ns()
        else:
            end_ns = start_ns + evt.duration_us() * 1000
        annotation = getattr(evt, "is_user_annotation", lambda: False)()
        out.append(
            TraceEvent(str(evt.name()), _on_device(evt.device_type()), start_ns / 1000, end_ns / 1000, bool(annotation))
        )
    return out


def trace_events(prof) -> list[TraceEvent]:
    """The events of a finished profile: its FunctionEvents, or, when this
    torch cannot build them, the Kineto events they are made from."""
    try:
        return _function_events(prof)
    except Exception:  # noqa: BLE001 - another torch's event fields: the Kineto events
        return _kineto_events(prof)


def _sync(device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def profile_run(run: Callable[[], object], device) -> dict:
    """Run ``run()`` once under torch.profiler and summarise it: the fields of
    PROFILE_FIELDS, the device's null on the CPU. A failure of the profiler
    (or of the run) is reported in ``profile_error``, never raised."""
    out: dict = dict.fromkeys(PROFILE_FIELDS)
    activities = [ProfilerActivity.CPU]
    cuda = device.type == "cuda"
    if cuda and ProfilerActivity.CUDA in supported_activities():
        activities.append(ProfilerActivity.CUDA)
    elif cuda:
        out["profile_error"] = "torch.profiler has no CUDA activity here (no CUPTI): no device fields"
        cuda = False
    try:
        _sync(device)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            # torch 2.11 warns that a profile keeps the events of its last cycle only: it has one
            warnings.filterwarnings("ignore", message=".*Profiler clears events", category=UserWarning)
            with profile(activities=activities) as prof:
                with record_function(MARK):
                    run()
                _sync(device)
            out["profiled_s"] = time.perf_counter() - t0
            if cuda:
                out.update(summarize(trace_events(prof)))
    except KeyboardInterrupt:
        raise
    except Exception as e:  # noqa: BLE001 - a profile is extra: the query's times stand without it
        out["profile_error"] = f"{type(e).__name__}: {str(e).strip()[:500]}"
    return out
