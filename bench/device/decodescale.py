"""How pyarrow's Parquet decoding scales over threads on this host: lineitem's
Q1 columns (SF given) read in runs of 5 row groups by a pool of T threads,
with each Arrow memory pool; thread-seconds per run against one thread's
(contention: page faults of fresh memory, allocator, memory bandwidth).
python3 bench/device/decodescale.py SF"""
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.parquet as pq

from glint.workloads import tpch

sf = float(sys.argv[1])
d = tpch.ensure_tpch_data(sf, progress=False)
path = os.path.join(d, "lineitem.parquet")
cols = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"]
meta = pq.ParquetFile(path).metadata
n = meta.num_row_groups
runs = [list(range(g, min(n, g + 5))) for g in range(0, n, 5)]
pools = {"default": pa.default_memory_pool(), "system": pa.system_memory_pool()}
for name in ("jemalloc", "mimalloc"):
    try:
        pools[name] = getattr(pa, f"{name}_memory_pool")()
    except Exception:       # noqa: BLE001
        pass
print("default pool", pa.default_memory_pool().backend_name, "cpus", os.cpu_count(), "runs", len(runs), flush=True)


def one(run, pool, keep):
    t0 = time.perf_counter()
    pf = pq.ParquetFile(path, metadata=meta, read_dictionary=["l_returnflag", "l_linestatus"])
    t = pf.read_row_groups(run, columns=cols, use_threads=False)
    dt = time.perf_counter() - t0
    if keep is not None:
        keep.append(t)
    return dt


for pname, pool in pools.items():
    pa.set_memory_pool(pool)
    for threads in (1, 8, 16):
        for keep_all in (False, True):
            keep = [] if keep_all else None
            with ThreadPoolExecutor(threads) as ex:
                t0 = time.perf_counter()
                ts = list(ex.map(lambda r: one(r, pool, keep), runs))
                wall = time.perf_counter() - t0
            print(f"pool {pname:8s} threads {threads:2d} keep {int(keep_all)}: wall {wall:.3f} s, "
                  f"thread-s {sum(ts):.2f} ({sum(ts) / len(runs) * 1e3:.1f} ms a run)", flush=True)
            del keep
