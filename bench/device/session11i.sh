# usage (on the device): bash bench/device/session11i.sh -- consecutive chunks decoded on the scan's streams in
# turn (copies on a stream of their own): CUDA tests, TPC-H SF 1 against DuckDB with the raw path under 2 GB,
# then 5 cold SF 100 queries and 22 cold SF 10 queries, raw path against pyarrow, alternating
source bench/device/setup.sh
tpch_data 1 10 100
timeout 300 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_parquet_raw.py tests/test_scan_io.py \
    tests/test_parquet_pages.py tests/test_out_of_core.py tests/test_tpch.py tests/test_string_columns.py 2>&1 | tail -2 | tee $OUT/tests.log
GLINT_PARQUET_DECODE=device bash bench/device/bench.sh sf1_raw_2gb tpch --sf 1 --runs 1 --no-duckdb-parquet --gpu-memory-limit 2GB 2>&1 | grep -E "│ total|rc=" | head -8
run100() { cold_sf100 coldpass100_turns.log "$@"; }
run100 GLINT_PARQUET_DECODE=device; run100 GLINT_PARQUET_DECODE=; run100 GLINT_PARQUET_DECODE=device; run100 GLINT_PARQUET_DECODE=
run() { cold_sf10 coldpass_turns.log "$@"; }
run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=; run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=
