# usage (on the device): bash bench/device/session10g.sh -- host dictionaries decompressed without holding
# fresh memory (the page read into the thread's buffer, the values copied into reused buffers): 22 cold
# SF 10 queries raw / pyarrow alternating, a trace of Q1 and Q6, then 5 cold SF 100 queries both ways
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py 2>&1 | grep -E "^E |passed|failed" | head -5
all=$(seq -s, 1 22)
run() { env "$@" python3 bench/device/coldpass.py 10 $all 1 2>&1 | tee -a $OUT/coldpass.log | head -1; }
run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=pyarrow; run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=pyarrow
mkdir -p $OUT/device; OUT=$OUT/device GLINT_PARQUET_DECODE=device python3 bench/device/tracecold.py 10 1,6 > $OUT/trace_device.txt 2>&1
grep "===" $OUT/trace_device.txt
gzip $OUT/*/*.json 2>/dev/null
tpch_data 100
run100() { env "$@" python3 bench/device/coldpass.py 100 1,6,3,9,18 1 2>&1 | tee -a $OUT/coldpass100.log | head -1; }
run100 GLINT_PARQUET_DECODE=device; run100 GLINT_PARQUET_DECODE=pyarrow
