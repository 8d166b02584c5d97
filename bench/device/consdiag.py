"""Where a cold query's consumer time goes (fresh process, the bench's
warm-up, each query once on a fresh connection):
python3 bench/device/consdiag.py SF QUERIES [sync|warm]
Per query: the wall, the process's CPU seconds (user + system, all threads:
near 16 x wall means the host's cores are the bound), the main thread's CPU
seconds, the consumer's wait for chunks, and with ``sync`` the time the
consumer waited for each handed-on chunk's device work (copies and page
decoding) before computing on it (an event.synchronize() put in front of the
consumer's wait_event: the device's latency for a chunk, not hidden by
the consumer's own work); with ``warm`` the same for each query's second
run on its connection (its columns cached on the device).
GIL_MARK=FILE: before each query the pid is written to FILE, then 2 s of
sleep (a profiler attaches: bench/device/gilshare.sh)."""

import os
import resource
import sys
import threading
import time

import torch

import glint
from glint.engine.connection import resolve_device
from glint.bench import glint_runs
from glint.workloads import tpch

sf, qs = float(sys.argv[1]), [int(x) for x in sys.argv[2].split(",")]
mode = sys.argv[3] if len(sys.argv) > 3 else "plain"
sync, warm = mode == "sync", mode == "warm"
mark = os.environ.get("GIL_MARK")
d = tpch.ensure_tpch_data(sf, progress=False)
dev = resolve_device(os.environ.get("DEV", "cuda"))
dev.type == "cuda" and torch.zeros(1, device=dev)
glint_runs.warm_up_process(dev)
main = threading.main_thread()
waited = [0.0, 0]
if sync:
    orig = torch.cuda.Stream.wait_event

    def wait_event(self, event):
        if threading.current_thread() is main:
            t = time.perf_counter()
            event.synchronize()
            waited[0] += time.perf_counter() - t
            waited[1] += 1
        return orig(self, event)

    torch.cuda.Stream.wait_event = wait_event
tag = " ".join(f"{k}={v}" for k, v in os.environ.items() if k.startswith("GLINT_"))
tot = 0.0
lines = []
for q in qs:
    con = glint.connect(device=dev)
    tpch.load_tpch(con, directory=d, progress=False)
    dev.type == "cuda" and torch.cuda.synchronize()
    if warm:
        con.sql(tpch.tpch_query(q)).arrow()
        dev.type == "cuda" and torch.cuda.synchronize()
    if mark:
        open(mark, "w").write(str(os.getpid()))
        time.sleep(2)
    waited[:] = [0.0, 0]
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    m0 = time.thread_time()
    t0 = time.perf_counter()
    r = con.sql(tpch.tpch_query(q))
    r.arrow()
    dev.type == "cuda" and torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    m1 = time.thread_time()
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    io = r.io
    plan = sum(v for k, v in r.timings.items() if k != "execute")
    tot += dt
    lines.append(
        f"Q{q} {dt:.2f} s: plan {plan:.2f}, process cpu {cpu:.1f} s ({cpu / dt:.1f} cores; "
        f"user {r1.ru_utime - r0.ru_utime:.1f} sys {r1.ru_stime - r0.ru_stime:.1f}), main cpu {m1 - m0:.2f}, "
        f"scan wait {io.scan_wait_s:.2f}, device wait {waited[0]:.2f} ({waited[1]}x), "
        f"ctx switches vol {r1.ru_nvcsw - r0.ru_nvcsw} invol {r1.ru_nivcsw - r0.ru_nivcsw}"
    )
    con.close()
    glint_runs.release_device(dev)
print(f"{mode} {tag}: total {tot:.2f} s", flush=True)
for x in lines:
    print("   ", x, flush=True)
