"""Cold per-query profile (fresh connection, Parquet to result), sampled over all threads:
python3 bench/device/coldprof.py tpch 10 13,10,1 [device] > out.txt"""
import os
import sys
import time

import torch

import glint

sys.path.insert(0, os.path.dirname(__file__))
from sampler import Sampler  # noqa: E402
from glint.workloads import ssb, tpch

suite, sf, names = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(",")
dev = sys.argv[4] if len(sys.argv) > 4 else ("cuda" if torch.cuda.is_available() else "cpu")
if suite == "tpch":
    d = tpch.ensure_tpch_data(sf, progress=False)
    query = lambda n: tpch.tpch_query(int(n))   # noqa: E731
else:
    d = ssb.ensure_ssb_data(sf, progress=False)
    query = ssb.ssb_query
if dev == "cuda":
    torch.zeros(1, device="cuda")
opts = {}
for a in sys.argv[5:]:
    k, v = a.split("=", 1)
    if k == "switch":
        sys.setswitchinterval(float(v))
        continue
    opts[k] = int(v) if v.isdigit() else v
for n in names:
    sm = Sampler()
    t0 = time.perf_counter()
    sm.__enter__()
    con = glint.connect(device=dev, **opts)
    (tpch.load_tpch(con, directory=d, progress=False) if suite == "tpch" else ssb.load_ssb(con, directory=d))
    t1 = time.perf_counter()
    r = con.sql(query(n))
    r.arrow()
    if dev == "cuda":
        torch.cuda.synchronize()
    sm.__exit__()
    t2 = time.perf_counter()
    print(f"=== Q{n}: register {t1 - t0:.3f} s, query {t2 - t1:.3f} s, io {r.io.as_dict()}")
    print(sm.report())
    con.close()
    sys.stdout.flush()
