"""Where a cold query's main thread spends the time that is not waiting for
the scan: python3 bench/device/coldprof2.py SF QUERIES (after the bench's
warm-up; each query on a fresh connection, profiled with cProfile)."""
import cProfile
import pstats
import sys
import time

import torch

import glint
from glint.engine.connection import resolve_device
from glint.bench import glint_runs
from glint.workloads import tpch

d = tpch.ensure_tpch_data(float(sys.argv[1]), progress=False)
dev = resolve_device("cuda")
torch.zeros(1, device=dev)
glint_runs.warm_up_process(dev)
for q in [int(x) for x in sys.argv[2].split(",")]:
    con = glint.connect(device=dev)
    tpch.load_tpch(con, directory=d, progress=False)
    pr = cProfile.Profile()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    pr.enable()
    con.sql(tpch.tpch_query(q)).arrow()
    torch.cuda.synchronize()
    pr.disable()
    dt = time.perf_counter() - t0
    io = con.last_io if hasattr(con, "last_io") else None
    print(f"=== Q{q}: {dt:.3f} s", flush=True)
    st = pstats.Stats(pr)
    st.sort_stats("tottime").print_stats(12)
    con.close()
    t0 = time.perf_counter()
    con = glint.connect(device=dev)
    tpch.load_tpch(con, directory=d, progress=False)
    con.sql(tpch.tpch_query(q)).arrow()
    torch.cuda.synchronize()
    print(f"=== Q{q} again on a fresh connection: {time.perf_counter() - t0:.3f} s", flush=True)
    con.close()
    glint_runs.release_device(dev)
