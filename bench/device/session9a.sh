# usage (on the device): bash bench/device/session9a.sh -- read-ahead of every scan at the start of a run
# and planner statistics computed side by side: 22 cold queries at SF 10 before/after (alternating),
# traces of Q10 and Q9, then the TPC-H SF 10 report (cold and warm beside DuckDB)
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_scan_io.py 2>&1 | grep -E "^E |passed|failed" | head -20
all=$(seq -s, 1 22)
run() { env "$@" python3 bench/device/coldpass.py 10 $all 1 2>&1 | tee -a $OUT/coldpass.log | head -1; }
run GLINT_READ_AHEAD=0 NOPREFETCH=1
run GLINT_READ_AHEAD=1
run GLINT_READ_AHEAD=0 NOPREFETCH=1
run GLINT_READ_AHEAD=1
run GLINT_READ_AHEAD=0
python3 bench/device/tracecold.py 10 10,9 > $OUT/trace.txt 2>&1
grep "===" $OUT/trace.txt
gzip $OUT/*.json 2>/dev/null
timeout -s INT 330 bash bench/device/bench.sh tpch_sf10 tpch --sf 10 --device cuda --runs 3 --warmup 1 --duckdb-runs 1 2>&1 | tail -40
