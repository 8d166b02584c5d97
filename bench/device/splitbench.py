"""Where the GPU decoder's time goes on one scan chunk's worth of lineitem's
row groups (146 at SF 10: 2**24 rows) and on all of them: the page walk, the
split (tag scan, sync, block search), the block and whole-page inflates and
the page kernel, each timed alone (synchronized).
python3 bench/device/splitbench.py SF"""
import sys
import time

import pyarrow.parquet as pq
import torch

from glint.workloads import tpch
from glint.kernels import parquet_raw as K
from glint.io import parquet_pages as pp
from glint.io import raw_chunks as rc
from glint.io import raw_decode as rd

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
meta = pq.read_metadata(path)
dev = torch.device("cuda")
torch.zeros(1, device=dev)
split0, inflate0 = K.split_pages, K.inflate_pages_triton
times = {}


def timed(name, fn):
    def run(*a, **k):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        r = fn(*a, **k)
        torch.cuda.synchronize()
        times[name] = times.get(name, 0) + time.perf_counter() - t0
        return r
    return run


K.split_pages = timed("split", split0)
K.inflate_pages_triton = timed("inflate (with split)", inflate0)
for name in ["l_extendedprice", "l_partkey", "l_orderkey", "l_shipdate"]:
    leaf = [meta.schema.column(i).name for i in range(meta.num_columns)].index(name)
    raws = [rc.read_raw(path, e, lazy=True) for e in rc.raw_index(meta, leaf)]
    for label, chunks in (("146 row groups", raws[:146]), (f"{len(raws)} row groups", raws)):
        lay = rd.layout_raw(chunks)
        data = pp.fill_layout(lay).to(dev)
        for rep in range(3):
            times.clear()
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            got, err = rd.decode_raw(chunks, dev, data=data, layout=lay, column=name, exact=False)
            torch.cuda.synchronize()
            total = time.perf_counter() - t0
        pp.check_decoded(err, name)
        print(f"{name:16s} {label:16s} {lay.total / 1e6:7.1f} MB: total {total * 1e3:6.1f} ms, "
              + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in times.items()), flush=True)

# the kernels of one scan chunk's decode of l_extendedprice (torch.profiler)
from torch.profiler import ProfilerActivity, profile
leaf = [meta.schema.column(i).name for i in range(meta.num_columns)].index("l_extendedprice")
chunks = [rc.read_raw(path, e, lazy=True) for e in rc.raw_index(meta, leaf)][:146]
lay = rd.layout_raw(chunks)
data = pp.fill_layout(lay).to(dev)
rd.decode_raw(chunks, dev, data=data, layout=lay, exact=False)
torch.cuda.synchronize()
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    rd.decode_raw(chunks, dev, data=data, layout=lay, exact=False)
    torch.cuda.synchronize()
print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=25, max_name_column_width=40))
