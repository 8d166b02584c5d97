# usage (on the device): bash bench/device/session5a.sh -- TPC-H SF100 Q21 under a 16 GB limit, after the
# per-piece release of drained partitions and the 64 MiB spill pieces (b1f3d86)
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"; tail -2 $OUT/gen.log
left=$(( 580 - ($(date +%s) - t0) ))
timeout -s INT $left bash bench/device/bench.sh tpch_sf100_16GB_q21 tpch --sf 100 --device cuda --queries 21 --runs 1 --warmup 0 --gpu-memory-limit 16GB --no-cold --no-duckdb-memory --duckdb-runs 1
