# usage (on the device): bash bench/device/h100.sh -- a TPC-H SF1 check on the GPU, then TPC-H SF100
# without a memory limit: warm (median of 3), cold (fresh process), DuckDB on Parquet (1 run)
source bench/device/setup.sh
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -m glint.cli tpch --sf 1 --device cuda --runs 1 > $OUT/smoke.log 2>&1 || { tail -40 $OUT/smoke.log; exit 1; }
tail -4 $OUT/smoke.log
bash bench/device/bench.sh tpch_sf100 tpch --sf 100 --device cuda --runs 3 --no-duckdb-memory --duckdb-runs 1
