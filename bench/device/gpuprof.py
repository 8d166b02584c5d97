"""Where a cold query's GPU time goes: python3 bench/device/gpuprof.py SF QUERY [cpu]
(fresh process, the bench's warm-up, the query once on a fresh connection
under torch.profiler with CUDA activity): kernel time per kernel name, the
GPU's busy time (the union of its kernels and copies) against the wall.
With ``cpu``: also the host's torch ops and CUDA runtime calls (all
threads), by their own time."""
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import glint
from glint.engine.connection import resolve_device
from glint.bench import glint_runs
from glint.workloads import tpch

sf, q = float(sys.argv[1]), int(sys.argv[2])
d = tpch.ensure_tpch_data(sf, progress=False)
dev = resolve_device("cuda")
torch.zeros(1, device=dev)
glint_runs.warm_up_process(dev)
con = glint.connect(device=dev)
tpch.load_tpch(con, directory=d, progress=False)
torch.cuda.synchronize()
cpu = len(sys.argv) > 3 and sys.argv[3] == "cpu"
with profile(activities=[ProfilerActivity.CUDA] + ([ProfilerActivity.CPU] if cpu else [])) as prof:
    t0 = time.perf_counter()
    con.sql(tpch.tpch_query(q)).arrow()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
spans = []
for e in prof.events():
    if e.device_type == torch.autograd.DeviceType.CUDA:
        spans.append((e.time_range.start, e.time_range.end, e.name))
spans.sort()
busy, cur_a, cur_b = 0, None, None
for a, b, _ in spans:
    if cur_b is None or a > cur_b:
        if cur_b is not None:
            busy += cur_b - cur_a
        cur_a, cur_b = a, b
    else:
        cur_b = max(cur_b, b)
if cur_b is not None:
    busy += cur_b - cur_a
first, last = (spans[0][0], max(b for _, b, _ in spans)) if spans else (0, 0)
print(f"Q{q} SF {sf:g}: wall {wall:.2f} s; GPU busy {busy / 1e6:.2f} s (union of kernels and copies), "
      f"first to last GPU event {(last - first) / 1e6:.2f} s")
tot: dict = {}
for a, b, n in spans:
    k = n[:60]
    c, t = tot.get(k, (0, 0))
    tot[k] = (c + 1, t + (b - a))
for k, (c, t) in sorted(tot.items(), key=lambda x: -x[1][1])[:25]:
    print(f"  {t / 1e3:9.1f} ms {c:7d}x  {k}")
if cpu:
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=35, max_name_column_width=60))
