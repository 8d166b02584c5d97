# usage (on the device): bash bench/device/profile.sh SF   -- where cold time goes, at scale factor SF:
#   the bench (warm, cold, DuckDB on Parquet), a sampled cold profile of some queries,
#   pyarrow's raw decode rate against glint's scan, and one run under a small memory limit.
source bench/device/setup.sh
sf=${1:-10}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, pyarrow, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'pyarrow', pyarrow.__version__, 'triton', triton.__version__)"
t0=$(date +%s); python3 -c "from glint.bench import tpch; tpch.ensure_tpch_data($sf, progress=False)"; echo "generated SF $sf in $(( $(date +%s) - t0 )) s"
bash bench/device/bench.sh tpch_sf${sf} tpch --sf $sf --device cuda --runs 3 --no-duckdb-memory
python3 bench/device/scanbench.py $sf > $OUT/scanbench.txt 2>&1; tail -25 $OUT/scanbench.txt
python3 bench/device/coldprof.py tpch $sf 1,6,13,9,3,18 cuda > $OUT/coldprof.txt 2>&1; grep "^===" $OUT/coldprof.txt
limit=$(python3 -c "print(f'{max(1, int(160 * $sf))}MB')")
bash bench/device/bench.sh tpch_sf${sf}_${limit} tpch --sf $sf --device cuda --runs 1 --warmup 0 --gpu-memory-limit $limit --no-cold --no-duckdb-memory --duckdb-runs 1
