# usage (on the device): bash bench/device/session7a.sh -- raw (GPU) Parquet decoding at SF 10: kernels, then cold queries
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
python3 bench/device/rawbench.py 10 2>&1 | tee $OUT/rawbench.log
python3 -m pytest -q -p no:cacheprovider tests/test_parquet_raw.py 2>&1 | tail -5
for mode in "" device; do
  GLINT_PARQUET_DECODE=$mode python3 bench/device/coldknobs.py 10 1,3,6,9,10,18,21 2>&1 | tail -2 | tee -a $OUT/cold.log
done
