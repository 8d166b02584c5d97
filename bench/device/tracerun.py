import sys, time, json, os
import glint
from glint.runtime import trace
from glint.workloads import tpch
sf = float(sys.argv[1]); qs = [int(q) for q in sys.argv[2].split(",")]
dev = sys.argv[3] if len(sys.argv) > 3 else "cuda"
out = os.environ.get("OUT", "/tmp")
d = tpch.ensure_tpch_data(sf, progress=False)
con = glint.connect(device=dev); tpch.load_tpch(con, directory=d, progress=False)
for q in qs:                      # warm-up: compile every kernel of these queries
    con.sql(tpch.tpch_query(q)).arrow()
con.close()
for q in qs:
    con = glint.connect(device=dev); tpch.load_tpch(con, directory=d, progress=False)
    trace.start()
    t0 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    r.arrow()
    dt = time.perf_counter() - t0
    ev = trace.stop(f"{out}/trace_sf{sys.argv[1]}_q{q}.json")
    io = con.last_io if hasattr(con, "last_io") else None
    print(f"Q{q} cold {dt:.3f}s chunk_rows={con.chunk_rows} events={len(ev)}", flush=True)
    t0 = time.perf_counter(); con.sql(tpch.tpch_query(q)).arrow(); print(f"Q{q} warm {time.perf_counter()-t0:.3f}s", flush=True)
    con.close()
