"""Out-of-core diagnosis on the device: each query once under a memory limit,
with its time, spill and eviction counts; stacks of all threads every
``stack_every`` seconds while a query runs (to see where a slow one waits);
EXPLAIN ANALYZE of the queries slower than ``analyze_over`` seconds.
python3 bench/device/oocdiag.py tpch 10 2,3 1600MB [stack_every] [analyze_over]"""

import faulthandler
import sys
import time

import torch

import glint
from glint.workloads import ssb, tpch

suite, sf, qs, limit = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
stack_every = float(sys.argv[5]) if len(sys.argv) > 5 else 30
analyze_over = float(sys.argv[6]) if len(sys.argv) > 6 else 3
con = glint.connect(device="cuda", gpu_memory_limit=limit)
print("chunk_rows", con.chunk_rows, con.memory, flush=True)
if suite == "tpch":
    tpch.load_tpch(con, directory=tpch.ensure_tpch_data(sf, progress=False), progress=False)
    names = [str(n) for n in range(1, 23)]
    query = lambda n: tpch.tpch_query(int(n))  # noqa: E731
else:
    ssb.load_ssb(con, directory=ssb.ensure_ssb_data(sf, progress=False))
    names = list(ssb.ssb_queries())
    query = ssb.ssb_query
if qs != "all":
    names = qs.split(",")
for n in names:
    sp = con.spill
    before = (sp.spilled_bytes, sp.disk_bytes, con.memory.evictions)
    faulthandler.dump_traceback_later(stack_every, repeat=True)
    t0 = time.perf_counter()
    try:
        con.sql(query(n)).arrow()
        torch.cuda.synchronize()
        err = ""
    except Exception as e:  # noqa: BLE001
        err = f" ERROR {type(e).__name__}: {e}"
    dt = time.perf_counter() - t0
    faulthandler.cancel_dump_traceback_later()
    print(
        f"Q{n} {dt:.2f}s spilled {(sp.spilled_bytes - before[0]) >> 20} MiB disk {(sp.disk_bytes - before[1]) >> 20} MiB "
        f"evictions {con.memory.evictions - before[2]} peak {torch.cuda.max_memory_allocated() >> 20} MiB{err}",
        flush=True,
    )
    torch.cuda.reset_peak_memory_stats()
    if dt > analyze_over and not err:
        print(con.sql(query(n)).explain(analyze=True), flush=True)
