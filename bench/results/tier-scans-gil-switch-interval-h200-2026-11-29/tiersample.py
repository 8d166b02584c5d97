import collections
import sys
import threading
import time
import traceback

import torch

import glint
from glint.workloads import tpch

sf, qs = float(sys.argv[1]), [int(x) for x in sys.argv[2].split(",")]
rows = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 24
con = glint.connect(device="cuda", memory_limit="16GB", host_cache_limit="40GB", chunk_rows=rows)
tpch.load_tpch(con, directory=tpch.ensure_tpch_data(sf, progress=False), progress=False)


def run(q):
    con.drop_cache()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    r.arrow()
    torch.cuda.synchronize()
    return time.perf_counter() - t0, r


class Sampler:
    def __init__(s):
        s.stop = False
        s.c = collections.Counter()
        s.leaf = collections.Counter()
        s.n = 0

    def loop(s):
        me = threading.get_ident()
        names = {}
        while not s.stop:
            for t in threading.enumerate():
                names[t.ident] = t.name.split("_")[0]
            for tid, fr in sys._current_frames().items():
                if tid == me:
                    continue
                st = traceback.extract_stack(fr)
                glint_frames = [f for f in st if "/glint/" in f.filename]
                if not glint_frames:
                    continue
                th = names.get(tid, "?")
                top = glint_frames[-1]
                leaf = st[-1]
                s.c[(th, f"{top.filename.split('/glint/')[-1]}:{top.name}:{top.lineno}")] += 1
                s.leaf[(th, f"{leaf.filename.split('/')[-1]}:{leaf.name}")] += 1
            s.n += 1
            time.sleep(0.002)


for q in qs:
    for _ in range(2):
        con.sql(tpch.tpch_query(q)).arrow()
    times = [round(run(q)[0], 4) for _ in range(3)]
    s = Sampler()
    th = threading.Thread(target=s.loop)
    th.start()
    wall, r = run(q)
    wall2, _ = run(q)
    s.stop = True
    th.join()
    io = r.io
    print(
        f"Q{q}: {times} s; sampled {wall:.3f}+{wall2:.3f} s, {s.n} samples; {io.chunks} chunks, tier {io.tier_bytes >> 20} MiB, h2d {io.h2d_bytes >> 20} MiB, wait {io.scan_wait_s:.3f}"
    )
    for (thr, site), k in s.c.most_common(28):
        print(f"  {k:5d} {thr:14s} {site}")
    print("  leaves:")
    for (thr, site), k in s.leaf.most_common(16):
        print(f"  {k:5d} {thr:14s} {site}")
