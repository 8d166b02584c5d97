"""Where a cold scan's time goes: python3 bench/device/scanbench.py 10"""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow.parquet as pq
import torch

import glint
from glint.workloads import tpch
from glint.columnar.column import Column

sf = float(sys.argv[1])
d = tpch.ensure_tpch_data(sf, progress=False)
f = str(d / "lineitem.parquet")
cols = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"]
meta = pq.read_metadata(f)
n = meta.num_row_groups
pool = ThreadPoolExecutor(16)
torch.zeros(1, device="cuda")


def timed(label, fn):
    t0 = time.perf_counter()
    r = fn()
    torch.cuda.synchronize()
    print(f"{label}: {time.perf_counter() - t0:.3f} s", flush=True)
    return r


def read(gs):
    return pq.ParquetFile(f, metadata=meta, read_dictionary=["l_returnflag", "l_linestatus"]).read_row_groups(
        gs, columns=cols, use_threads=False)


print(f"{n} row groups, {meta.num_rows} rows")
for k in (1, 4, 16):
    groups = [list(range(i, min(n, i + k))) for i in range(0, n, k)]
    timed(f"pyarrow read, {k} row groups per task", lambda: list(pool.map(read, groups)))
for k in (1, 4, 16):
    groups = [list(range(i, min(n, i + k))) for i in range(0, n, k)]
    timed(f"read + from_arrow, {k} per task",
          lambda: list(pool.map(lambda g: {c: Column.from_arrow(t.column(c)) for t in [read(g)] for c in cols}, groups)))
t = timed("read_table use_threads", lambda: pq.read_table(f, columns=cols, read_dictionary=["l_returnflag", "l_linestatus"]))
host = timed("from_arrow whole table", lambda: {c: Column.from_arrow(t.column(c)) for c in cols})
timed("pageable .to(cuda) whole", lambda: {c: v.to("cuda") for c, v in host.items()})
pinned = {c: torch.empty_like(v.data).pin_memory() for c, v in host.items()}
timed("pinned H2D", lambda: {c: v.to("cuda", non_blocking=True) for c, v in pinned.items()})
for q in (1, 6):
    con = glint.connect(device="cuda")
    tpch.load_tpch(con, directory=d, progress=False)
    r = timed(f"glint cold Q{q}", lambda: con.sql(tpch.tpch_query(q)).arrow())
    timed(f"glint warm Q{q}", lambda: con.sql(tpch.tpch_query(q)).arrow())
    con.close()
for cr in (1 << 20, 1 << 22, 1 << 23):
    con = glint.connect(device="cuda", chunk_rows=cr)
    tpch.load_tpch(con, directory=d, progress=False)
    timed(f"glint cold Q1 chunk_rows={cr}", lambda: con.sql(tpch.tpch_query(1)).arrow())
    timed(f"glint warm Q1 chunk_rows={cr}", lambda: con.sql(tpch.tpch_query(1)).arrow())
    con.close()
