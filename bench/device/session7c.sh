# usage (on the device): bash bench/device/session7c.sh -- raw decoding at SF 10 with the cached chunk index:
# tests, cold queries both ways, a trace of Q6
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False); tpch.ensure_tpch_data(0.01, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py 2>&1 | grep -E "^E |passed|failed" | head -30
for mode in "" device; do
  GLINT_PARQUET_DECODE=$mode python3 bench/device/coldknobs.py 10 1,3,6,9,10,18,21 2>&1 | tail -2 | tee -a $OUT/cold.log
done
GLINT_PARQUET_DECODE=device python3 bench/device/tracerun.py 10 6,9 > $OUT/trace.log 2>&1
cat $OUT/trace.log
for q in 6 9; do python3 bench/device/traceview.py $OUT/trace_sf10_q$q.json > $OUT/view$q.txt 2>&1; head -30 $OUT/view$q.txt; done
