# usage (on the device): bash bench/device/session5c.sh -- the upload race fix checked (racecheck.py), then TPC-H SF100 under 16 GB
source bench/device/setup.sh
t0=$(date +%s)
( python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1 ) &
gen=$!
timeout 120 python3 bench/device/racecheck.py 2>&1 | tail -3
wait $gen
echo "data ready after $(( $(date +%s) - t0 )) s"
left=$(( 585 - ($(date +%s) - t0) ))
timeout -s INT $left bash bench/device/bench.sh tpch_sf100_16GB tpch --sf 100 --device cuda --runs 1 --warmup 0 --gpu-memory-limit 16GB --no-cold --no-duckdb-memory --duckdb-runs 1
