# usage (on the device): bash bench/device/session7d.sh -- raw decoding at SF 10 with reused read buffers:
# tests, 22 cold queries both ways, then the TPC-H SF 10 report with GLINT_PARQUET_DECODE=device
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False); tpch.ensure_tpch_data(0.01, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -p no:cacheprovider -x tests/test_parquet_raw.py 2>&1 | grep -E "^E |passed|failed" | head -30
all=$(seq -s, 1 22)
for mode in "" device; do
  GLINT_PARQUET_DECODE=$mode python3 bench/device/coldknobs.py 10 $all 2>&1 | tail -1 | tee -a $OUT/cold.log
done
GLINT_PARQUET_DECODE=device timeout -s INT 300 bash bench/device/bench.sh tpch_sf10_raw tpch --sf 10 --device cuda --runs 1 --warmup 0 --no-duckdb-memory --duckdb-runs 1 2>&1 | tail -5
