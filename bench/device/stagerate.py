"""The scan's staging alone (raw column chunks: file -> pinned -> device), for
lineitem's Q6 columns: python3 bench/device/stagerate.py SF [ROWGROUPS_PER_CHUNK]

Reports, for 8 and 16 staging threads, GB/s of staged bytes: alone, and with
a thread beside it that keeps the GIL busy with small torch calls (as the
query's main thread does), and with the read gap raised (fewer reads)."""
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import torch

import glint
from glint.workloads import tpch
from glint.io import transfer
from glint.io.file_reads import FileHandles
from glint.io.raw_decode import layout_raw_together
from glint.io.transfer import StackedUpload, pinned_pool

sf = float(sys.argv[1])
per = int(sys.argv[2]) if len(sys.argv) > 2 else 150
cols = ["l_quantity", "l_extendedprice", "l_discount", "l_shipdate"]
dev = torch.device("cuda")
con = glint.connect(device=dev)
tpch.load_tpch(con, directory=tpch.ensure_tpch_data(sf, progress=False), progress=False)
t = con.table("lineitem")
n = len(t.fragments)
t0 = time.perf_counter()
raws = {c: [t.raw_chunk(f, c) for f in range(n)] for c in cols}
print(f"{n} row groups; raw chunks planned in {time.perf_counter() - t0:.2f} s", flush=True)
plans = []
for a in range(0, n, per):
    _, total, segs = layout_raw_together({c: raws[c][a:a + per] for c in cols})
    plans.append((total, segs))
nbytes = sum(p[0] for p in plans)
pool = pinned_pool(dev)
pool.fill_in_background()
stop = threading.Event()


def hog():
    x = torch.zeros(1024, device=dev)
    while not stop.is_set():
        for _ in range(100):
            x.add_(1)
        torch.cuda.synchronize()


def run(threads: int, with_hog: bool, ahead: int = 2, gap: int = 1 << 20) -> str:
    ex = ThreadPoolExecutor(threads)
    stop.clear()
    h = threading.Thread(target=hog) if with_hog else None
    h and h.start()
    files = FileHandles()
    reads = [0]
    orig = transfer._file_run

    def counting(*a):
        reads[0] += 1
        return orig(*a)
    transfer._file_run = counting
    stream = torch.cuda.Stream(dev)
    t0 = time.perf_counter()
    pending = []
    for total, segs in plans:
        up = StackedUpload(pool, None, {}, stream, {"r": (total, segs)}, None, None, files, gap)
        up.start(ex)
        pending.append(up)
        if len(pending) > ahead:
            pending.pop(0).finish()
    for up in pending:
        up.finish()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    transfer._file_run = orig
    stop.set()
    h and h.join()
    files.close()
    ex.shutdown()
    return f"{nbytes / dt / 1e9:.2f} GB/s ({reads[0]} reads, {dt:.2f} s)"


run(8, False)
for gap in (64 << 10, 1 << 20, 4 << 20):
    transfer._SCRATCH = threading.local()
    for threads in (8, 16):
        print(f"gap {gap >> 10} KiB, {threads} threads: alone {run(threads, False, gap=gap)}; "
              f"beside a GIL hog {run(threads, True, gap=gap)}", flush=True)
