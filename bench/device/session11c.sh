# usage (on the device): bash bench/device/session11c.sh -- the scan's own CUDA streams (copies and page
# decoding beside the query's kernels) and page tables copied up through pinned memory: CUDA tests, TPC-H SF 1
# checked against DuckDB with the raw path (no limit and 2 GB), then 22 cold SF 10 queries: pyarrow, raw path,
# raw path without the scan's streams, alternating
source bench/device/setup.sh
tpch_data 1 10
timeout 300 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_parquet_raw.py tests/test_scan_io.py \
    tests/test_parquet_pages.py tests/test_out_of_core.py tests/test_tpch.py tests/test_string_columns.py 2>&1 | tail -4 | tee $OUT/tests.log
GLINT_PARQUET_DECODE=device bash bench/device/bench.sh sf1_raw tpch --sf 1 --runs 1 --no-duckdb-parquet 2>&1 | grep -E "total|ok|wrong|error|rc=" | head -8
GLINT_PARQUET_DECODE=device bash bench/device/bench.sh sf1_raw_2gb tpch --sf 1 --runs 1 --no-duckdb-parquet --gpu-memory-limit 2GB 2>&1 | grep -E "total|ok|wrong|error|rc=" | head -8
run() { cold_sf10 coldpass_streams.log "$@"; }
run GLINT_PARQUET_DECODE=; run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=device GLINT_SCAN_STREAMS=0
run GLINT_PARQUET_DECODE=; run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=device GLINT_SCAN_STREAMS=0
