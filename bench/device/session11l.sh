# usage (on the device): bash bench/device/session11l.sh -- the scans' streams made once per process: CUDA tests,
# TPC-H SF 1 against DuckDB (defaults), 22 cold SF 10 queries (defaults)
source bench/device/setup.sh
tpch_data 1 10
timeout 200 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ 2>&1 | tail -2 | tee $OUT/tests.log
bash bench/device/bench.sh sf1 tpch --sf 1 --runs 1 --no-duckdb-parquet 2>&1 | grep -E "│ total|rc=" | head -4
cold_sf10 coldpass_streams_once.log GLINT_PARQUET_DECODE=
