# usage (on the device): bash bench/device/session5e.sh -- Q1 under 16 GB traced, then all of TPC-H SF100 under 16 GB
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
timeout -s INT 60 python3 bench/device/qdiag.py 100 16GB 1 fix 2>&1 | grep -v "Warning\|setter" | tail -3 | cut -c1-700
left=$(( 585 - ($(date +%s) - t0) ))
timeout -s INT $left bash bench/device/bench.sh tpch_sf100_16GB tpch --sf 100 --device cuda --runs 1 --warmup 0 --gpu-memory-limit 16GB --no-cold --no-duckdb-memory --duckdb-runs 1
