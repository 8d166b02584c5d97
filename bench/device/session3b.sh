# usage (on the device): bash bench/device/session3b.sh -- TPC-H SF100 on the H200 under a 16 GB limit, all 22
source bench/device/setup.sh
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left bash bench/device/bench.sh tpch_sf100_16GB tpch --sf 100 --queries 21,1-20,22 --device cuda --runs 1 --warmup 0 --gpu-memory-limit 16GB --no-cold --no-duckdb-memory --duckdb-runs 1
