# usage (on the device): bash bench/device/session3f.sh -- SSB SF100 on the H200 under a 16 GB limit
source bench/device/setup.sh
t0=$(date +%s)
python3 -c "from glint.bench import ssb; ssb.ensure_ssb_data(100)" > $OUT/gen.log 2>&1
echo "data ready after $(( $(date +%s) - t0 )) s"; tail -2 $OUT/gen.log
left=$(( 585 - ($(date +%s) - t0) ))
timeout $left bash bench/device/bench.sh ssb_sf100_16GB ssb --sf 100 --device cuda --runs 1 --warmup 0 --gpu-memory-limit 16GB --no-cold --no-duckdb-memory --duckdb-runs 1
