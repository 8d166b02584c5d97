import sys
import time

import torch

import glint
from glint.workloads import tpch

sf = float(sys.argv[1])
con = glint.connect(device="cuda", memory_limit=sys.argv[2], host_cache_limit="40GB", chunk_rows=int(sys.argv[3]))
tpch.load_tpch(con, directory=tpch.ensure_tpch_data(sf, progress=False), progress=False)
qs = [1, 9, 18, 5, 6, 21]


def run(q, drop):
    if drop:
        con.drop_cache(release=False)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    con.sql(tpch.tpch_query(q)).arrow()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


for q in qs:
    for _ in range(2):
        con.sql(tpch.tpch_query(q)).arrow()
res = {}
for rep in range(2):
    for iv in (0.005, 0.0005, 0.0001):
        sys.setswitchinterval(iv)
        for drop in (True, False):
            for q in qs:
                t = min(run(q, drop) for _ in range(2))
                k = (iv, drop, q)
                res[k] = min(res.get(k, 9e9), t)
sys.setswitchinterval(0.005)
for drop in (True, False):
    print("tier-fed (device cache dropped)" if drop else "warm")
    for iv in (0.005, 0.0005, 0.0001):
        ts = [res[(iv, drop, q)] for q in qs]
        print(
            f"  switch {iv * 1e3:5.2f} ms: "
            + " ".join(f"Q{q} {t:.3f}" for q, t in zip(qs, ts))
            + f"  total {sum(ts):.3f}"
        )
