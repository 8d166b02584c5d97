# usage (on the device): bash bench/device/session12h.sh -- all 22 TPC-H queries at SF 10 and at SF 100: glint
# warm and cold (fresh process) beside DuckDB on Parquet, one run each
source bench/device/setup.sh
tpch_data 10 100
bash bench/device/bench.sh sf10 tpch --sf 10 --runs 1 --no-duckdb-memory 2>&1 | grep -E "│ total|rc=" | cut -c1-200
bash bench/device/bench.sh sf100 tpch --sf 100 --runs 1 --no-duckdb-memory 2>&1 | grep -E "│|rc=" | tail -28 | cut -c1-200
