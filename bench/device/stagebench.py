"""Where the scan's host side saturates: python3 bench/device/stagebench.py SF
pyarrow decoding, numpy copies into pinned memory and glint's stacked upload,
each on 1..16 threads (GB/s of the bytes glint keeps)."""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow.parquet as pq
import torch

from glint.columnar import types as T
from glint.workloads import tpch
from glint.columnar.column import Column
from glint.io.parquet_source import ParquetSource
from glint.io.transfer import Uploader, pinned_pool

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
dev = torch.device("cuda")
torch.zeros(1, device=dev)
pool = pinned_pool(dev)
rng = np.random.default_rng(0)
ROWS, PARTS, COLS, PIECES = 116_000, 9, 5, 96
parts = [rng.integers(0, 1 << 40, ROWS, dtype=np.int64) for _ in range(PARTS * COLS)]
nbytes = PIECES * COLS * PARTS * ROWS * 8


def stacked(_):
    cols = {f"c{j}": [Column(T.BIGINT, torch.from_numpy(parts[j * PARTS + i])) for i in range(PARTS)]
            for j in range(COLS)}
    with torch.cuda.device(dev):
        return Uploader(pool, None).stacked(cols)


def copies(_):
    buf = pool.acquire()
    try:
        b = buf.numpy().view(np.int64)
        for a in parts:
            b[:a.shape[0]] = a
    finally:
        pool.put_back(buf)


def timed(fn, threads, items):
    items = list(range(items)) if isinstance(items, int) else items
    ex = ThreadPoolExecutor(threads)
    list(ex.map(fn, items[:8]))
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    list(ex.map(fn, items))
    torch.cuda.synchronize()
    ex.shutdown()
    return time.perf_counter() - t0


print(f"{'threads':>7} {'copy GB/s':>10} {'stacked GB/s':>13} {'pyarrow Q1 GB/s':>16} {'read_run Q1 GB/s':>17}")
d = tpch.ensure_tpch_data(sf, progress=False)
f = str(d / "lineitem.parquet")
meta = pq.read_metadata(f)
cols = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_returnflag", "l_linestatus", "l_shipdate"]
groups = [list(range(i, min(meta.num_row_groups, i + 4))) for i in range(0, meta.num_row_groups, 4)]
src = ParquetSource(f)
glint_bytes = meta.num_rows * (4 * 8 + 2 * 4 + 4)


def pa_read(g):
    return pq.ParquetFile(f, metadata=meta, read_dictionary=["l_returnflag", "l_linestatus"]).read_row_groups(
        g, columns=cols, use_threads=False)


def raw_read(g):
    return src.read_run(g, cols)


for threads in (1, 2, 4, 8, 16):
    c = timed(copies, threads, 64)
    s = timed(stacked, threads, PIECES)
    r = timed(pa_read, threads, groups)
    w = timed(raw_read, threads, groups)
    print(f"{threads:7d} {64 * sum(a.nbytes for a in parts) / c / 1e9:10.1f} {nbytes / s / 1e9:13.1f} "
          f"{glint_bytes / r / 1e9:16.1f} {glint_bytes / w / 1e9:17.1f}", flush=True)
