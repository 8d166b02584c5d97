"""Traces of cold queries as the bench runs them (fresh process, the bench's
warm-up, then each query once on a fresh connection):
python3 bench/device/tracecold.py SF QUERIES  (traces to $OUT, a summary to stdout)
GIL_MARK=FILE: before each query the pid is written to FILE, then 2 s of sleep (a profiler attaches)"""
import os
import subprocess
import sys
import time

import torch

import glint
from glint.runtime import trace
from glint.engine.connection import resolve_device
from glint.bench import glint_runs
from glint.workloads import tpch

sf, qs = float(sys.argv[1]), [int(x) for x in sys.argv[2].split(",")]
out = os.environ.get("OUT", "/tmp")
d = tpch.ensure_tpch_data(sf, progress=False)
dev = resolve_device("cuda")
torch.zeros(1, device=dev)
glint_runs.warm_up_process(dev)
mark = os.environ.get("GIL_MARK")        # a profiler attaches here (gilprof.sh): the pid written, 2 s to attach
for q in qs:
    con = glint.connect(device=dev)
    tpch.load_tpch(con, directory=d, progress=False)
    torch.cuda.synchronize()
    if mark:
        open(mark, "w").write(str(os.getpid()))
        time.sleep(2)
    trace.start()
    t0 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    r.arrow()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    path = f"{out}/trace_cold_sf{sys.argv[1]}_q{q}.json"
    trace.stop(path)
    print(f"=== Q{q} cold {dt:.3f} s timings {({k: round(v, 3) for k, v in r.timings.items()})}", flush=True)
    subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "traceview.py"), path])
    con.close()
    glint_runs.release_device(dev)
