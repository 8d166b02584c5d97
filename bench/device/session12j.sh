# usage (on the device): bash bench/device/session12j.sh -- the final code: CUDA tests, TPC-H SF 1 against DuckDB
source bench/device/setup.sh
tpch_data 1
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
bash bench/device/bench.sh sf1 tpch --sf 1 --runs 1 --no-duckdb-parquet 2>&1 | grep -E "│ total|rc=" | cut -c1-200
