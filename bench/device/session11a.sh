# usage (on the device): bash bench/device/session11a.sh -- snappy pages split into 64 KiB blocks found by a
# parallel tag scan (glint.kernels.parquet_raw.split_pages): the raw path's CUDA tests, the kernels alone on
# SF 10 lineitem (split, unsplit, host dictionaries), then 22 cold SF 10 queries: pyarrow against the raw path
# with and without host dictionaries, alternating
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -x -p no:cacheprovider tests/test_parquet_raw.py tests/test_scan_io.py 2>&1 | tail -5 | tee $OUT/tests.log
python3 bench/device/snappybench.py 10 2>&1 | tee $OUT/snappybench.log
run() { cold_sf10 coldpass_split.log "$@"; }
run GLINT_PARQUET_DECODE=; run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0
run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=; run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0
