"""Parquet column chunks decoded on the GPU from their bytes as stored
(glint.kernels.parquet_raw: page headers walked, snappy decompressed and
values gathered on the GPU), for lineitem's Q1 numeric columns:
python3 bench/device/rawbench.py SF

Checks every value against pyarrow's, then reports the host's reads (1 and
16 threads) and each GPU step per batch of row groups (2**24 rows)."""
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow.parquet as pq
import torch

from glint.workloads import tpch
from glint.io import parquet_pages as pp
from glint.io import raw_chunks as rc
from glint.io import raw_decode as rd
from glint.io.parquet_source import ParquetSource

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
meta = pq.read_metadata(path)
names = ["l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"]
leaves = [i for i in range(meta.num_columns) if meta.schema.column(i).name in names]
ng = meta.num_row_groups
tasks = [(rg, c) for c in leaves for rg in range(ng)]
out_bytes = sum(meta.row_group(rg).num_rows * (4 if meta.schema.column(c).physical_type == "INT32" else 8)
                for rg, c in tasks)


def read(task):
    return rc.read_raw_chunk(path, task[0], task[1], meta)


for threads in (1, 16):
    use = tasks if threads > 1 else tasks[:: 8]
    with ThreadPoolExecutor(threads) as ex:
        t0 = time.perf_counter()
        raws = list(ex.map(read, use))
        dt = time.perf_counter() - t0
    share = len(use) / len(tasks)
    print(f"host reads, {threads} threads: {dt:.3f} s, {out_bytes * share / dt / 1e9:.2f} GB/s of values, "
          f"{sum(r.nbytes for r in raws) / dt / 1e9:.2f} GB/s of file bytes", flush=True)
print(f"file bytes {sum(r.nbytes for r in raws) / 1e6:.0f} MB, values {out_bytes / 1e6:.0f} MB", flush=True)

dev = torch.device("cuda")
torch.zeros(1, device=dev)
# correctness: every column against pyarrow (decimals as their unscaled integers)
src = ParquetSource(path)
for ci, c in enumerate(leaves):
    name = meta.schema.column(c).name
    got, err = rd.decode_raw(raws[ci * ng:(ci + 1) * ng], dev, column=name)
    pp.check_decoded(err, name)
    want = src.read_run(list(range(ng)), [name]).column(0)
    want = np.concatenate([np.asarray(x.view(__import__("pyarrow").int32()) if x.type.bit_width == 32
                                      else x.view(__import__("pyarrow").int64())) for x in want.chunks])
    ok = got.cpu().numpy().tobytes() == want.tobytes()
    print(f"{name}: {got.numel()} values, equal to pyarrow: {ok}", flush=True)
    assert ok

per = max(1, (1 << 24) // meta.row_group(0).num_rows)
batches = [raws[c * ng:(c + 1) * ng][i:i + per] for c in range(len(leaves)) for i in range(0, ng, per)]
pinned = torch.empty(max(rd.layout_raw(b).total for b in batches), dtype=torch.uint8, pin_memory=True)


def sync():
    torch.cuda.synchronize()
    return time.perf_counter()


for rep in range(2):
    t = dict(fill=0.0, copy=0.0, decode=0.0, total=0.0)
    t0 = sync()
    for b in batches:
        a = time.perf_counter()
        lay = rd.layout_raw(b)
        mv = memoryview(pinned.numpy())
        for at, seg in lay.segments:
            mv[at:at + len(seg)] = seg
        a1 = time.perf_counter()
        data = pinned[:lay.total].to(dev, non_blocking=True)
        a2 = sync()
        values, err = rd.decode_raw(b, dev, data=data, layout=lay, exact=False)
        a3 = sync()
        assert int(err.item()) == 0
        for k, v in (("fill", a1 - a), ("copy", a2 - a1), ("decode", a3 - a2)):
            t[k] += v
    t["total"] = sync() - t0
    print(f"rep {rep}: {len(batches)} batches, " + ", ".join(f"{k} {v:.3f} s" for k, v in t.items()) +
          f"; {out_bytes / t['total'] / 1e9:.1f} GB/s of values", flush=True)

# the inflate kernel alone, per column, all pages of the column at once
for ci, c in enumerate(leaves):
    b = raws[ci * ng:(ci + 1) * ng]
    lay = rd.layout_raw(b)
    data = pp.fill_layout(lay).to(dev)
    got, err = rd.decode_raw(b, dev, data=data, layout=lay)
    t0 = sync()
    got, err = rd.decode_raw(b, dev, data=data, layout=lay)
    t1 = sync()
    print(f"{meta.schema.column(c).name}: decode_raw of all {ng} chunks in one call {t1 - t0:.3f} s", flush=True)
