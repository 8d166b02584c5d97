"""warm TPC-H queries under torch.profiler: every kernel name with its launches and GPU time

    python kernels_per_query.py SF OUT.json [1,2,...]"""
import json, sys, torch, glint
from glint.workloads import tpch
from torch.profiler import profile, ProfilerActivity
sf = int(sys.argv[1]); out = sys.argv[2]; qs = [int(q) for q in sys.argv[3].split(",")] if len(sys.argv) > 3 else range(1, 23)
d = tpch.ensure_tpch_data(sf, progress=False)
con = glint.connect(device="cuda")
tpch.load_tpch(con, directory=d, progress=False)
res = {}
for q in qs:
    sql = tpch.tpch_query(q)
    for _ in range(2): con.sql(sql).arrow(); torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        con.sql(sql).arrow(); torch.cuda.synchronize()
    ks = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = ks.setdefault(e.name[:110], [0, 0.0]); k[0] += 1; k[1] += e.device_time_total / 1e3
    top = sorted(ks.items(), key=lambda kv: -kv[1][1])[:25]
    res[f"Q{q:02d}"] = [(n, c, round(t, 3)) for n, (c, t) in top]
    print(f"Q{q:02d}", round(sum(v[1] for v in ks.values()), 1), "ms", flush=True)
json.dump(res, open(out, "w"), indent=1)
