"""The GPU decoder's kernels alone on lineitem's raw column chunks: each
column's chunks (all row groups) decoded in one decode_raw call from bytes
already on the device, as stored and with host-decompressed dictionaries;
checked against pyarrow. python3 bench/device/snappybench.py SF"""
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

from glint.workloads import tpch
from glint.io import parquet_pages as pp
from glint.io import raw_chunks as rc
from glint.io import raw_decode as rd

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
meta = pq.read_metadata(path)
dev = torch.device("cuda")
torch.zeros(1, device=dev)
for name in ["l_extendedprice", "l_partkey", "l_orderkey", "l_quantity", "l_shipdate"]:
    leaf = [meta.schema.column(i).name for i in range(meta.num_columns)].index(name)
    raws = [rc.read_raw(path, e, lazy=True) for e in rc.raw_index(meta, leaf)]
    for mode in ("as stored", "unsplit", "host dictionaries"):
        split = mode != "unsplit"
        t0 = time.perf_counter()
        chunks = raws if mode != "host dictionaries" else [r.with_host_dictionary() for r in raws]
        host_s = time.perf_counter() - t0
        lay = rd.layout_raw(chunks)
        data = pp.fill_layout(lay).to(dev)
        times = []
        for rep in range(3):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            got, err = rd.decode_raw(chunks, dev, data=data, layout=lay, column=name, exact=False, split=split)
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        pp.check_decoded(err, name)
        if mode != "host dictionaries":
            want = pq.read_table(path, columns=[name]).column(0)
            want = np.concatenate([np.asarray(c.view(pa.int32() if c.type.bit_width == 32 else pa.int64()))
                                   if not pa.types.is_decimal(c.type) else
                                   np.frombuffer(c.buffers()[1], dtype=np.int64)[::2][c.offset:c.offset + len(c)]
                                   for c in want.chunks])
            ok = got.cpu().numpy().tobytes() == want.tobytes()
        print(f"{name:16s} {mode:18s} {len(chunks)} chunks, {lay.total / 1e6:7.1f} MB on the device: "
              f"decode {min(times) * 1e3:7.1f} ms (host part {host_s * 1e3:6.0f} ms, 1 thread)"
              + (f", equal to pyarrow: {ok}" if mode != "host dictionaries" else ""), flush=True)
