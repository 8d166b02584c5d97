# usage (on the device): bash bench/device/session9b.sh -- TPC-H SF 100 warm and cold (no limit) with the
# read-ahead of every scan, statistics side by side and the pinned pool filled at connect
source bench/device/setup.sh
tpch_data 100
python3 -m pytest -q -p no:cacheprovider -x tests/test_scan_io.py 2>&1 | grep -E "^E |passed|failed" | head -20
left=$(( 585 - ($(date +%s) - t0) ))
timeout -s INT $left bash bench/device/bench.sh tpch_sf100 tpch --sf 100 --device cuda --runs 2 --warmup 1 --no-duckdb-memory --duckdb-runs 1 2>&1 | tail -40
