# usage (on the device): bash bench/device/session6c.sh -- after the allocation fix: CUDA tests,
# pagebench, cold TPC-H SF10 with GLINT_PARQUET_DECODE=device, traced Q1 / Q6
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -x -p no:cacheprovider tests/test_parquet_pages.py 2>&1 | grep -E "^E |passed|failed" | head -12
timeout 150 python3 bench/device/pagebench.py 10 2>&1 | grep -v Warn | tail -9
mkdir -p $OUT/trace
GLINT_PARQUET_DECODE=device OUT=$OUT/trace timeout 60 python3 bench/device/tracerun.py 10 1,6 2>&1 | grep -v Warn | tail -4
python3 bench/device/traceview.py $OUT/trace/trace_sf10_q1.json 2>&1 | head -24
GLINT_PARQUET_DECODE=device timeout 200 bash bench/device/bench.sh tpch_sf10_pages tpch --sf 10 --device cuda --runs 1 --warmup 0 --no-duckdb-memory --duckdb-runs 1 | tail -30
echo "done after $(( $(date +%s) - t0 )) s"
