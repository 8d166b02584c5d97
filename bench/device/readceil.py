"""Host read ceilings on the device host: python3 bench/device/readceil.py SF [GB]

1. pread of lineitem.parquet from the page cache into pageable and pinned
   buffers, 16 MB blocks, on 1..16 threads;
2. host memory copy bandwidth (torch, 1..16 threads);
3. the file mmapped and its pages registered with CUDA (cudaHostRegister,
   read-only): the GPU copies them by DMA, no host copy at all.
GB/s of file bytes; the first read of each run is reported apart (the page
cache may not hold the file yet)."""
import mmap
import os
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from glint.workloads import tpch

BLOCK = 16 << 20
sf = float(sys.argv[1])
limit = float(sys.argv[2]) * 1e9 if len(sys.argv) > 2 else 8e9
path = str(tpch.ensure_tpch_data(sf, progress=False) / "lineitem.parquet")
size = os.path.getsize(path)
nblocks = int(min(size, limit)) // BLOCK
total = nblocks * BLOCK
fd = os.open(path, os.O_RDONLY)
print(f"{path}: {size / 1e9:.1f} GB, reading {total / 1e9:.1f} GB in {nblocks} blocks of 16 MB", flush=True)


def pread_run(threads: int, pinned: bool) -> float:
    if pinned:
        bufs = [torch.empty(BLOCK, dtype=torch.uint8, pin_memory=True).numpy() for _ in range(threads)]
    else:
        bufs = [np.empty(BLOCK, dtype=np.uint8) for _ in range(threads)]
    for b in bufs:
        b[::4096] = 0

    def work(t):
        mv = memoryview(bufs[t])
        for i in range(t, nblocks, threads):
            os.preadv(fd, [mv], i * BLOCK)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(threads) as ex:
        list(ex.map(work, range(threads)))
    return total / (time.perf_counter() - t0) / 1e9


print(f"first read (16 threads, pageable): {pread_run(16, False):.2f} GB/s", flush=True)
for pinned in (False, True)[:1 + torch.cuda.is_available()]:
    print(("pinned  " if pinned else "pageable") + " pread: " + ", ".join(
        f"{n} thr {pread_run(n, pinned):.2f}" for n in (1, 2, 4, 8, 16)) + " GB/s", flush=True)

src = torch.ones(1 << 30, dtype=torch.uint8)
dst = torch.empty(1 << 30, dtype=torch.uint8)
res = []
for n in (1, 2, 4, 8, 16):
    torch.set_num_threads(n)
    dst.copy_(src)
    t0 = time.perf_counter()
    for _ in range(3):
        dst.copy_(src)
    res.append(f"{n} thr {3 * (1 << 30) / (time.perf_counter() - t0) / 1e9:.2f}")
print("host memcpy (torch): " + ", ".join(res) + " GB/s", flush=True)
del src, dst

if not torch.cuda.is_available():
    sys.exit(0)
dev = torch.device("cuda")
torch.zeros(1, device=dev)
cud = torch.cuda.cudart()
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
base = np.frombuffer(m, dtype=np.uint8).ctypes.data
warnings.filterwarnings("ignore")
host = torch.frombuffer(m, dtype=torch.uint8)
for win_mb in (64, 256):
    W = win_mb << 20
    gpu = torch.empty(W, dtype=torch.uint8, device=dev)
    for flags, label in ((8, "read-only"), (9, "read-only|portable")):
        nwin = total // W
        t_reg = t_cp = t_un = 0.0
        ok = True
        for k in range(nwin):
            ptr = base + k * W
            t0 = time.perf_counter()
            err = int(cud.cudaHostRegister(ptr, W, flags))
            t1 = time.perf_counter()
            if err != 0:
                print(f"cudaHostRegister({label}) failed: error {err}", flush=True)
                ok = False
                break
            gpu.copy_(host[k * W:(k + 1) * W], non_blocking=True)
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            cud.cudaHostUnregister(ptr)
            t3 = time.perf_counter()
            t_reg, t_cp, t_un = t_reg + t1 - t0, t_cp + t2 - t1, t_un + t3 - t2
        if ok:
            b = nwin * W / 1e9
            print(f"mmap+register {win_mb} MB windows ({label}): register {b / t_reg:.2f} GB/s, copy {b / t_cp:.2f} GB/s, "
                  f"unregister {b / t_un:.2f} GB/s, all {b / (t_reg + t_cp + t_un):.2f} GB/s", flush=True)

# registration on several threads at once (does the driver serialise it?)
W = 64 << 20
nwin = total // W


def reg_one(k):
    ptr = base + k * W
    t0 = time.perf_counter()
    err = int(cud.cudaHostRegister(ptr, W, 8))
    t1 = time.perf_counter()
    if err == 0:
        cud.cudaHostUnregister(ptr)
    return err, t1 - t0


for n in (4, 8, 16):
    t0 = time.perf_counter()
    with ThreadPoolExecutor(n) as ex:
        out = list(ex.map(reg_one, range(nwin)))
    wall = time.perf_counter() - t0
    print(f"register+unregister on {n} threads: {nwin * W / wall / 1e9:.2f} GB/s (errors {sum(1 for e, _ in out if e)})",
          flush=True)
# pageable copy straight from the mapping (the driver stages it)
gpu = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
t0 = time.perf_counter()
n = min(total, 4 << 30) // (256 << 20)
for k in range(n):
    gpu.copy_(host[k * (256 << 20):(k + 1) * (256 << 20)])
torch.cuda.synchronize()
print(f"unregistered mmap -> GPU copy: {n * (256 << 20) / (time.perf_counter() - t0) / 1e9:.2f} GB/s", flush=True)
