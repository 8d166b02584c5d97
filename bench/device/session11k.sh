# usage (on the device): bash bench/device/session11k.sh -- TPC-H SF 100, Q1, Q3, Q6, Q9, Q18 with the defaults:
# warm, cold and DuckDB on Parquet on the same host (checked), then the 5 cold with pyarrow and the default
source bench/device/setup.sh
tpch_data 100
timeout -s INT 330 bash bench/device/bench.sh tpch_sf100_5q tpch --sf 100 --queries 1,3,6,9,18 --device cuda --runs 1 --warmup 1 --no-duckdb-memory --duckdb-runs 1 2>&1 | tail -12
run100() { cold_sf100 coldpass100_final.log "$@"; }
run100 GLINT_PARQUET_DECODE=host; run100 GLINT_PARQUET_DECODE=
