# usage (on the device): bash bench/device/session12a.sh -- strings as codes on the GPU: CUDA tests, TPC-H SF 1
# against DuckDB (defaults), 22 cold SF 10 queries with the strings by pyarrow (GLINT_RAW_STRINGS=0) and as codes
source bench/device/setup.sh
tpch_data 1 10
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ 2>&1 | tail -3 | tee $OUT/tests.log
bash bench/device/bench.sh sf1 tpch --sf 1 --runs 1 --no-duckdb-parquet 2>&1 | grep -E "│ total|rc=|FAIL|mismatch" | head -6
for i in 1 2; do
    cold_sf10 coldpass_pyarrow_strings.log GLINT_RAW_STRINGS=0
    cold_sf10 coldpass_string_codes.log GLINT_PARQUET_DECODE=
done
