"""py-spy raw samples by thread kind, with each glint function's inclusive
share (a sample counts once per function on its stack):
python3 bench/device/cumview.py FILE [TOP]"""
import collections
import re
import sys

top = int(sys.argv[2]) if len(sys.argv) > 2 else 25
per_thread = collections.Counter()
cum = collections.defaultdict(collections.Counter)
selfs = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    n = int(n)
    frames = stack.split(";")
    kind = re.sub(r"\(\d+\)|0x[0-9a-f]+|\d+|_$", "", frames[0]).strip()
    per_thread[kind] += n
    seen = set()
    for f in frames[1:]:
        if "glint/" in f:
            name = re.sub(r" \((.*?):\d+\)", lambda m: " (" + m.group(1).split("glint/")[-1] + ")", f)
            if name not in seen:
                seen.add(name)
                cum[kind][name] += n
    selfs[kind][re.sub(r" \(.*?:(\d+)\)", "", frames[-1])] += n
for kind, total in per_thread.most_common(8):
    print(f"== {kind}: {total} samples")
    for f, v in cum[kind].most_common(top):
        print(f"  {v:6d} {100 * v / total:5.1f}%  {f[:120]}")
    print("  innermost:", ", ".join(f"{f[:50]} {v}" for f, v in selfs[kind].most_common(8)))
