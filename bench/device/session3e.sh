# usage (on the device): bash bench/device/session3e.sh -- issue 10's tests on CUDA again after the window fix,
# 2,000 fuzz queries, then TPC-H SF100 Q21 under 16 GB with thread stacks every 60 s
source bench/device/setup.sh
mkdir -p $OUT/pytest $OUT/fuzz
( python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1 ) &
gen=$!
run_tests() { timeout -s INT 200 python3 -m pytest -q -rf -p no:cacheprovider --device cuda "${@:2}" > $OUT/pytest/$1.log 2>&1; echo "pytest $1 rc=$?"; grep "^FAILED" $OUT/pytest/$1.log | head -20 | cut -c1-200; tail -1 $OUT/pytest/$1.log; }
run_tests groupsets tests/test_groupsets.py &
run_tests window tests/test_window.py &
run_tests sql tests/sql &
for s in 301 302 303 304; do
  ( timeout -s INT 220 python3 -m glint.cli fuzz --seed $s --queries 500 --device cuda --no-reduce --out $OUT/fuzz/failures_$s --log $OUT/fuzz/seed$s.jsonl > $OUT/fuzz/seed$s.log 2>&1; echo "fuzz seed $s rc=$?"; tail -n 1 $OUT/fuzz/seed$s.log | cut -c1-300 ) &
done
wait
tar czf $OUT/pytest_logs.tgz -C $OUT pytest && rm -rf $OUT/pytest $OUT/fuzz/failures_*
echo "Q21 diag at $(date -u +%T)"
timeout -s INT 300 python3 bench/device/oocdiag.py tpch 100 21 16GB 60 100000 > $OUT/q21diag.log 2>&1
echo "rc=$?"; grep -v "^  File\|^    " $OUT/q21diag.log | tail -30 | cut -c1-300
