# usage (on the device): bash bench/device/check10.sh -- scan throughput pieces, then TPC-H SF10 under 1.6 GB
source bench/device/setup.sh
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data(10, progress=False)"
python3 bench/device/stagebench.py 10 2>&1 | tee $OUT/stagebench.txt
bash bench/device/bench.sh tpch_sf10_1600MB tpch --sf 10 --device cuda --runs 1 --warmup 0 --gpu-memory-limit 1600MB --no-cold --no-duckdb-memory --duckdb-runs 1
