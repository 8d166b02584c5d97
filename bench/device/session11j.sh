# usage (on the device): bash bench/device/session11j.sh -- the final TPC-H SF 10 report with the defaults
# (raw GPU decoding on): CUDA tests, the report (warm, cold, DuckDB in-memory and on Parquet, checked), then 22
# cold SF 10 queries with pyarrow (GLINT_PARQUET_DECODE=host) and the default on the same host
source bench/device/setup.sh
tpch_data 10
timeout 200 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ 2>&1 | tail -3 | tee $OUT/tests.log
timeout -s INT 330 bash bench/device/bench.sh tpch_sf10 tpch --sf 10 --device cuda --runs 3 --warmup 1 --duckdb-runs 1 2>&1 | tail -27
run() { cold_sf10 coldpass_final.log "$@"; }
run GLINT_PARQUET_DECODE=host; run GLINT_PARQUET_DECODE=
