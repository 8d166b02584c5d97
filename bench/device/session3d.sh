# usage (on the device): bash bench/device/session3d.sh -- issue 10's features on CUDA: their tests
# (4 pytest processes) and 2,000 fuzz queries (4 seeds x 500) side by side on the one GPU
source bench/device/setup.sh
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
git log --oneline -1 2>/dev/null
mkdir -p $OUT/pytest $OUT/fuzz
run_tests() { timeout -s INT 300 python3 -m pytest -q -rf -p no:cacheprovider --device cuda "${@:2}" > $OUT/pytest/$1.log 2>&1; echo "pytest $1 rc=$?"; tail -4 $OUT/pytest/$1.log | cut -c1-300; }
run_tests timestamps tests/test_timestamps.py &
run_tests groupsets_window tests/test_groupsets.py tests/test_window.py &
run_tests text_tables tests/test_functions_text.py tests/test_tables.py &
run_tests sql tests/sql &
for s in 301 302 303 304; do
  ( timeout -s INT 300 python3 -m glint.cli fuzz --seed $s --queries 500 --device cuda --out $OUT/fuzz/failures_$s --log $OUT/fuzz/seed$s.jsonl > $OUT/fuzz/seed$s.log 2>&1; echo "fuzz seed $s rc=$?"; tail -3 $OUT/fuzz/seed$s.log | cut -c1-300 ) &
done
wait
grep -h "FAILED\|Error" $OUT/pytest/*.log | head -40 | cut -c1-400
