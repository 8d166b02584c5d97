"""Parquet pages decoded on the GPU (glint.storage.parquet_pages with the
Triton run decoder) against pyarrow on the host, for lineitem's Q1 columns:
python3 bench/device/pagebench.py SF   (on the device; not yet run)

Reports per setting the seconds and GB/s of decoded values, on 1 and 16
threads (the host part, page headers and decompression, holds the GIL
between pyarrow's codec calls)."""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow.parquet as pq
import torch

from glint.bench import tpch
from glint.storage.parquet_pages import decode_column_chunk

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
meta = pq.read_metadata(path)
names = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"]
leaves = [i for i in range(meta.num_columns) if meta.schema.column(i).name in names]
tasks = [(rg, c) for rg in range(meta.num_row_groups) for c in leaves]
torch.zeros(1, device="cuda")
decode_column_chunk(path, 0, leaves[0], device="cuda", metadata=meta)       # compile


def gpu(task):
    v, _ = decode_column_chunk(path, task[0], task[1], device="cuda", metadata=meta)
    return v.numel() * v.element_size()


def host(rgs):
    t = pq.ParquetFile(path, metadata=meta).read_row_groups(rgs, columns=names, use_threads=False)
    return t.nbytes


for threads in (1, 16):
    with ThreadPoolExecutor(threads) as ex:
        use = tasks if threads > 1 else tasks[: len(tasks) // 8]
        t0 = time.perf_counter()
        nbytes = sum(ex.map(gpu, use))
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        print(f"GPU pages, {threads} threads: {dt:.3f} s, {nbytes / dt / 1e9:.2f} GB/s", flush=True)
        runs = [list(range(i, min(meta.num_row_groups, i + 4))) for i in range(0, meta.num_row_groups, 4)]
        use = runs if threads > 1 else runs[: len(runs) // 8]
        t0 = time.perf_counter()
        nbytes = sum(ex.map(host, use))
        dt = time.perf_counter() - t0
        print(f"pyarrow, {threads} threads: {dt:.3f} s, {nbytes / dt / 1e9:.2f} GB/s", flush=True)
