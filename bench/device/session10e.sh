# usage (on the device): bash bench/device/session10e.sh -- (at dbbe6f5 the registers kernel, reverted after: see streaming-10) snappy decompressed from registers (an input
# window and a ring of the last output bytes; INFLATE_WINDOW): tests on CUDA, the kernels alone
# (snappybench.py), 22 cold SF 10 queries (raw with and without host dictionaries, pyarrow), traces of
# Q1 and Q6, then 5 cold SF 100 queries (raw, pyarrow)
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py tests/test_scan_io.py 2>&1 | grep -E "^E |passed|failed" | head -10
python3 bench/device/snappybench.py 10 2>&1 | tee $OUT/snappybench_sf10.log
run() { cold_sf10 coldpass.log "$@"; }
run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0; run GLINT_PARQUET_DECODE=pyarrow
run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=1; run GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0
mkdir -p $OUT/device; OUT=$OUT/device GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0 python3 bench/device/tracecold.py 10 1,6 > $OUT/trace_device.txt 2>&1
grep "===" $OUT/trace_device.txt
gzip $OUT/*/*.json 2>/dev/null
tpch_data 100
run100() { cold_sf100 coldpass100.log "$@"; }
run100 GLINT_PARQUET_DECODE=device GLINT_HOST_DICTIONARIES=0; run100 GLINT_PARQUET_DECODE=pyarrow
