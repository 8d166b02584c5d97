# usage (on the device): bash bench/device/session10g.sh -- host dictionaries decompressed without holding
# fresh memory (the page read into the thread's buffer, the values copied into reused buffers): 22 cold
# SF 10 queries raw / pyarrow alternating, a trace of Q1 and Q6, then 5 cold SF 100 queries both ways
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py 2>&1 | grep -E "^E |passed|failed" | head -5
run() { cold_sf10 coldpass.log "$@"; }
run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=pyarrow; run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=pyarrow
mkdir -p $OUT/device; OUT=$OUT/device GLINT_PARQUET_DECODE=device python3 bench/device/tracecold.py 10 1,6 > $OUT/trace_device.txt 2>&1
grep "===" $OUT/trace_device.txt
gzip $OUT/*/*.json 2>/dev/null
tpch_data 100
run100() { cold_sf100 coldpass100.log "$@"; }
run100 GLINT_PARQUET_DECODE=device; run100 GLINT_PARQUET_DECODE=pyarrow
