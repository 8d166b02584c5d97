# usage (on the device): bash bench/device/session10d.sh -- (at 696e625, reverted after: see streaming-10) snappy pages split at 64 KiB blocks on the GPU
# (split_pages_triton): tests on CUDA, 22 cold SF 10 queries (raw with and without host dictionaries,
# pyarrow), traces of Q1 and Q6, then 5 cold SF 100 queries (raw, pyarrow)
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py tests/test_scan_io.py 2>&1 | grep -E "^E |passed|failed" | head -10
run() { cold_sf10 coldpass.log "$@"; }
run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0; run GLINT_PARQUET_DECODE=pyarrow
run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=1; run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0
mkdir -p $OUT/device; OUT=$OUT/device GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0 python3 bench/device/tracecold.py 10 1,6 > $OUT/trace_device.txt 2>&1
grep "===" $OUT/trace_device.txt
gzip $OUT/*/*.json 2>/dev/null
tpch_data 100
run100() { cold_sf100 coldpass100.log "$@"; }
run100 GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0; run100 GLINT_PARQUET_DECODE=pyarrow
