"""The machine a benchmark ran on: host, CPU, RAM, GPU (its peak memory
bandwidth included) and library versions, and the device's name as reports
and file names spell it. Shared by ``glint bench tpch|ssb`` and ``glint bench
exchange``."""

from __future__ import annotations

import os
import platform
import re
import socket
import subprocess
import time
from pathlib import Path

import pyarrow
import torch

from glint import __version__

# peak memory bandwidth (GB/s, the vendors' data sheets) of GPUs whose CUDA
# properties do not give a memory clock; the first name found in the device's
# name wins, so the more specific names come first
_BANDWIDTH_GBPS = (
    ("h200", 4800.0),
    ("h100 nvl", 3900.0),
    ("h100 pcie", 2000.0),
    ("h100", 3350.0),
    ("a100-sxm4-80gb", 2039.0),
    ("a100 80gb pcie", 1935.0),
    ("a100", 1555.0),
)


def _run_quiet(cmd: list[str], timeout: float = 10) -> str | None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 else None


def _cpu_model() -> str | None:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _ram_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def memory_bandwidth_gbps(props) -> float | None:
    """Peak memory bandwidth (GB/s) of a CUDA device from its properties:
    2 transfers per memory clock (kHz) x the bus width (bits) / 8, or the data
    sheet's figure for a known GPU; None when neither is known.

    >>> from types import SimpleNamespace as P
    >>> memory_bandwidth_gbps(P(name="NVIDIA H100 80GB HBM3", memory_clock_rate=2619000, memory_bus_width=5120))
    3352.32
    >>> memory_bandwidth_gbps(P(name="NVIDIA H200")), memory_bandwidth_gbps(P(name="a GPU"))
    (4800.0, None)
    """
    clock_khz = getattr(props, "memory_clock_rate", 0) or 0
    bus_bits = getattr(props, "memory_bus_width", 0) or 0
    if clock_khz > 0 and bus_bits > 0:
        return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9
    name = str(getattr(props, "name", "")).lower()
    return next((gbps for key, gbps in _BANDWIDTH_GBPS if key in name), None)


def _gpu_info(device) -> dict:
    info: dict = {}
    try:
        d = device if getattr(device, "type", None) == "cuda" else torch.device("cuda")
        props = torch.cuda.get_device_properties(d)
        info.update(
            gpu_name=props.name,
            gpu_count=torch.cuda.device_count(),
            gpu_memory_bytes=int(props.total_memory),
            gpu_memory_bandwidth_gbps=memory_bandwidth_gbps(props),
        )
    except Exception:  # noqa: BLE001 - informational only
        pass
    smi = _run_quiet(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    if smi:
        info["gpu_driver_version"] = smi.splitlines()[0].strip()
    # how the GPUs reach each other and the host (PCIe switches, NVLink,
    # NUMA nodes): the matrix nvidia-smi prints
    topo = _run_quiet(["nvidia-smi", "topo", "-m"])
    if topo:
        info["gpu_topology"] = topo
    return info


def h2d_link_gbps(device, nbytes: int = 256 << 20, repeats: int = 3) -> float | None:
    """The host-to-device bandwidth of ``device``'s link, measured: the best
    of ``repeats`` copies of ``nbytes`` from pinned host memory (None on the
    CPU, or when the copy fails)."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    try:
        src = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        dst = torch.empty(nbytes, dtype=torch.uint8, device=device)
        best = None
        for _ in range(repeats):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            dst.copy_(src, non_blocking=True)
            end.record()
            end.synchronize()
            s = start.elapsed_time(end) / 1e3
            best = s if best is None else min(best, s)
        return round(nbytes / best / 1e9, 1)
    except Exception:  # noqa: BLE001 - informational only
        return None


def _forwarding(device) -> dict | None:
    """The device's IO forwarding (glint.io.forwarding): its helper GPUs,
    one link's and all links' measured rates, and whether the io_forwarding
    setting in force uses it; None without peers."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    try:
        from glint.io.forwarding import forwarding_info
        from glint.runtime.settings import Settings

        return forwarding_info(device, Settings.build().io_forwarding)
    except Exception:  # noqa: BLE001 - informational only
        return None


def host_probe_s(iterations: int = 1_000_000, repeats: int = 3) -> float:
    """Seconds one core of this host takes for a fixed piece of pure-Python
    work (``iterations`` multiply-adds), the best of ``repeats``. glint's host
    work per chunk and per launch runs at this speed, the GPU's does not: on
    the virtual GPU hosts it changed twice over within minutes (0.27 s to
    0.60 s at 3 million iterations), and the host-bound queries' times with
    it. A report records it before and after glint's runs.

    >>> 0 < host_probe_s(100_000, 1) < 10
    True
    """
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = 0
        for i in range(iterations):
            s += i * i
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return round(best, 6)


def machine_info(device) -> dict:
    """Host, CPU, RAM, GPU and library versions of this run."""
    info = {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_bytes": _ram_bytes(),
        "gpu_name": None,
        "gpu_count": 0,
        "gpu_memory_bytes": None,
        "gpu_driver_version": None,
        "gpu_memory_bandwidth_gbps": None,
        "gpu_topology": None,
        "cuda_version": torch.version.cuda,
        "torch_version": torch.__version__,
        "pyarrow_version": pyarrow.__version__,
        "duckdb_version": None,
        "glint_version": __version__,
        "glint_commit": None,
    }
    try:
        import duckdb  # optional: glint bench --no-duckdb runs without it

        info["duckdb_version"] = duckdb.__version__
    except ImportError:
        pass
    if torch.cuda.is_available():
        info.update(_gpu_info(device))
    info["h2d_link_gbps"] = h2d_link_gbps(device) if torch.cuda.is_available() else None
    info["io_forwarding"] = _forwarding(device)
    info["glint_commit"] = glint_commit()
    return info


# the glint package's directory, and the project root above it
PACKAGE = Path(__file__).resolve().parents[1]
BUILD_INFO = PACKAGE / "_build_info"


def glint_commit() -> str:
    """The commit of the glint source that runs: git's HEAD (short, with
    "-dirty" when tracked files changed) where the project root is a git
    checkout's top level holding this package; else the commit recorded with
    a copy of the source (``glint/_build_info``, written by
    bench/device/env.sh in the checkout it was copied from); else "unknown".
    Never the commit of another repository that a copy of the source (or an
    installed package) happens to lie in. A recorded commit that the git
    directory does not hold wins over its HEAD: the tree was copied over an
    older checkout."""
    root = PACKAGE.parent
    top = _run_quiet(["git", "-C", str(root), "rev-parse", "--show-toplevel"], 5)
    if top and Path(top).resolve() == root:
        sha = _recorded_sha()
        if sha and _run_quiet(["git", "-C", str(root), "cat-file", "-t", sha], 5) != "commit":
            return recorded_commit() or "unknown"
        tracked = _run_quiet(["git", "-C", str(root), "ls-files", "--", "glint/__init__.py"], 5)
        commit = _run_quiet(["git", "-C", str(root), "rev-parse", "--short=7", "HEAD"], 5) if tracked else None
        if commit:
            dirty = _run_quiet(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"], 5)
            return commit + ("-dirty" if dirty else "")
    recorded = recorded_commit()
    return recorded if recorded else "unknown"


def _build_info() -> dict[str, str]:
    try:
        text = BUILD_INFO.read_text()
    except OSError:
        return {}
    return {k.strip(): v.strip() for k, v in (line.split("=", 1) for line in text.splitlines() if "=" in line)}


def _recorded_sha() -> str | None:
    sha = _build_info().get("commit", "")
    return sha if re.fullmatch("[0-9a-f]{7,40}", sha) else None


def recorded_commit() -> str | None:
    """The commit in ``glint/_build_info`` (lines ``commit=SHA`` and
    ``dirty=0|1``) as glint_commit spells it, or None."""
    sha = _recorded_sha()
    if sha is None:
        return None
    return sha[:7] + ("-dirty" if _build_info().get("dirty", "0") == "1" else "")


def device_bandwidth_gbps(device) -> float | None:
    """Peak memory bandwidth (GB/s) of ``device``; None on the CPU or when unknown."""
    if getattr(device, "type", None) != "cuda":
        return None
    try:
        return memory_bandwidth_gbps(torch.cuda.get_device_properties(device))
    except Exception:  # noqa: BLE001 - informational only
        return None


def device_name(device) -> str:
    """'NVIDIA H100 80GB HBM3' for a CUDA device, 'cpu' for the CPU."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return "cpu"


def slug(text: str) -> str:
    """'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "device"
