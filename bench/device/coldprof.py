"""Cold per-query profile (fresh connection, Parquet to result) with cProfile:
python3 bench/device/coldprof.py tpch 10 13,10,1 [device] > out.txt"""
import cProfile
import io
import pstats
import sys
import time

import torch

import glint
from glint.bench import ssb, tpch

suite, sf, names = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(",")
dev = sys.argv[4] if len(sys.argv) > 4 else ("cuda" if torch.cuda.is_available() else "cpu")
if suite == "tpch":
    d = tpch.ensure_tpch_data(sf, progress=False)
    query = lambda n: tpch.tpch_query(int(n))   # noqa: E731
else:
    d = ssb.ensure_ssb_data(sf, progress=False)
    query = ssb.ssb_query
if dev == "cuda":
    torch.zeros(1, device="cuda")
for n in names:
    pr = cProfile.Profile()
    t0 = time.perf_counter()
    pr.enable()
    con = glint.connect(device=dev)
    (tpch.load_tpch(con, directory=d, progress=False) if suite == "tpch" else ssb.load_ssb(con, directory=d))
    t1 = time.perf_counter()
    r = con.sql(query(n))
    r.arrow()
    if dev == "cuda":
        torch.cuda.synchronize()
    pr.disable()
    t2 = time.perf_counter()
    print(f"=== Q{n}: register {t1 - t0:.3f} s, query {t2 - t1:.3f} s, io {r.io.as_dict()}")
    s = io.StringIO()
    st = pstats.Stats(pr, stream=s)
    st.sort_stats("cumulative").print_stats(30)
    st.sort_stats("tottime").print_stats(20)
    print(s.getvalue())
    con.close()
    sys.stdout.flush()
