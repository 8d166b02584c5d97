# usage (on the device): bash bench/device/session6a.sh -- the GPU Parquet decoder's first device run:
# its CUDA tests, pagebench (GPU pages against pyarrow), then cold TPC-H SF10 with pyarrow and with
# GLINT_PARQUET_DECODE=device, and a traced cold Q1 both ways
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
python3 -m pytest -q -x -p no:cacheprovider tests/test_parquet_pages.py "tests/test_scan_io.py::test_stacked_upload_never_overwrites_memory_the_compute_stream_still_reads" 2>&1 | tail -3
timeout 120 python3 bench/device/pagebench.py 10 2>&1 | grep -v Warn | tail -8
timeout 150 bash bench/device/bench.sh tpch_sf10_pyarrow tpch --sf 10 --device cuda --runs 1 --warmup 0 --no-duckdb-memory --duckdb-runs 1 | tail -30
GLINT_PARQUET_DECODE=device timeout 150 bash bench/device/bench.sh tpch_sf10_pages tpch --sf 10 --device cuda --runs 1 --warmup 0 --no-duckdb-memory --duckdb-runs 1 | tail -30
for m in pyarrow device; do
  mkdir -p $OUT/trace_$m
  GLINT_PARQUET_DECODE=$m OUT=$OUT/trace_$m timeout 60 python3 bench/device/tracerun.py 10 1,6 2>&1 | grep -v Warn | tail -4
  python3 bench/device/traceview.py $OUT/trace_$m/trace_sf10_q1.json 2>&1 | head -16
done
echo "done after $(( $(date +%s) - t0 )) s"
