"""Registration cost per TPC-H table (footer parses): python3 bench/device/regtime.py SF"""
import os
import sys
import time

import pyarrow.parquet as pq

from glint.workloads import tpch
from glint.io.parquet_source import ParquetSource

d = tpch.ensure_tpch_data(float(sys.argv[1]), progress=False)
ParquetSource(os.path.join(d, "nation.parquet"))
tot_src = tot_schema = 0.0
for name in ["lineitem", "orders", "partsupp", "part", "customer", "supplier", "nation", "region"]:
    p = os.path.join(d, f"{name}.parquet")
    best = {}
    for _ in range(3):
        for k, fn in (("read_metadata", lambda: pq.read_metadata(p)), ("read_schema", lambda: pq.read_schema(p)),
                      ("ParquetSource", lambda: ParquetSource(p))):
            t0 = time.perf_counter()
            fn()
            best[k] = min(best.get(k, 9e9), time.perf_counter() - t0)
    tot_src += best["ParquetSource"]
    tot_schema += best["read_schema"]
    print(f"{name:9s} row groups {pq.read_metadata(p).num_row_groups:5d}: " +
          ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in best.items()), flush=True)
print(f"all 8: ParquetSource {tot_src * 1e3:.0f} ms (a second footer parse, as before, would add {tot_schema * 1e3:.0f} ms)")
