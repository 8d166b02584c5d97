"""Summarise a glint trace (glint.runtime.trace): busy time per span name and thread
kind, and the main thread's timeline. python3 bench/device/traceview.py FILE"""

import collections
import json
import re
import sys

ev = json.load(open(sys.argv[1]))["traceEvents"]
end = max(e["ts"] + e["dur"] for e in ev) / 1e3
print(f"{sys.argv[1]}: {len(ev)} spans over {end:.1f} ms")
tot = collections.defaultdict(float)
for e in ev:
    kind = re.sub(r"_\d+$", "", e["tid"])
    tot[(e["name"], kind)] += e["dur"] / 1e3
for (n, k), v in sorted(tot.items(), key=lambda x: -x[1]):
    print(f"  {n:12s} {k:20s} {v:9.1f} ms")
print("timeline (ms): main thread, uploads, copies done")
for e in sorted(ev, key=lambda e: e["ts"]):
    if (e["tid"] == "MainThread" and (e["name"] in ("plan", "scan wait") or e["dur"] > 20e3)) or e["name"] in (
        "upload",
        "copies done",
    ):
        a = e.get("args", {})
        print(
            f"  {e['ts'] / 1e3:8.1f} +{e['dur'] / 1e3:7.1f}  {e['name']:12s} {a.get('table', '')} {a.get('chunk', '')}"
            f" {a.get('bytes', '') and round(a['bytes'] / 1e6)}"
        )
