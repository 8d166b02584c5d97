"""LIKE '%special%requests%' and contains('special') over SF 100's o_comment: the per-string
scan against the byte-parallel listed search, CUDA events, median of 7.

    python like_micro.py ORDERS_PARQUET OUT.json"""
import json, sys, time, os
import numpy as np, pyarrow as pa, pyarrow.parquet as pq, torch
from glint.kernels.strings import search, like
from glint.kernels.strings.pieces import from_offsets
path = sys.argv[1]; out = sys.argv[2]
t = pq.read_table(path, columns=["o_comment"])
col = t.column(0).cast(pa.large_string()).combine_chunks()
offs = np.frombuffer(col.buffers()[1], dtype=np.int64)[col.offset: col.offset + len(col) + 1]
data = np.frombuffer(col.buffers()[2], dtype=np.uint8)[: offs[-1]]
p = from_offsets(torch.from_numpy(offs.copy()).cuda(), torch.from_numpy(data.copy()).cuda())
print("strings", len(p), "bytes", p.data.shape[0], flush=True)
pat = like.compile_like("%special%requests%")
def timed(fn):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(7):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); r = fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[3], r
res = {"strings": len(p), "bytes": int(p.data.shape[0])}
zero = torch.zeros(len(p), dtype=torch.int64, device="cuda")
for name, fn in [("like %special%requests%", lambda: like.match(p, pat)), ("find special", lambda: search.find(p, b"special", zero)), ("find requests", lambda: search.find(p, b"requests", zero))]:
    new_ms, new = timed(fn)
    keep = search._ROW_MEAN_BYTES; search._ROW_MEAN_BYTES = 0
    old_ms, old = timed(fn)
    search._ROW_MEAN_BYTES = keep
    same = bool(torch.equal(new, old))
    hits = int((new >= 0).sum()) if new.dtype != torch.bool else int(new.sum())
    res[name] = {"per_string_ms": new_ms, "listed_ms": old_ms, "equal": same, "hits": hits, "per_string_gbps": p.data.shape[0] / new_ms / 1e6}
    print(name, res[name], flush=True)
for blk in (64, 128, 256, 512):
    search._ROW_BLOCK = blk
    ms, _ = timed(lambda: like.match(p, pat))
    res[f"block {blk}"] = ms; print("block", blk, ms, flush=True)
json.dump(res, open(out, "w"), indent=1)
