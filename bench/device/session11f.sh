# usage (on the device): bash bench/device/session11f.sh -- the final TPC-H SF 10 report (default path: warm,
# cold, DuckDB in-memory and on Parquet, checked), then 22 cold SF 10 queries with the raw path and pyarrow on
# the same host
source bench/device/setup.sh
tpch_data 10
timeout -s INT 420 bash bench/device/bench.sh tpch_sf10 tpch --sf 10 --device cuda --runs 3 --warmup 1 --duckdb-runs 1 2>&1 | tail -30
run() { cold_sf10 coldpass_final.log "$@"; }
run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=
