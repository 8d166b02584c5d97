"""Parquet pages decoded on the GPU (glint.io.parquet_pages: host plans,
then one Triton program per page) against pyarrow on the host, for
lineitem's Q1 columns: python3 bench/device/pagebench.py SF

Reports the host part (read, headers, decompression) on 1 and 16 threads,
the GPU part per batch of row groups (pinned copy and kernel), and pyarrow
reading the same columns, in GB/s of decoded values."""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow.parquet as pq
import torch

from glint.workloads import tpch
from glint.io import parquet_pages as pp

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
meta = pq.read_metadata(path)
names = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"]
leaves = [i for i in range(meta.num_columns) if meta.schema.column(i).name in names]
tasks = [(rg, c) for c in leaves for rg in range(meta.num_row_groups)]
out_bytes = sum(meta.row_group(rg).num_rows * (4 if meta.schema.column(c).physical_type == "INT32" else 8)
                for rg, c in tasks)


def plan(task):
    return pp.plan_column_chunk(path, task[0], task[1], meta)


for threads in (1, 16):
    use = tasks if threads > 1 else tasks[:: 8]
    with ThreadPoolExecutor(threads) as ex:
        t0 = time.perf_counter()
        plans = list(ex.map(plan, use))
        dt = time.perf_counter() - t0
    share = len(use) / len(tasks)
    print(f"host plans, {threads} threads: {dt:.3f} s, {out_bytes * share / dt / 1e9:.2f} GB/s of values, "
          f"{sum(p.nbytes for p in plans) / dt / 1e9:.2f} GB/s of page bytes, "
          f"{sum(len(p.streams) for p in plans)} pages", flush=True)

torch.zeros(1, device="cuda")
per = max(1, (1 << 24) // meta.row_group(0).num_rows)        # row groups per batch: 16M rows
ng = meta.num_row_groups
batches = [plans[c * ng:(c + 1) * ng][i:i + per] for c in range(len(leaves)) for i in range(0, ng, per)]
pinned = torch.empty(max(pp.layout_plans(b).total for b in batches), dtype=torch.uint8, pin_memory=True)
for rep in range(2):
    t_layout = t_fill = 0.0
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for b in batches:
        a = time.perf_counter()
        lay = pp.layout_plans(b)
        t_layout += time.perf_counter() - a
        a = time.perf_counter()
        mv = memoryview(pinned.numpy())
        for at, seg in lay.segments:
            mv[at:at + len(seg)] = seg
        t_fill += time.perf_counter() - a
        data = pinned[:lay.total].to("cuda", non_blocking=True)
        v, _, err = pp.decode_plans(b, data=data, layout=lay)
        pp.check_decoded(err)
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"GPU decode (one thread, {len(batches)} batches): {dt:.3f} s, {out_bytes / dt / 1e9:.2f} GB/s; "
          f"layout {t_layout:.3f} s, pinned fill {t_fill:.3f} s", flush=True)

# kernel alone, one batch
b = batches[len(batches) // 2]
lay = pp.layout_plans(b)
data = pp.fill_layout(lay).cuda()
table = lay.table.cuda()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(10):
    v, _, err = pp.decode_plans(b, data=data, layout=lay)
torch.cuda.synchronize()
dt = (time.perf_counter() - t0) / 10
print(f"kernel + launch, one batch of {len(b)} chunks ({v.numel() * v.element_size() / 1e6:.0f} MB out): "
      f"{dt * 1e3:.2f} ms, {v.numel() * v.element_size() / dt / 1e9:.1f} GB/s", flush=True)


def host(rgs):
    t = pq.ParquetFile(path, metadata=meta).read_row_groups(rgs, columns=names, use_threads=False)
    return t.nbytes


runs = [list(range(i, min(meta.num_row_groups, i + 4))) for i in range(0, meta.num_row_groups, 4)]
with ThreadPoolExecutor(16) as ex:
    t0 = time.perf_counter()
    nbytes = sum(ex.map(host, runs))
    dt = time.perf_counter() - t0
print(f"pyarrow, 16 threads: {dt:.3f} s, {nbytes / dt / 1e9:.2f} GB/s", flush=True)
