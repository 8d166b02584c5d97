# usage (on the device): bash bench/device/session9c.sh -- the session's final reports: TPC-H SF 100 (no limit)
# and SF 10, warm and cold beside DuckDB, with read-ahead, statistics side by side, the pinned pool filled at
# connect and the default host tier holding pieces only once the device cache evicts
source bench/device/setup.sh
tpch_data 100 10
timeout -s INT 420 bash bench/device/bench.sh tpch_sf100 tpch --sf 100 --device cuda --runs 2 --warmup 1 --no-duckdb-memory --duckdb-runs 1 2>&1 | tail -30
left=$(( 585 - ($(date +%s) - t0) ))
timeout -s INT $left bash bench/device/bench.sh tpch_sf10 tpch --sf 10 --device cuda --runs 3 --warmup 1 --duckdb-runs 1 2>&1 | tail -30
