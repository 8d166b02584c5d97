# usage (on the device): bash bench/device/session12e.sh -- GPU tests; less bookkeeping per row group: 5 cold
# SF 100 queries twice, the GIL's holders during cold Q1 (py-spy)
source bench/device/setup.sh
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
tpch_data 100
for i in 1 2; do cold_sf100 coldpass100.log GLINT_PARQUET_DECODE=; done
bash bench/device/gilprof.sh 100 1
