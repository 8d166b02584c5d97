"""Flat substring search variants on o_comment-like data (SF10 comments x4)."""
import sys, time, json, torch, pyarrow as pa, pyarrow.parquet as pq

from glint.workloads import tpch
from glint.kernels.strings import search as S
from glint.kernels.strings.pieces import Pieces
from glint.kernels.backend import blocks

sf = float(sys.argv[1]) if len(sys.argv) > 1 else 10
rep = int(sys.argv[2]) if len(sys.argv) > 2 else 4
d = tpch.ensure_tpch_data(sf if sf != int(sf) else int(sf), progress=False)
col = pq.read_table(f"{d}/orders.parquet", columns=["o_comment"]).column(0).combine_chunks()
arr = pa.concat_arrays([col] * rep).cast(pa.large_string())
offs = torch.frombuffer(arr.buffers()[1], dtype=torch.int64)[: len(arr) + 1].cuda()
data = torch.frombuffer(arr.buffers()[2], dtype=torch.uint8).cuda()
p = Pieces(data, offs[:-1].contiguous(), (offs[1:] - offs[:-1]).contiguous(), contiguous=True)
print(f"rows {len(p):,} bytes {data.numel()/1e9:.2f} GB", flush=True)


def timeit(fn, n=7):
    fn(); torch.cuda.synchronize()
    ts = []
    for _ in range(n):
        s, e = torch.cuda.Event(True), torch.cuda.Event(True)
        s.record(); fn(); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
    return sorted(ts)[n // 2]


n = data.numel()
dat_al = torch.zeros(n + 4, dtype=torch.uint8, device="cuda"); dat_al[4:] = data
dat_un = torch.zeros(n + 1, dtype=torch.uint8, device="cuda"); dat_un[1:] = data
p_al = Pieces(dat_al[4:], p.starts, p.lengths, contiguous=True)
p_un = Pieces(dat_un[1:], p.starts, p.lengths, contiguous=True)
assert p_al.data.data_ptr() % 4 == 0 and p_un.data.data_ptr() % 4 == 1
del data
zero = torch.zeros(len(p), dtype=torch.int64, device="cuda")
r1 = S.find(p_un, b"special", zero)
pos2 = torch.where(r1 >= 0, r1 + 7, -1)
r2 = S.find(p_un, b"requests", pos2)
res = {}
res["bytes special"] = timeit(lambda: S.find(p_un, b"special", zero))
res["bytes requests"] = timeit(lambda: S.find(p_un, b"requests", pos2))
print(res, flush=True)
for block, warps, listed in [(1024, 4, 1), (1024, 4, 0), (2048, 8, 1), (4096, 8, 1), (512, 4, 1), (2048, 4, 1)]:
    S._FLAT_BLOCK, S._FLAT_WARPS, S._FLAT_LISTED_PER_STRING = block, warps, listed
    a = S.find(p_al, b"special", zero)
    b = S.find(p_al, b"requests", pos2)
    c = S.find(p_al, b"s", zero)
    ok = bool((a == r1).all()) and bool((b == r2).all())
    t1 = timeit(lambda: S.find(p_al, b"special", zero))
    t2 = timeit(lambda: S.find(p_al, b"requests", pos2))
    t3 = timeit(lambda: S.find(p_al, b"s", zero), 3)
    res[f"b{block} w{warps} listed{listed}"] = (t1, t2, t3, ok)
    print(block, warps, listed, f"special {t1:.2f} ms requests {t2:.2f} ms 's' {t3:.2f} ms equal {ok}", flush=True)
S._FLAT_BLOCK, S._FLAT_WARPS = 1024, 4
del p_al, p_un, dat_al, dat_un, zero, pos2, r1, r2, a, b, c
torch.cuda.empty_cache()
import glint
con = glint.connect("cuda")
tpch.load_tpch(con, directory=d, progress=False)
q13 = tpch.tpch_query(13)
for listed in (1, 0, 1, 0):
    S._FLAT_LISTED_PER_STRING = listed
    con.sql(q13).arrow()
    ts = []
    for _ in range(5):
        torch.cuda.synchronize(); t0 = time.perf_counter(); r = con.sql(q13).arrow(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t0)
    res[f"Q13 sf{sf} listed{listed}"] = sorted(ts)[2] * 1e3
    print(f"Q13 SF{sf} listed={listed}: {sorted(ts)[2]*1e3:.1f} ms rows {r.num_rows} digest {hash(str(r.to_pydict()))}", flush=True)
json.dump(res, open(sys.argv[3] if len(sys.argv) > 3 else "/dev/null", "w"), indent=1)
