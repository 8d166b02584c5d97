"""One query twice under a memory limit, traced, with the upload's wait for the
compute stream (fix) or without it (old):
python3 bench/device/qdiag.py SF LIMIT QUERY fix|old"""
import dataclasses
import os
import sys
import time

import torch

import glint
from glint.runtime import trace
from glint.workloads import tpch
from glint.io import transfer

sf, lim, q, variant = float(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
if variant == "old":
    real_wait = torch.cuda.Stream.wait_event
    start = transfer.StackedUpload.start

    def old_start(self, executor, on_window=None):
        pool_stream = self.pool.stream
        orig = type(pool_stream).wait_event
        type(pool_stream).wait_event = lambda s, ev: None if s is pool_stream else orig(s, ev)
        try:
            start(self, executor, on_window)
        finally:
            type(pool_stream).wait_event = orig
    transfer.StackedUpload.start = old_start
d = tpch.ensure_tpch_data(sf, progress=False)
con = glint.connect(device="cuda", gpu_memory_limit=lim)
tpch.load_tpch(con, directory=d, progress=False)
out = os.environ.get("OUT", "/tmp")
for run in (1, 2):
    trace.start()
    t0 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    stop = False
    try:
        r.arrow()
    except KeyboardInterrupt:
        print("interrupted")
        stop = True
    except Exception as e:  # noqa: BLE001
        print("error:", str(e)[:300])
    dt = time.perf_counter() - t0
    trace.stop(f"{out}/trace_{variant}_sf{sys.argv[1]}_q{q}_run{run}.json")
    io = {k: (round(v, 2) if isinstance(v, float) else v) for k, v in dataclasses.asdict(r.io).items()} if r.io else None
    print(f"{variant} Q{q} run {run}: {dt:.2f} s chunk_rows={con.chunk_rows} retries={r.retries} io={io}", flush=True)
    if stop:
        break
