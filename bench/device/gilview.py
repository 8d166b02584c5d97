"""Summarise py-spy's raw (collapsed) samples: python3 bench/device/gilview.py FILE
Samples per thread, then per (thread kind, innermost glint / library function)."""

import collections
import re
import sys

per_thread = collections.Counter()
per_func = collections.Counter()
per_self = collections.Counter()
total = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    n = int(n)
    total += n
    frames = stack.split(";")
    thread = frames[0]
    kind = re.sub(r"\(\d+\)|0x[0-9a-f]+|\d+", "", thread).strip()
    per_thread[kind] += n
    glint_frames = [f for f in frames[1:] if "glint/" in f]
    inner = glint_frames[-1] if glint_frames else (frames[-1] if len(frames) > 1 else "?")
    per_func[(kind, re.sub(r" \(.*?:(\d+)\)", r" :\1", inner))] += n
    per_self[re.sub(r" \(.*?:(\d+)\)", "", frames[-1])] += n
print(f"{total} samples holding the GIL")
for k, v in per_thread.most_common(15):
    print(f"  {v:7d}  {k}")
print("innermost glint frame, by thread kind:")
for (k, f), v in per_func.most_common(40):
    print(f"  {v:7d}  {k[:30]:30s} {f[:110]}")
print("innermost frame:")
for f, v in per_self.most_common(25):
    print(f"  {v:7d}  {f[:120]}")
