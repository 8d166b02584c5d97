"""A thread's py-spy samples (raw, recorded with --idle --native) by what
its innermost frames were doing: python3 bench/device/blockview.py FILE [THREAD]
(THREAD: a thread-name prefix, MainThread unless given). Categories, from
the innermost frame out: waiting for the GIL, for a lock or condition, for
the GPU (a CUDA synchronize or blocking copy), in a system call (reads),
or running (Python, torch's host code, kernel launches)."""
import collections
import re
import sys

want = sys.argv[2] if len(sys.argv) > 2 else "MainThread"
RULES = [
    ("GIL wait", r"take_gil|PyEval_RestoreThread|PyEval_AcquireThread|drop_gil"),
    ("CUDA sync", r"StreamSynchronize|EventSynchronize|DeviceSynchronize|cuMemcpyDtoH|MemcpyDtoH|cudaMemcpy\b|"
                  r"local_scalar_dense|_local_scalar|item\b|nonzero"),
    ("lock/cond wait", r"PyThread_acquire_lock|sem_clockwait|sem_timedwait|sem_wait|pthread_cond|futex|"
                       r"lock_PyThread_acquire|acquire_timed"),
    ("read syscall", r"preadv|pread|__libc_read|readv"),
    ("CUDA launch/alloc", r"cuLaunch|cudaLaunch|LaunchKernel|cuMemAlloc|cudaMalloc|cuMemFree|cudaFree|"
                          r"cuEventRecord|cudaEventRecord|cuMemcpyHtoDAsync|MemcpyAsync"),
]
tot = collections.Counter()
leaf = collections.Counter()
n_all = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    n = int(n)
    frames = stack.split(";")
    if want not in frames[0] or any("time_sleep" in f or "gc_collect" in f for f in frames):
        continue                        # (the profiler's attach wait, the collection between queries)
    n_all += n
    inner = frames[-12:][::-1]          # innermost first
    cat = "running"
    for f in inner:
        hit = next((c for c, rx in RULES if re.search(rx, f)), None)
        if hit:
            cat = hit
            break
    tot[cat] += n
    leaf[" < ".join(re.sub(r" \(.*?\)", "", f)[:40] for f in frames[-4:][::-1])] += n
print(f"{want}: {n_all} samples")
for c, v in tot.most_common():
    print(f"  {v:7d} {100 * v / max(1, n_all):5.1f}%  {c}")
print("innermost frames:")
for f, v in leaf.most_common(30):
    print(f"  {v:7d} {100 * v / max(1, n_all):5.1f}%  {f}")
