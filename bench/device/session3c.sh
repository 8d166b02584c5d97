# usage (on the device): bash bench/device/session3c.sh -- TPC-H SF100 Q21 under 16 GB, then all 22 warm without a limit
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
timeout 220 bash bench/device/bench.sh tpch_sf100_16GB_q21 tpch --sf 100 --queries 21 --device cuda --runs 1 --warmup 0 --gpu-memory-limit 16GB --no-cold --no-duckdb-memory --duckdb-runs 1
left=$(( 585 - ($(date +%s) - t0) ))
echo "warm run with $left s left"
timeout $left bash bench/device/bench.sh tpch_sf100 tpch --sf 100 --device cuda --runs 3 --warmup 1 --no-cold --no-duckdb-memory --duckdb-runs 1
