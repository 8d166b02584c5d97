"""Cold TPC-H queries in this fresh process (after the bench's warm-up), each
on a fresh connection, with where the scan's time went:

    python3 bench/device/coldpass.py SF QUERIES [PASSES]     (QUERIES: 1,6,3; PASSES default 2)

Pass 1 is what the bench's cold phase measures; pass 2 has every kernel
loaded and the process's allocators warm (the page cache is warm in both).
Per query: the wall, registration, planning, the consumer's wait for chunks,
the decoding / conversion / staging thread-seconds and the bytes copied to
the device. The first line of each pass names the GLINT_* settings in the
environment, so A/B comparisons of a setting are runs of this script with
different environments, interleaved on one machine. DEV=cpu runs it on the
CPU; SWITCH=SECONDS sets the interpreter's GIL switch interval;
NOPREFETCH=1 makes the planner ask for its column statistics one at a time."""

import os
import sys
import time

import torch

import glint

if os.environ.get("SWITCH"):  # the interpreter's GIL switch interval, seconds (an experiment)
    sys.setswitchinterval(float(os.environ["SWITCH"]))
from glint.engine.connection import resolve_device
from glint.bench import glint_runs
from glint.workloads import tpch

if os.environ.get("NOPREFETCH") == "1":  # the planner asks for its statistics one at a time
    import glint.plan.optimizer

    glint.plan.optimizer.prefetch_stats = lambda *a: None
sf, qs = float(sys.argv[1]), [int(x) for x in sys.argv[2].split(",")]
passes = int(sys.argv[3]) if len(sys.argv) > 3 else 2
d = tpch.ensure_tpch_data(sf, progress=False)
dev = resolve_device(os.environ.get("DEV", "cuda"))
dev.type == "cuda" and torch.zeros(1, device=dev)
glint_runs.warm_up_process(dev)
tag = " ".join(
    f"{k}={v}"
    for k, v in os.environ.items()
    if k.startswith(("GLINT_", "MIMALLOC_", "ARROW_", "MALLOC_", "NOPREFETCH", "SWITCH"))
)
for p in range(passes):
    tot, tot_reg, tot_plan, line = 0.0, 0.0, 0.0, []
    for q in qs:
        con = glint.connect(device=dev)
        dev.type == "cuda" and torch.cuda.synchronize()
        t0 = time.perf_counter()
        tpch.load_tpch(con, directory=d, progress=False)
        t1 = time.perf_counter()
        r = con.sql(tpch.tpch_query(q))
        r.arrow()
        dev.type == "cuda" and torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        io = r.io
        tot += dt
        tot_reg += t1 - t0
        plan = sum(v for k, v in r.timings.items() if k != "execute")
        tot_plan += plan
        line.append(
            f"Q{q} {dt:.2f} [reg {t1 - t0:.2f} plan {plan:.2f} wait {io.scan_wait_s:.2f} rd {io.read_s:.1f} cv {io.convert_s:.1f} "
            f"st {io.stage_s:.1f} h2d {io.h2d_bytes / 2**20:.0f}M]"
        )
        con.close()
        glint_runs.release_device(dev)
    print(f"pass {p + 1} {tag}: total {tot:.2f} s (register {tot_reg:.2f} s, plan {tot_plan:.2f} s)", flush=True)
    for x in line:
        print("   ", x, flush=True)
