"""gathers as a join's output makes them: x[idx] per column, index_select, and take_many
(glint.kernels.take, in commit 1d8d533 only: backed out after this measurement).

    python take_micro.py OUT.json"""
import json, sys, torch
from glint.kernels.take import take_many
out = sys.argv[1]
torch.manual_seed(0)
N = 600_000_000 // 4  # a lineitem column's share (150M rows)
def timed(fn):
    fn(); torch.cuda.synchronize(); ts = []
    for _ in range(7):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize(); ts.append(a.elapsed_time(b))
    ts.sort(); return ts[3]
cols = [torch.randint(0, 1 << 40, (N,), device="cuda"), torch.randint(0, 1 << 30, (N,), device="cuda", dtype=torch.int32),
        torch.rand(N, device="cuda", dtype=torch.float64), torch.randint(0, 1 << 40, (N,), device="cuda"), torch.rand(N, device="cuda") > 0.5]
res = {}
M = 50_000_000
for order in ("ascending", "random"):
    idx = torch.randint(0, N, (M,), device="cuda")
    if order == "ascending": idx = idx.sort().values
    for k in (1, 2, 5):
        cs = cols[:k]
        t_index = timed(lambda: [c[idx] for c in cs])
        t_sel = timed(lambda: [torch.index_select(c, 0, idx) for c in cs])
        t_take = timed(lambda: take_many(cs, idx))
        same = all(torch.equal(a, b) for a, b in zip(take_many(cs, idx), [c[idx] for c in cs]))
        byts = M * 8 + sum(M * 2 * c.element_size() for c in cs)
        r = {"x[idx]_ms": t_index, "index_select_ms": t_sel, "take_many_ms": t_take, "equal": same, "take_many_gbps": byts / t_take / 1e6}
        res[f"{order} {k} columns"] = r; print(order, k, r, flush=True)
json.dump(res, open(out, "w"), indent=1)
