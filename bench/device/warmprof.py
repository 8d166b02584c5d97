"""Warm per-operator profile of benchmark queries on the device:
python3 bench/device/warmprof.py tpch 10 [queries] > out.txt"""
import re
import sys
import time

import torch

import glint
from glint.workloads import ssb, tpch

suite, sf = sys.argv[1], float(sys.argv[2])
opts = {}
for a in sys.argv[4:]:
    k, v = a.split("=", 1)
    opts[k] = int(v) if v.isdigit() else v
con = glint.connect(device="cuda", **opts)
if suite == "tpch":
    d = tpch.ensure_tpch_data(sf, progress=False)
    tpch.load_tpch(con, directory=d, progress=False)
    names = [str(n) for n in range(1, 23)]
    query = lambda n: tpch.tpch_query(int(n))   # noqa: E731
else:
    d = ssb.ensure_ssb_data(sf, progress=False)
    ssb.load_ssb(con, directory=d)
    names = list(ssb.ssb_queries())
    query = ssb.ssb_query
if len(sys.argv) > 3 and sys.argv[3] != "all":
    names = sys.argv[3].split(",")
total = 0.0
for n in names:
    sql = query(n)
    t0 = time.perf_counter()
    con.sql(sql).arrow()
    torch.cuda.synchronize()
    first = time.perf_counter() - t0
    best = 1e9
    for _ in range(2):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        r = con.sql(sql)
        r.arrow()
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t0)
    total += best
    torch.cuda.reset_peak_memory_stats()
    r = con.sql(sql)
    text = r.explain(analyze=True)
    peak = torch.cuda.max_memory_allocated() / 2**30
    print(f"=== Q{n}: first {first:.3f} s, warm {best:.3f} s, peak {peak:.1f} GiB, cached "
          f"{con.cached_bytes() / 2**30:.1f} GiB, io {r.io.as_dict()}")
    print(text.split("Physical plan:")[1])
    sys.stdout.flush()
print(f"TOTAL warm {total:.3f} s")
