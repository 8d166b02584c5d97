# usage (on the device): bash bench/device/session15e.sh -- the final code under --gpu-memory-limit 16GB:
# TPC-H SF 100, 22 queries, checked against DuckDB on Parquet (no cold runs: device time)
source bench/device/setup.sh
tpch_data 100; sync
bash bench/device/bench.sh sf100_16GB tpch --sf 100 --runs 1 --no-duckdb-memory --no-cold --gpu-memory-limit 16GB 2>&1 | grep -E "│ total|rc=|Q[0-9]" | cut -c1-160 | tail -26
