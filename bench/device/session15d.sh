# usage (on the device, right after session15c.sh: its data): bash bench/device/session15d.sh -- the final code:
# TPC-H SF 100 and SF 10, 22 queries, warm and cold beside DuckDB on Parquet (bench.sh)
source bench/device/setup.sh
tpch_data 100 10
bash bench/device/bench.sh sf100 tpch --sf 100 --runs 1 --no-duckdb-memory 2>&1 | grep -E "│ total|rc=" | cut -c1-200
bash bench/device/bench.sh sf10 tpch --sf 10 --runs 1 --no-duckdb-memory 2>&1 | grep -E "│ total|rc=" | cut -c1-200
