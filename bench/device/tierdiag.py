"""Where a query's time goes when every chunk comes from the host tier (the
device cache emptied before each run, the tier kept): warm times, the GPU's
kernels and copies (torch.profiler) against the wall time, and the scan
threads' spans (glint.runtime.trace) summed by name and thread.
python3 bench/device/tierdiag.py SF QUERIES [gpu_memory_limit] [chunk_rows]
e.g. python3 bench/device/tierdiag.py 10 6,1 16GB 4194304"""

import collections
import re
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import glint
from glint.runtime import trace
from glint.workloads import tpch

sf, qs = float(sys.argv[1]), [int(x) for x in sys.argv[2].split(",")]
limit = sys.argv[3] if len(sys.argv) > 3 else "16GB"
rows = int(sys.argv[4]) if len(sys.argv) > 4 else 1 << 22
con = glint.connect(device="cuda", memory_limit=limit, host_cache_limit="24GB", chunk_rows=rows)
tpch.load_tpch(con, directory=tpch.ensure_tpch_data(sf, progress=False), progress=False)


def run(q):
    con.drop_cache()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    r.arrow()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, r


for q in qs:
    for _ in range(2):  # the tier filled
        con.sql(tpch.tpch_query(q)).arrow()
    times = [round(run(q)[0], 4) for _ in range(3)]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        wall, r = run(q)
    agg = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            a = agg[e.name[:60]]
            a[0] += 1
            a[1] += getattr(e, "device_time_total", 0) or e.cuda_time_total
    gpu = sum(v[1] for v in agg.values()) / 1e6
    io = r.io
    print(
        f"Q{q}: warm from the tier {times} s; profiled {wall:.3f} s, GPU kernels and copies {gpu:.3f} s; "
        f"{io.chunks} chunks, {io.tier_bytes >> 20} MiB from the tier, {io.h2d_bytes >> 20} MiB copied up, "
        f"waited {io.scan_wait_s:.3f} s for chunks"
    )
    for name, (c, us) in sorted(agg.items(), key=lambda x: -x[1][1])[:10]:
        print(f"   {us / 1e3:9.1f} ms {c:6d}  {name}")
    trace.start()
    wall, _ = run(q)
    events = trace.stop()
    spans = collections.defaultdict(float)
    for e in events or []:
        spans[(e["name"], re.sub(r"_\d+$", "", str(e["tid"])))] += e["dur"] / 1e3
    print(f"   traced run {wall:.3f} s; spans (ms, summed over threads):")
    for (name, thread), ms in sorted(spans.items(), key=lambda x: -x[1])[:14]:
        print(f"   {ms:9.1f}  {name:16s} {thread}")
