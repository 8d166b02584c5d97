# usage (on the device): bash bench/device/session14g.sh -- the final code once more: TPC-H SF 100, 22 queries,
# warm and cold beside DuckDB on Parquet (bench.sh)
source bench/device/setup.sh
tpch_data 100
sync
bash bench/device/bench.sh sf100 tpch --sf 100 --runs 1 --no-duckdb-memory 2>&1 | grep -E "│ total|rc=" | cut -c1-200
