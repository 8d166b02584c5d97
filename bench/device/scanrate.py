"""Scan rate, cold: pyarrow alone against glint's scan (Parquet -> device) on
lineitem's Q1 numeric columns: python3 bench/device/scanrate.py SF"""
import os
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq
import torch

import glint
if os.environ.get("SWITCH"):    # the interpreter's GIL switch interval, seconds (an experiment)
    sys.setswitchinterval(float(os.environ["SWITCH"]))
from glint.engine.connection import resolve_device
from glint.bench import glint_runs
from glint.workloads import tpch

sf = float(sys.argv[1])
d = tpch.ensure_tpch_data(sf, progress=False)
cols = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"]
path = os.path.join(d, "lineitem.parquet")
print("pool", pa.default_memory_pool().backend_name, "cpus", os.cpu_count(), flush=True)
for i in range(3):
    t0 = time.perf_counter()
    t = pq.read_table(path, columns=cols, use_threads=True)
    dt = time.perf_counter() - t0
    print(f"pyarrow read_table {dt:.3f} s {t.nbytes / dt / 1e9:.2f} GB/s of Arrow ({t.nbytes / 1e9:.2f} GB)", flush=True)
    del t
dev = resolve_device("cuda")
torch.zeros(1, device=dev)
glint_runs.warm_up_process(dev)
sql = "SELECT sum(l_quantity), sum(l_extendedprice), sum(l_discount), sum(l_tax), max(l_shipdate) FROM lineitem"
for i in range(3):
    con = glint.connect(device=dev)
    tpch.load_tpch(con, directory=d, progress=False)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = con.sql(sql)
    r.arrow()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    io = r.io
    print(f"glint cold scan {dt:.3f} s {io.scanned_bytes / dt / 1e9:.2f} GB/s of values; wait {io.scan_wait_s:.2f} "
          f"read {io.read_s:.2f} convert {io.convert_s:.2f} stage {io.stage_s:.2f} h2d {io.h2d_bytes / 1e9:.2f} GB "
          f"chunk_rows {con.chunk_rows}", flush=True)
    con.close()
    glint_runs.release_device(dev)
