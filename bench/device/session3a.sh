# usage (on the device): bash bench/device/session3a.sh -- generate TPC-H SF100 while the feature tests
# run on CUDA, then TPC-H Q21 and Q9 at SF 100 under a 16 GB limit (the queries that failed before)
source bench/device/setup.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
t0=$(date +%s)
( python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1; echo "gen rc=$? $(( $(date +%s) - t0 )) s" >> $OUT/gen.log ) &
gen=$!
timeout 240 python3 -m pytest -q -p no:cacheprovider --device cuda tests/test_timestamps.py tests/test_groupsets.py tests/test_functions_text.py tests/test_tables.py tests/test_window.py tests/sql > $OUT/pytest_cuda.log 2>&1
echo "pytest rc=$? at $(( $(date +%s) - t0 )) s"; tail -15 $OUT/pytest_cuda.log | cut -c1-300
wait $gen; cat $OUT/gen.log | tail -3
left=$(( 560 - ($(date +%s) - t0) ))
echo "bench with ${left} s left"
timeout $left bash bench/device/bench.sh tpch_sf100_16GB_q21_q9 tpch --sf 100 --queries 21,9 --device cuda --runs 1 --warmup 0 --gpu-memory-limit 16GB --no-cold --no-duckdb-memory --duckdb-runs 1
