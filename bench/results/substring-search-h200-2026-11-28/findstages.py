"""Where the flat search's time goes: stripped kernels on SF10 o_comment x4."""
import sys, json, torch, pyarrow as pa, pyarrow.parquet as pq
import triton, triton.language as tl
from glint.workloads import tpch
from glint.kernels.strings import search as S
from glint.kernels.strings.pieces import Pieces

d = tpch.ensure_tpch_data(10, progress=False)
col = pq.read_table(f"{d}/orders.parquet", columns=["o_comment"]).column(0).combine_chunks()
arr = pa.concat_arrays([col] * 4).cast(pa.large_string())
offs = torch.frombuffer(arr.buffers()[1], dtype=torch.int64)[: len(arr) + 1].cuda()
data = torch.frombuffer(arr.buffers()[2], dtype=torch.uint8).cuda()
n = data.numel()
lit = torch.tensor(list(b"special"), dtype=torch.uint8, device="cuda")


@triton.jit
def k_stage(data, n, lit, out, L: tl.constexpr, STAGE: tl.constexpr, BLOCK: tl.constexpr):
    blk = tl.program_id(0)
    p = blk.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = p <= n - L
    cand = inside & (tl.load(data + p, mask=inside, other=0) == tl.load(lit))
    if STAGE >= 2:
        for t in tl.static_range(1, L):
            if STAGE == 2:
                cand = cand & (tl.load(data + p + t, mask=cand, other=0) == tl.load(lit + t))
            else:
                cand = cand & (tl.load(data + p + t, mask=inside, other=0) == tl.load(lit + t))
    tl.store(out + blk, tl.sum(cand.to(tl.int32), axis=0))


@triton.jit
def k_i32(data, n, lit, out, L: tl.constexpr, STAGE: tl.constexpr, BLOCK: tl.constexpr):
    # positions as int32 offsets from the block's base pointer
    blk = tl.program_id(0)
    base = data + blk.to(tl.int64) * BLOCK
    o = tl.arange(0, BLOCK)
    lim = n - blk.to(tl.int64) * BLOCK - L
    inside = o <= lim
    cand = inside & (tl.load(base + o, mask=inside, other=0) == tl.load(lit))
    for t in tl.static_range(1, L):
        cand = cand & (tl.load(base + o + t, mask=inside, other=0) == tl.load(lit + t))
    tl.store(out + blk, tl.sum(cand.to(tl.int32), axis=0))


def timeit(fn, k=7):
    fn(); torch.cuda.synchronize(); ts = []
    for _ in range(k):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[k // 2]

res = {"torch (data == 's').sum()": timeit(lambda: (data == 115).sum())}
ref = None
for kern, name in [(k_stage, "stage"), (k_i32, "i32")]:
    for stage in ([1, 2, 3] if name == "stage" else [3]):
        for block, warps in [(1024, 4), (4096, 4), (4096, 8), (8192, 8)]:
            nb = triton.cdiv(n, block)
            out = torch.zeros(nb, dtype=torch.int32, device="cuda")
            f = lambda: kern[(nb,)](data, n, lit, out, L=7, STAGE=stage, BLOCK=block, num_warps=warps)
            t = timeit(f)
            tot = int(out.sum())
            res[f"{name} stage{stage} b{block} w{warps}"] = (t, tot)
            print(name, stage, block, warps, f"{t:.2f} ms matches {tot}", flush=True)
p = Pieces(data, offs[:-1].contiguous(), (offs[1:] - offs[:-1]).contiguous(), contiguous=True)
zero = torch.zeros(len(p), dtype=torch.int64, device="cuda")
S._FLAT_DENSE = 0
res["find special (words)"] = timeit(lambda: S.find(p, b"special", zero))
print(res, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
