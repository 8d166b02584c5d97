#!/usr/bin/env bash
# Where a benchmark's warm time goes on the GPU, per query:
#
#   bench/device/profile.sh OUT_DIR tpch|ssb [glint bench flags...]
#
# e.g. bench/device/profile.sh "$OUT/profile-sf10" tpch --sf 10 --device cuda --runs 1
#
# Runs bench/device/run.sh with `--profile --no-cold` added: `glint bench --profile` records, per
# query, the GPU's busy seconds (the union of its kernels and copies), the kernel launches, the
# host synchronisations, the kernels that took the most time and the bytes of the columns touched
# per second of GPU time. Then prints them per query from the JSON (OUT_DIR/profile.txt too).
set -uo pipefail
if [ $# -lt 2 ]; then
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
out=$1; shift
here=$(dirname "${BASH_SOURCE[0]}")
bash "$here/run.sh" "$out" "$@" --profile --no-cold
rc=$?
source "$here/env.sh" || exit 1
"$PY" - "$out" <<'PYEOF' | tee "$out/profile.txt"
import json, pathlib, sys

reports = sorted(p for p in pathlib.Path(sys.argv[1]).glob("*.json") if p.name != "machine.json")
if not reports:
    sys.exit("no JSON report: see run.log")
fields = ("gpu_busy_s", "kernel_launches", "host_syncs", "touched_gbps")
for path in reports:
    report = json.loads(path.read_text())
    print(f"{path.name}: {report.get('title', report.get('benchmark'))} SF {report.get('sf_label')} "
          f"on {report.get('device')}")
    print(f"{'query':6} {'warm s':>8} {'GPU busy s':>10} {'busy %':>6} {'launches':>9} {'syncs':>6} "
          f"{'GB/s':>7}  top kernels")
    for q in report.get("queries", []):
        prof = q.get("profile") or {k: q.get(k) for k in (*fields, "top_kernels")}
        if all(prof.get(k) is None for k in fields):
            print(f"{q.get('label', q.get('query')):6} no profile recorded ({q.get('status')})")
            continue
        warm = q.get("glint_warm_s") or 0.0
        busy = prof.get("gpu_busy_s") or 0.0
        top = prof.get("top_kernels") or []
        names = ", ".join(str(k.get("name", k) if isinstance(k, dict) else k)[:40] for k in top[:3])
        gbps = prof.get("touched_gbps")
        print(f"{q.get('label', q.get('query')):6} {warm:8.3f} {busy:10.3f} {100 * busy / warm if warm else 0:6.0f} "
              f"{prof.get('kernel_launches') or 0:9} {prof.get('host_syncs') or 0:6} "
              f"{gbps if gbps is not None else 0:7.1f}  {names}")
PYEOF
exit $rc
