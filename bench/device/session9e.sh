# usage (on the device): bash bench/device/session9e.sh -- warm runs under a 16 GB limit (chunks evicted and copied
# up again from the host tier), integer columns narrowed or not (GLINT_NARROW_UPLOADS)
source bench/device/setup.sh
tpch_data 100
for n in 1 0; do
  GLINT_NARROW_UPLOADS=$n timeout -s INT 270 bash bench/device/bench.sh tpch_sf100_16GB_narrow$n tpch --sf 100 --queries 1,3,6,9,18 \
    --gpu-memory-limit 16GB --runs 2 --warmup 1 --no-cold --no-duckdb-memory --duckdb-runs 1 2>&1 | tail -12
done
