# usage (on the device): bash bench/device/session11h.sh -- a chunk's raw columns decoded together
# (decode_raw_many), tag-scan segments of 8 KiB: CUDA tests, the decoder's kernels on one chunk, TPC-H SF 1
# against DuckDB with the raw path (no limit, 2 GB), then 5 cold SF 100 queries (raw path with 8 and 16
# staging threads, pyarrow) and 22 cold SF 10 queries (raw path, pyarrow), alternating
source bench/device/setup.sh
tpch_data 1 10 100
timeout 300 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/test_parquet_raw.py tests/test_scan_io.py \
    tests/test_parquet_pages.py tests/test_out_of_core.py tests/test_tpch.py tests/test_string_columns.py 2>&1 | tail -2 | tee $OUT/tests.log
python3 bench/device/splitbench.py 10 2>&1 | grep -E "146 row|_kernel|index|Self CUDA" | tee $OUT/splitbench.log
GLINT_PARQUET_DECODE=device bash bench/device/bench.sh sf1_raw tpch --sf 1 --runs 1 --no-duckdb-parquet 2>&1 | grep -E "│ total|rc=" | head -8
GLINT_PARQUET_DECODE=device bash bench/device/bench.sh sf1_raw_2gb tpch --sf 1 --runs 1 --no-duckdb-parquet --gpu-memory-limit 2GB 2>&1 | grep -E "│ total|rc=" | head -8
run100() { cold_sf100 coldpass100_together.log "$@"; }
run100 GLINT_PARQUET_DECODE=device; run100 GLINT_PARQUET_DECODE=device GLINT_STAGING_THREADS=16; run100 GLINT_PARQUET_DECODE=
run100 GLINT_PARQUET_DECODE=device GLINT_RAW_TOGETHER=0
run() { cold_sf10 coldpass_together.log "$@"; }
run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=; run GLINT_PARQUET_DECODE=device GLINT_STAGING_THREADS=16
