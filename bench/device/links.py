"""The host's copy paths, measured: each GPU's host-to-device link alone
and all of them at once, each GPU's peer copies to GPU 0 over NVLink, and
one GPU's copies forwarded over 2..N links (host -> GPU k -> GPU 0, the
path glint.io.forwarding takes), with the PCIe/NVLink topology as
nvidia-smi prints it. Writes links.json into the directory given:

    python3 bench/device/links.py OUT_DIR [--gib 4] [--piece-mib 16]

The forwarded copies here use torch's own cross-device copy (a push by
the helper GPU), which is as fast as glint's pull for the copies alone;
what differs is the cost to the executing GPU's later allocations
(glint.kernels.peer_copy)."""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import torch


def _sh(cmd: str) -> str:
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--gib", type=float, default=4.0, help="bytes copied per measurement, in GiB (default 4)")
    ap.add_argument("--piece-mib", type=int, default=16, help="bytes per copy call, in MiB (default 16)")
    args = ap.parse_args()
    n = torch.cuda.device_count()
    total = int(args.gib * (1 << 30))
    piece = args.piece_mib << 20
    host = torch.ones(total, dtype=torch.uint8).pin_memory()
    dsts = [torch.empty(total, dtype=torch.uint8, device=f"cuda:{k}") for k in range(n)]
    streams = [torch.cuda.Stream(device=k) for k in range(n)]
    pushes = [torch.cuda.Stream(device=k) for k in range(n)]

    def timed(fn, reps: int = 3) -> float:
        best = float("inf")
        for _ in range(reps):
            for k in range(n):
                torch.cuda.synchronize(k)
            t0 = time.perf_counter()
            fn()
            for k in range(n):
                torch.cuda.synchronize(k)
            best = min(best, time.perf_counter() - t0)
        return round(total / best / 1e9, 1)

    def h2d(k, lo, hi):
        with torch.cuda.stream(streams[k]):
            for s in range(lo, hi, piece):
                dsts[k][s : min(hi, s + piece)].copy_(host[s : min(hi, s + piece)], non_blocking=True)

    def peer(k, lo, hi):
        with torch.cuda.device(k), torch.cuda.stream(pushes[k]):
            for s in range(lo, hi, piece):
                e = min(hi, s + piece)
                dsts[0][s:e].copy_(dsts[k][s:e], non_blocking=True)

    def forwarded(links):
        for i, s in enumerate(range(0, total, piece)):
            e, k = min(total, s + piece), links[i % len(links)]
            with torch.cuda.stream(streams[k]):
                dsts[k][s:e].copy_(host[s:e], non_blocking=True)
                ev = torch.cuda.Event()
                ev.record(streams[k])
            if k:
                pushes[k].wait_event(ev)
                with torch.cuda.device(k), torch.cuda.stream(pushes[k]):
                    dsts[0][s:e].copy_(dsts[k][s:e], non_blocking=True)

    gbps = {f"h2d_gpu{k}": timed(lambda k=k: h2d(k, 0, total)) for k in range(n)}
    if n > 1:
        q = total // n
        gbps["h2d_all_at_once"] = timed(lambda: [h2d(k, k * q, (k + 1) * q) for k in range(n)])
        for k in range(1, n):
            gbps[f"peer_{k}_to_0"] = timed(lambda k=k: peer(k, 0, total))
        for m in range(2, n + 1):
            gbps[f"forwarded_{m}_links"] = timed(lambda m=m: forwarded(list(range(m))))
        dsts[0].zero_()
        forwarded(list(range(n)))
        torch.cuda.synchronize(0)
        gbps["forwarded_bytes_arrived"] = bool((dsts[0] == 1).all().item())
    report = {
        "gpus": [torch.cuda.get_device_name(k) for k in range(n)],
        "peer_access": [[i == j or torch.cuda.can_device_access_peer(i, j) for j in range(n)] for i in range(n)],
        "piece_bytes": piece,
        "bytes": total,
        "gbps": gbps,
        "topology": _sh("nvidia-smi topo -m"),
        "cpus": _sh("lscpu | grep -i -E 'numa|model name|^CPU\\(s\\)'"),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "links.json").write_text(json.dumps(report, indent=1))
    print(json.dumps(gbps, indent=1))


if __name__ == "__main__":
    main()
