# usage (on the device): bash bench/device/session12d.sh -- GPU tests; files kept open and row groups' columns
# read together: 5 cold SF 100 queries twice, a trace of Q1
source bench/device/setup.sh
timeout 240 python3 -m pytest -q -x -p no:cacheprovider -m gpu tests/ > $OUT/tests.log 2>&1; tail -2 $OUT/tests.log
tpch_data 100
for i in 1 2; do cold_sf100 coldpass100.log GLINT_PARQUET_DECODE=; done
python3 bench/device/tracecold.py 100 1 > $OUT/tracecold.log 2>&1; tail -3 $OUT/tracecold.log
for f in $OUT/*.json; do python3 bench/device/traceview.py $f > ${f%.json}.txt 2>&1; head -16 ${f%.json}.txt; done
