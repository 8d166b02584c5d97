import sys, torch, glint, inspect
from glint.kernels.group_reduce import group_sums, SumInput
tag = sys.argv[1]
new = "rows" in inspect.signature(group_sums).parameters
dev = "cuda"
for n, k, groups in [(60_000_000, 5, 6), (1 << 27, 6, 4), (1 << 25, 2, 1)]:
    g = torch.Generator(device=dev).manual_seed(1)
    gid = torch.randint(0, groups, (n,), device=dev, generator=g) if groups > 1 else None
    cols = [torch.randint(0, 10_000_000, (n,), device=dev, generator=g) for _ in range(k)]
    rows = torch.rand(n, device=dev, generator=g) > 0.015
    if new:
        inputs = [SumInput(c, None, False) for c in cols]
        call = lambda: group_sums(gid, groups, inputs, rows)
    else:
        inputs = [SumInput(rows, rows, False)] + [SumInput(c, rows, False) for c in cols]
        call = lambda: group_sums(gid, groups, inputs)
    for _ in range(3): r = call()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(10): r = call()
    e.record(); torch.cuda.synchronize()
    ms = s.elapsed_time(e) / 10
    r = r if new else r[1:]
    chk = [int(x[0][:, 0].sum()) * 2**32 + int(x[0][:, 1].sum()) for x in r] + [int(r[0][1].sum())]
    gb = n * ((8 if gid is not None else 0) + 8 * k + 1) / 1e9
    print(f"{tag} n={n} cols={k} groups={groups}: {ms:.3f} ms  {gb/ms:.2f} TB/s  chk={chk}")
