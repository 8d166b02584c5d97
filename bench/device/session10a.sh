# usage (on the device): bash bench/device/session10a.sh -- where the raw path (Parquet bytes as stored,
# decoded on the GPU: GLINT_PARQUET_DECODE=device) stands after session 9's read-ahead: 22 cold SF 10
# queries both ways (alternating), traces of Q1 and Q6 both ways, the raw decoder's tests on CUDA
source bench/device/setup.sh
tpch_data 10
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py 2>&1 | grep -E "^E |passed|failed" | head -10
run() { cold_sf10 coldpass.log "$@"; }
run GLINT_PARQUET_DECODE=pyarrow; run GLINT_PARQUET_DECODE=device; run GLINT_PARQUET_DECODE=pyarrow; run GLINT_PARQUET_DECODE=device
for m in pyarrow device; do
  mkdir -p $OUT/$m; OUT=$OUT/$m GLINT_PARQUET_DECODE=$m python3 bench/device/tracecold.py 10 1,6 > $OUT/trace_$m.txt 2>&1
  grep "===" $OUT/trace_$m.txt
done
gzip $OUT/*/*.json 2>/dev/null
