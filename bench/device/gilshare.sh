#!/usr/bin/env bash
# How much of a cold query's wall time the GIL is held, and by which threads:
#
#   bench/device/gilshare.sh OUT_DIR SF QUERY [NAME=VALUE ...]     (e.g. ... "$OUT/gil" 100 1 GLINT_RUN_GAP=65536)
#
# Runs the TPC-H query cold with bench/device/consdiag.py (a fresh process, the bench's warm-up, a fresh
# connection; the environment given set) and attaches py-spy to it for the query's run: `py-spy record
# --gil --nonblocking --threads` at 200 Hz, so every sample is a moment some thread held the GIL.
# Prints the share of the wall the GIL was held, per thread kind; leaves in OUT_DIR gilshare_qQ.raw (the
# collapsed stacks: bench/device/gilview.py summarises them by function) and gilshare_qQ.log.
# py-spy: on the PATH, or its wheel carried in .whl/ (py_spy-*.whl). Needs ptrace rights (root, or
# kernel.yama.ptrace_scope=0). A share near 100% means the threads' Python, not the cores, is the bound.
set -uo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
out=$1; sf=$2; q=$3; shift 3
here=$(dirname "${BASH_SOURCE[0]}")
source "$here/env.sh" || exit 1
mkdir -p "$out"
if ! command -v py-spy >/dev/null; then
    compgen -G "$GLINT_ROOT/.whl/py_spy-*.whl" >/dev/null || { echo "gilshare: no py-spy (carry its wheel in .whl/)"; exit 1; }
    "$PY" -m pip install -q --no-index --no-deps --target /tmp/pyspy "$GLINT_ROOT"/.whl/py_spy-*.whl || exit 1
    export PATH=/tmp/pyspy/bin:$PATH
fi
mark=$(mktemp)
rm -f "$mark"
env "$@" GIL_MARK="$mark" "$PY" "$here/consdiag.py" "$sf" "$q" > "$out/gilshare_q$q.log" 2>&1 &
pid=$!
while [ ! -s "$mark" ] && kill -0 $pid 2>/dev/null; do sleep 0.2; done
[ -s "$mark" ] || { wait $pid; tail -20 "$out/gilshare_q$q.log"; exit 1; }
sleep 1.9       # consdiag sleeps 2 s after writing its pid: the query starts just after py-spy does
py-spy record --pid "$(cat "$mark")" --gil --nonblocking --threads --rate 200 --format raw \
    -o "$out/gilshare_q$q.raw" > "$out/pyspy_q$q.log" 2>&1 || tail -3 "$out/pyspy_q$q.log"
wait $pid
rm -f "$mark"
tail -2 "$out/gilshare_q$q.log"
"$PY" - "$out/gilshare_q$q.raw" "$out/gilshare_q$q.log" <<'PYEOF'
import collections, re, sys

per = collections.Counter()
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip().rpartition(" ")
    per[re.sub(r"\(\d+\)|0x[0-9a-f]+|\d+|_$", "", stack.split(";")[0]).strip()] += int(n)
query = [ln for ln in open(sys.argv[2]) if re.match(r"\s+Q\d+ ", ln)][-1]
wall = float(re.search(r"Q\d+ (\d+\.\d+) s:", query).group(1))
tot = sum(per.values())
print(f"GIL held in {tot} samples of ~{wall * 200:.0f} (wall {wall:.2f} s at 200 Hz): {100 * tot / (wall * 200):.0f}%")
for k, v in per.most_common(8):
    print(f"  {v:6d} {100 * v / (wall * 200):5.1f}% of wall  {k}")
PYEOF
