"""Cold TPC-H queries in this fresh process (after the bench's warm-up), each
on a fresh connection: python3 bench/device/coldknobs.py SF QUERIES [SWITCH_MS]
(SWITCH_MS: Python's GIL switch interval; GLINT_DECODE_THREADS and
GLINT_PARQUET_DECODE are read by glint)."""
import os
import sys
import time

if len(sys.argv) > 3:
    sys.setswitchinterval(float(sys.argv[3]) / 1e3)
import torch

import glint
from glint.engine.connection import resolve_device
from glint.bench import glint_runs
from glint.workloads import tpch

d = tpch.ensure_tpch_data(float(sys.argv[1]), progress=False)
dev = resolve_device("cuda")
torch.zeros(1, device=dev)
glint_runs.warm_up_process(dev)
tot = 0.0
out = []
for q in [int(x) for x in sys.argv[2].split(",")]:
    con = glint.connect(device=dev)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    tpch.load_tpch(con, directory=d, progress=False)
    con.sql(tpch.tpch_query(q)).arrow()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    tot += dt
    out.append(f"Q{q} {dt:.2f}")
    con.close()
    glint_runs.release_device(dev)
print(f"switch={sys.argv[3] if len(sys.argv) > 3 else 'default'} threads={os.environ.get('GLINT_DECODE_THREADS', 'all')} "
      f"pages={os.environ.get('GLINT_PARQUET_DECODE', '-')}: total {tot:.2f} s  " + " ".join(out), flush=True)
