import sys
import time

import torch

import glint
from glint.workloads import tpch

sf, limit = float(sys.argv[1]), sys.argv[2]
qs = [int(x) for x in sys.argv[3].split(",")]
con = glint.connect(device="cuda", memory_limit=limit, host_cache_limit="40GB")
tpch.load_tpch(con, directory=tpch.ensure_tpch_data(sf, progress=False), progress=False)
K = ["num_device_alloc", "num_device_free", "num_alloc_retries", "num_sync_all_streams"]


def stats():
    m = torch.cuda.memory_stats()
    return {k: m.get(k, 0) for k in K} | {"reserved_GB": round(m.get("reserved_bytes.all.current", 0) / 2**30, 2)}


def run(q, drop=None):
    if drop is not None:
        con.drop_cache(release=drop)
    torch.cuda.synchronize()
    a = stats()
    t0 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    r.arrow()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    b = stats()
    io = r.io
    return (
        round(dt, 4),
        {k: b[k] - a[k] for k in K},
        b["reserved_GB"],
        (io.h2d_bytes >> 20, io.tier_bytes >> 20, io.cache_hits, io.cache_kept, io.cache_refused, io.cache_evicted_own),
    )


print("chunk_rows", con.settings.chunk_rows, "limit", limit)
for q in qs:
    for _ in range(2):
        con.sql(tpch.tpch_query(q)).arrow()
    for _ in range(2):
        print("warm", q, *run(q), flush=True)
for q in (1, 9):
    for rel in (False, True):
        for _ in range(2):
            print("drop release" if rel else "drop keep", q, *run(q, rel), flush=True)
