"""Planning time of the 22 TPC-H queries on fresh connections (register, bind, statistics, rules):
python3 bench/device/plantime.py SF [p]  (p: a cProfile of it)"""
import sys, time, cProfile, pstats, os
import glint
from glint.workloads import tpch
sf = float(sys.argv[1]); prof = len(sys.argv) > 2
d = tpch.ensure_tpch_data(sf, progress=False)
con = glint.connect(device=os.environ.get("DEV", "cuda")); tpch.load_tpch(con, directory=d, progress=False); con.sql(tpch.tpch_query(1)); con.close()
pr = cProfile.Profile()
tot = {}
T = 0
for q in range(1, 23):
    con = glint.connect(device=os.environ.get("DEV", "cuda"))
    if prof: pr.enable()
    t0 = time.perf_counter()
    tpch.load_tpch(con, directory=d, progress=False)
    t1 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    t2 = time.perf_counter()
    if prof: pr.disable()
    T += t2 - t0
    tot["reg"] = tot.get("reg", 0) + t1 - t0
    for k, v in r.timings.items():
        tot[k] = tot.get(k, 0) + v
    print(f"Q{q} reg {t1-t0:.3f} sql {t2-t1:.3f} " + " ".join(f"{k} {v*1e3:.0f}" for k, v in r.timings.items() if v > 0.002))
    con.close()
print(f"total {T:.2f}", {k: round(v, 3) for k, v in tot.items()})
if prof:
    pstats.Stats(pr).sort_stats("cumulative").print_stats(45)
