# usage (on the device): bash bench/device/session12b.sh -- CUDA tests; 5 cold SF 100 queries, strings by
# pyarrow against strings as codes, twice each
source bench/device/setup.sh
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
tpch_data 100
for i in 1 2; do
    cold_sf100 coldpass100_pyarrow_strings.log GLINT_RAW_STRINGS=0
    cold_sf100 coldpass100_string_codes.log GLINT_PARQUET_DECODE=
done
