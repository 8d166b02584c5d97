# usage (on the device): bash bench/device/session10b.sh -- the raw path (GLINT_PARQUET_DECODE=device) with
# its bytes read straight into the pinned buffers and its checks deferred to the end of the query:
# the raw decoder's and the scan's tests on CUDA, 22 cold SF 10 queries both ways (alternating), traces of Q1, Q6
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py tests/test_scan_io.py 2>&1 | grep -E "^E |passed|failed" | head -10
run() { cold_sf10 coldpass.log "$@"; }
run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=pyarrow; run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=pyarrow
mkdir -p $OUT/device; OUT=$OUT/device GLINT_PARQUET_DECODE=device python3 bench/device/tracecold.py 10 1,6,3 > $OUT/trace_device.txt 2>&1
grep "===" $OUT/trace_device.txt
gzip $OUT/*/*.json 2>/dev/null
