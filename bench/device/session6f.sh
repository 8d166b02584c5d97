# usage (on the device): bash bench/device/session6f.sh -- TPC-H SF100 warm (no limit) and cold, default decoding
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(100, progress=False)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"
left=$(( 590 - ($(date +%s) - t0) ))
timeout -s INT $left bash bench/device/bench.sh tpch_sf100 tpch --sf 100 --device cuda --runs 3 --warmup 1 --no-duckdb-memory --duckdb-runs 1
