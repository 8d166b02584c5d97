import sys, time, glint, traceback
from glint.workloads import tpch
sf = float(sys.argv[1]); lim = sys.argv[2]; qs = [int(x) for x in sys.argv[3].split(",")]
d = tpch.ensure_tpch_data(sf, progress=False)
con = glint.connect(device="cuda", gpu_memory_limit=lim)
tpch.load_tpch(con, directory=d, progress=False)
for q in qs:
    t0 = time.perf_counter()
    try:
        r = con.sql(tpch.tpch_query(q)).arrow()
        print(f"Q{q} ok {r.num_rows} rows {time.perf_counter()-t0:.2f}s", flush=True)
    except Exception:
        traceback.print_exc(); sys.stdout.flush(); break
