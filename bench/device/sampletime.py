"""The planner's sample statistics, per column (read, sample, whole): python3 bench/device/sampletime.py SF"""
import sys, time
import glint
from glint.workloads import tpch
from glint.io import table as T
d = tpch.ensure_tpch_data(float(sys.argv[1]), progress=False)
con = glint.connect(device="cpu"); tpch.load_tpch(con, directory=d, progress=False)
for tn, cols in [("lineitem", ["l_orderkey","l_partkey","l_suppkey","l_shipdate","l_returnflag","l_shipmode"]), ("orders", ["o_orderkey","o_custkey","o_orderdate","o_comment"]), ("part", ["p_partkey","p_name","p_type","p_brand"]), ("customer",["c_custkey","c_mktsegment","c_nationkey"])]:
    t = con.table(tn) if hasattr(con, "table") else con._catalog.table(tn)
    for c in cols:
        frs = t.fragments
        picks = sorted({0, len(frs)//2, len(frs)-1})
        t0 = time.perf_counter(); parts = t._src.read(picks, [c]); t1 = time.perf_counter()
        s = t._sample(c); t2 = time.perf_counter()
        st = t._compute_stats(c); t3 = time.perf_counter()
        print(f"{tn}.{c}: read {1e3*(t1-t0):.1f} ms sample {1e3*(t2-t1):.1f} compute {1e3*(t3-t2):.1f} ndv {s[0]} rows {sum(p.num_rows for p in parts)}")
