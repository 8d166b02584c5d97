# usage (on the device): bash bench/device/session5d.sh -- why Q1 under 16 GB is slow with the upload's wait
source bench/device/setup.sh
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1
timeout -s INT 100 python3 bench/device/qdiag.py 100 16GB 1 old 2>&1 | grep -v "^frame\|Assertion\|Warning\|setter" | tail -5 | cut -c1-900
timeout -s INT 150 python3 bench/device/qdiag.py 100 16GB 1 fix 2>&1 | grep -v "Warning\|setter" | tail -5 | cut -c1-900
for f in $OUT/trace_*.json; do python3 bench/device/traceview.py $f | head -14; done
